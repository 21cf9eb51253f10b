package writer_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// rewrite reads path and writes every record back through the writer for
// its format, optionally calling edit for each record to insert or drop.
func rewrite(t *testing.T, path string, edit rectest.Edit) []byte {
	t.Helper()
	return rewriteWith(t, path, true, edit)
}

// rewriteWith is rewrite, with the writer attached to the reader (records
// written from the reader's buffers) or not (copied). The corrupt corpus
// file gives nil: the reader tests check its error.
func rewriteWith(t *testing.T, path string, attach bool, edit rectest.Edit) []byte {
	t.Helper()
	out, err := rectest.Through(t, path, t.TempDir(), reader.Options{Decompress: true}, optsFor(attach), func(r *reader.Reader, w *writer.Writer) error {
		return rectest.Copy(r, w, edit)
	})
	if err != nil {
		if strings.Contains(path, "CORRUPTED") && errors.Is(err, reader.ErrCorrupt) {
			return nil
		}
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return testkit.ReadFile(t, out)
}

// TestIdentity: reading a corpus file and writing every record back gives
// the input byte for byte, in both formats, with the records copied or
// written from the reader's buffers.
func TestIdentity(t *testing.T) {
	for _, path := range testkit.CorpusFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			if copied := rewriteWith(t, path, false, nil); copied != nil {
				want, _ := os.ReadFile(path)
				if !bytes.Equal(copied, want) {
					t.Errorf("copied records: output differs from the input")
				}
			}
			got := rewrite(t, path, nil)
			if got == nil {
				return // the corrupt corpus file: the reader tests check its error
			}
			want, _ := os.ReadFile(path)
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Fatalf("output differs from the input at %#x (sizes %d, %d)", i, len(got), len(want))
			}
		})
	}
}

// TestCopyKeep: Copy writes what the loop it stands for writes (every
// record keep keeps, through WriteRecord), and counts what keep left out.
func TestCopyKeep(t *testing.T) {
	path := testkit.CorpusFile(t, "autofdo_perf5.6_x86_64_small.data")
	noSamples := func(rec *perfdata.Record) bool { return rec.Header.Type != perfdata.RecordSample }
	copyTo := func(loop bool) ([]byte, int) {
		r := rectest.Open(t, path, reader.Options{})
		var out bytes.Buffer
		w, err := writer.New(&out, r, writer.Options{Format: perfdata.FormatPipe})
		if err != nil {
			t.Fatal(err)
		}
		dropped := 0
		if loop {
			for r.Next() {
				if !noSamples(r.Record()) {
					dropped++
				} else if err := w.WriteRecord(r.Record()); err != nil {
					t.Fatal(err)
				}
			}
			err = r.Err()
		} else {
			dropped, err = writer.Copy(w, r, noSamples)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes(), dropped
	}
	want, wantDropped := copyTo(true)
	got, dropped := copyTo(false)
	if !bytes.Equal(got, want) || dropped != wantDropped || dropped == 0 {
		t.Errorf("Copy wrote %d bytes and dropped %d records; the loop %d bytes and %d records (the same, not 0, expected)", len(got), dropped, len(want), wantDropped)
	}
}

// TestCopyErrors: Copy says which side failed. An input that ends inside
// the data a record carries fails WriteRecord, which reads that data, but
// is the reader's error; a WriteRecord that fails with the input intact
// is a *writer.WriteError.
func TestCopyErrors(t *testing.T) {
	t.Run("input", func(t *testing.T) {
		r, err := reader.NewStream(bytes.NewReader(testkit.CutTracingData(binary.LittleEndian, 1<<20, 100)), reader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := writer.New(&bytes.Buffer{}, r, writer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		_, err = writer.Copy(w, r, nil)
		var werr *writer.WriteError
		if !errors.Is(err, reader.ErrTruncated) || errors.As(err, &werr) {
			t.Errorf("Copy of a cut recording: %v, want the reader's truncation error, no WriteError", err)
		}
	})
	t.Run("output", func(t *testing.T) {
		r := rectest.Open(t, testkit.CorpusFile(t, "autofdo_perf5.6_x86_64_small.data"), reader.Options{})
		w, err := writer.New(&bytes.Buffer{}, r, writer.Options{Format: perfdata.FormatPipe})
		if err != nil {
			t.Fatal(err)
		}
		w.Close() // WriteRecord now fails, at once
		_, err = writer.Copy(w, r, nil)
		var werr *writer.WriteError
		if !errors.As(err, &werr) || !strings.Contains(err.Error(), "WriteRecord after Close") || r.Err() != nil {
			t.Errorf("Copy to a closed writer: %v (input: %v), want a WriteError, the input intact", err, r.Err())
		}
	})
}
