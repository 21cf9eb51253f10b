package writer_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// FuzzConvert: a pipe stream converted to a file (bpfmeta convert -o
// FILE) either fails with an error or gives a file the reader reads, with
// the stream's data records, byte for byte and in order: only the records
// a file keeps in its header (HEADER_ATTR, HEADER_FEATURE,
// HEADER_TRACING_DATA, HEADER_BUILD_ID) leave the record stream.
func FuzzConvert(f *testing.F) {
	for _, name := range testkit.CorpusNames(f) {
		if b := testkit.CorpusBytes(f, name); len(b) <= 256<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := reader.NewStream(bytes.NewReader(b), reader.Options{})
		if err != nil {
			return
		}
		defer r.Close()
		out := testkit.MemFile(t, nil)
		w, err := writer.New(out, r, writer.Options{Format: perfdata.FormatFile, SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatalf("writer.New: %v", err)
		}
		defer w.Abort()
		var want [][]byte
		for r.Next() {
			rec := r.Record()
			if err := w.WriteRecord(rec); err != nil {
				return // refused: an error, not a loss
			}
			if kept(rec) {
				want = append(want, slices.Clone(rec.Raw))
			}
		}
		if r.Err() != nil {
			return
		}
		if err := w.Close(); err != nil {
			return
		}
		st, err := out.Stat()
		if err != nil {
			t.Fatal(err)
		}
		fr, err := reader.NewFile(out, st.Size(), reader.Options{})
		if err != nil {
			t.Fatalf("the converted file does not read: %v", err)
		}
		defer fr.Close()
		i := 0
		for fr.Next() {
			rec := fr.Record()
			if i == len(want) || !bytes.Equal(rec.Raw, want[i]) {
				t.Fatalf("record %d of the file (%v at %#x) is not the stream's", i, rec.Header.Type, rec.Offset)
			}
			i++
		}
		if err := fr.Err(); err != nil {
			t.Fatalf("the converted file does not read: %v", err)
		}
		if i != len(want) {
			t.Fatalf("the file has %d of the stream's %d data records", i, len(want))
		}
	})
}

// kept reports whether a pipe stream's record stays a record in a file.
func kept(rec *perfdata.Record) bool {
	switch rec.Header.Type {
	case perfdata.RecordHeaderAttr, perfdata.RecordHeaderFeature, perfdata.RecordHeaderTracingData, perfdata.RecordHeaderBuildID:
		return false
	}
	return true
}
