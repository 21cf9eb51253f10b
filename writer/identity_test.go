package writer_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
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
