package writer_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// rewrite reads path and writes every record back through the writer for
// its format, optionally calling edit for each record to insert or drop.
func rewrite(t *testing.T, path string, edit func(w *writer.Writer, rec *perfdata.Record) error) []byte {
	t.Helper()
	return rewriteWith(t, path, true, edit)
}

// rewriteWith is rewrite, with the writer attached to the reader (records
// written from the reader's buffers) or not (copied).
func rewriteWith(t *testing.T, path string, attach bool, edit func(w *writer.Writer, rec *perfdata.Record) error) []byte {
	t.Helper()
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st, _ := in.Stat()
	r, err := reader.NewFile(in, st.Size(), reader.Options{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(t.TempDir(), "out.data")
	of, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer of.Close()
	w, err := writer.New(of, r, writer.Options{Copy: !attach})
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		rec := r.Record()
		if edit != nil {
			if err := edit(w, rec); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		if !strings.Contains(path, "CORRUPTED") {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		return nil // the corrupt corpus file: the reader tests check its error
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
