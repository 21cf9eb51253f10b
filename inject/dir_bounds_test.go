package inject_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// TestDirAtEndBounded: the BPF_METADATA records at the end of a directory
// recording's first file are read before the data files that load their
// programs, so inject keeps their names until the end. Past
// MaxAtEndBytes of names that is an error naming the record, never a name
// forgotten (which would make inject write that record a second time).
func TestDirAtEndBounded(t *testing.T) {
	in := filepath.Join(testkit.ThreadsDir(), "perf6.1_x86_64_threads_bpf.data")
	dir := t.TempDir()
	name := strings.Repeat("n", perfdata.KSymNameLen-1)
	n := inject.MaxAtEndBytes/len(name) + 1
	src := rectest.Open(t, in, reader.Options{})
	idHdr, order := src.IDHeaderSize(), src.ByteOrder()
	hostile, err := rectest.Through(t, in, dir, reader.Options{Decompress: true}, writer.Options{}, func(r *reader.Reader, w *writer.Writer) error {
		if err := rectest.Copy(r, w, nil); err != nil {
			return err
		}
		for i := range n {
			md := perfdata.BPFMetadata{ProgName: fmt.Sprintf("%s%07d", name[:len(name)-7], i)}
			raw, err := md.Encode(order, idHdr)
			if err != nil {
				return err
			}
			h := perfdata.DecodeEventHeader(raw, order)
			if err := w.WriteRecord(&perfdata.Record{Offset: -1, Outer: -1, Header: h, Raw: raw, Part: 0}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	out, _, err := injectFile(t, hostile, dir, fakeSource{}, inject.Options{})
	if !errors.Is(err, inject.ErrTooMany) || !strings.Contains(err.Error(), "BPF_METADATA at 0x") {
		t.Fatalf("%d records of %d-byte names at the end of data: err %v, want ErrTooMany at the record's offset", n, len(name), err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s exists after a failed inject", out)
	}
}
