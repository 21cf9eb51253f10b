package inject_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// maxFuzzSeed is the largest corpus file FuzzIdentity starts from.
const maxFuzzSeed = 256 << 10

// FuzzIdentity: with nothing to add (an empty snapshot), inject writes any
// recording the reader reads back byte for byte, a file to a file and a
// stream to a stream; one it cannot read fails with the reader's error.
// Nothing panics, nothing is lost quietly.
func FuzzIdentity(f *testing.F) {
	for _, name := range testkit.CorpusNames(f) {
		if b := testkit.CorpusBytes(f, name); len(b) <= maxFuzzSeed {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Files in memory (memfd): the file writer's copy_file_range and
		// pwrite need a file, and the fuzzer runs thousands a second.
		in, out := testkit.MemFile(t, b), testkit.MemFile(t, nil)
		r, err := reader.NewFile(in, int64(len(b)), reader.Options{Decompress: true})
		if err != nil {
			readerError(t, "file", err)
		} else {
			defer r.Close()
			if err := injectTo(r, out, &bpfprog.List{}); err != nil {
				readerError(t, "file", err)
			} else if got := fileBytes(t, out); !bytes.Equal(got, b) {
				t.Fatalf("file: the output differs from the input: %s", testkit.FirstDiff(got, b))
			}
		}

		s, err := reader.NewStream(bytes.NewReader(b), reader.Options{Decompress: true})
		if err != nil {
			readerError(t, "stream", err)
			return
		}
		defer s.Close()
		var got bytes.Buffer
		if err := injectTo(s, &got, &bpfprog.List{}); err != nil {
			readerError(t, "stream", err)
		} else if !bytes.Equal(got.Bytes(), b) {
			t.Fatalf("stream: the output differs from the input: %s", testkit.FirstDiff(got.Bytes(), b))
		}
	})
}

// FuzzInject: the fixtures' recordings, damaged, with their programs'
// snapshots. Whatever inject makes of one it makes again of its own output
// (injecting twice is injecting once), and taking out the BPF_METADATA
// records (as strip does) gives what taking them out of the input gives:
// inject adds records, and changes nothing else.
func FuzzInject(f *testing.F) {
	paths, err := filepath.Glob("testdata/*.data")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fixtures in testdata: %v", err)
	}
	var snaps []*snapshot.File
	for i, p := range paths {
		s, err := snapshot.Open(strings.TrimSuffix(p, ".data") + ".snapshot.json")
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { s.Close() })
		snaps = append(snaps, s)
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(i))
	}
	f.Fuzz(func(t *testing.T, b []byte, snap uint8) {
		src := snaps[int(snap)%len(snaps)]
		once, err := injected(t, b, src)
		if err != nil {
			readerError(t, "inject", err)
			return
		}
		twice, err := injected(t, once, src)
		if err != nil {
			t.Fatalf("inject of inject's output: %v", err)
		}
		if !bytes.Equal(twice, once) {
			t.Fatalf("injecting twice is not injecting once: %s", testkit.FirstDiff(twice, once))
		}
		if got, want := stripped(t, once), stripped(t, b); !bytes.Equal(got, want) {
			t.Fatalf("inject changed more than the BPF_METADATA records: %s", testkit.FirstDiff(got, want))
		}
	})
}

// injected is b injected from src, in b's format.
func injected(t *testing.T, b []byte, src bpfprog.Source) ([]byte, error) {
	in, out := testkit.MemFile(t, b), testkit.MemFile(t, nil)
	r, err := reader.NewFile(in, int64(len(b)), reader.Options{Decompress: true})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := injectTo(r, out, src); err != nil {
		return nil, err
	}
	return fileBytes(t, out), nil
}

// stripped is b without its top-level BPF_METADATA records (bpfmeta strip).
func stripped(t *testing.T, b []byte) []byte {
	out := testkit.MemFile(t, nil)
	rectest.CopyFile(t, testkit.MemFile(t, b), int64(len(b)), out, func(w *writer.Writer, rec *perfdata.Record) error {
		if rec.Header.Type == perfdata.RecordBPFMetadata && !rec.Compressed() {
			return nil
		}
		return w.WriteRecord(rec)
	})
	return fileBytes(t, out)
}

// injectTo injects from src, r to out in r's format.
func injectTo(r *reader.Reader, out io.Writer, src bpfprog.Source) error {
	w, err := writer.New(out, r, writer.Options{})
	if err != nil {
		return err
	}
	_, err = inject.Write(w, r, src, inject.Options{})
	return err
}

func fileBytes(t *testing.T, f *os.File) []byte {
	t.Helper()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b
}

// readerError fails t unless err is the reader's: a recording it cannot
// read, with the offset where it stopped.
func readerError(t *testing.T, what string, err error) {
	t.Helper()
	var fe *reader.FormatError
	if errors.As(err, &fe) || errors.Is(err, reader.ErrNotPerfData) || errors.Is(err, reader.ErrTruncated) || errors.Is(err, reader.ErrCorrupt) {
		return
	}
	t.Fatalf("%s: %v (%T), not a reader's error", what, err, err)
}
