package reader_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// readAll reads b to the end (as a file, or as a stream for pipe format)
// and returns the records' offsets and the error.
func readAll(b []byte, stream bool) (offs []int64, trailing int, err error) {
	var r *reader.Reader
	if stream {
		r, err = reader.NewStream(bytes.NewReader(b), reader.Options{Decompress: true})
	} else {
		r, err = reader.NewFile(bytes.NewReader(b), int64(len(b)), reader.Options{Decompress: true})
	}
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	for r.Next() {
		rec := r.Record()
		if !rec.Compressed() {
			offs = append(offs, rec.Offset)
		}
		if rec.Payload != nil {
			// consume some of the payload, as a writer would
			var buf [100]byte
			rec.Payload.Read(buf[:])
		}
	}
	_, tr := r.Trailing()
	return offs, len(tr), r.Err()
}

// TestTruncation cuts recordings at every top-level record boundary (the
// first few hundred) and at random offsets. A file-mode recording cut
// anywhere is an error (its header says how much data there is). A pipe
// stream cut at a record boundary is a shorter valid stream, as perf sees
// it too; cut inside a record it is an error. Never a panic, never a
// clean end that hides a cut.
func TestTruncation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range testkit.CorpusNames(t) {
		if strings.Contains(name, "CORRUPTED") {
			continue // does not read to the end to begin with
		}
		t.Run(name, func(t *testing.T) {
			b := testkit.CorpusBytes(t, name)
			pipe := strings.Contains(name, ".pipe.")
			offs, trailing, err := readAll(b, false)
			if err != nil {
				t.Fatal(err)
			}
			used := usedEnd(t, b)
			boundary := map[int64]bool{}
			for _, o := range offs {
				boundary[o] = true
			}
			cuts := offs[1:min(len(offs), 300)]
			for range 200 {
				cuts = append(cuts, rng.Int64N(int64(len(b))))
			}
			for _, cut := range cuts {
				if pipe && int(cut) >= len(b)-trailing {
					continue // inside the trailing text, which is not a record
				}
				if !pipe && cut >= used {
					continue // bytes after every section: nothing refers to them
				}
				got, _, err := readAll(b[:cut], pipe && rng.IntN(2) == 0)
				switch {
				case pipe && boundary[cut]:
					if err != nil {
						t.Errorf("pipe cut at record boundary %#x: %v", cut, err)
					} else if len(got) == 0 || got[len(got)-1] >= cut {
						t.Errorf("pipe cut at %#x: records up to %#x", cut, got[len(got)-1])
					}
				case err == nil:
					t.Errorf("cut at %#x of %#x: no error (%d records)", cut, len(b), len(got))
				case !errors.Is(err, reader.ErrTruncated) && !errors.Is(err, reader.ErrNotPerfData) && !errors.Is(err, reader.ErrCorrupt):
					t.Errorf("cut at %#x: error %v is none of the reader's", cut, err)
				}
			}
		})
	}
}

// TestHeaderCut: a recording cut inside its header (file or pipe, the magic
// number itself included) is a truncated recording, not something that is
// no recording; bytes that are not the start of one are not a recording.
func TestHeaderCut(t *testing.T) {
	for _, name := range testkit.CorpusNames(t) {
		b := testkit.CorpusBytes(t, name)
		r, err := reader.NewFile(bytes.NewReader(b), int64(len(b)), reader.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		headerSize := int64(perfdata.PipeHeaderSize)
		if l := r.Layout(); l != nil {
			headerSize = int64(l.Header.Size)
		}
		r.Close()
		for cut := int64(1); cut < headerSize; cut++ {
			for _, stream := range []bool{false, true} {
				if stream && headerSize != perfdata.PipeHeaderSize {
					continue // a file-mode recording is not read as a stream
				}
				if _, _, err := readAll(b[:cut], stream); !errors.Is(err, reader.ErrTruncated) {
					t.Errorf("%s cut at %d (of a %d-byte header, stream %v): %v, want truncated", name, cut, headerSize, stream, err)
				}
			}
		}
	}
	for _, b := range []string{"PERFX", "hello world", "PERFILE3xxxxx", "\x00"} {
		for _, stream := range []bool{false, true} {
			if _, _, err := readAll([]byte(b), stream); !errors.Is(err, reader.ErrNotPerfData) {
				t.Errorf("%q (stream %v): %v, want not a recording", b, stream, err)
			}
		}
	}
}

// usedEnd is where the last byte a file-mode recording's header refers to
// ends (some writers leave bytes after it); the length of a pipe stream.
func usedEnd(t *testing.T, b []byte) int64 {
	r, err := reader.NewFile(bytes.NewReader(b), int64(len(b)), reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l := r.Layout()
	if l == nil {
		return int64(len(b))
	}
	end := max(l.Header.Attrs.End(), l.Header.Data.End()+uint64(len(l.Features))*16)
	for _, a := range l.Attrs {
		end = max(end, a.IDs.End())
	}
	for _, f := range l.Features {
		end = max(end, f.End())
	}
	return int64(end)
}

// FuzzReader: no input makes the reader panic or loop, and every error it
// returns is one of its own.
func FuzzReader(f *testing.F) {
	testkit.AddCorpusPrefixes(f, 64<<10)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, stream := range []bool{false, true} {
			offs, _, err := readAll(b, stream)
			if err != nil && !errors.Is(err, reader.ErrTruncated) && !errors.Is(err, reader.ErrNotPerfData) && !errors.Is(err, reader.ErrCorrupt) {
				var fe *reader.FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v (%T) is not a FormatError", err, err)
				}
			}
			for i := 1; i < len(offs); i++ {
				if offs[i] <= offs[i-1] {
					t.Fatalf("offsets go back: %#x after %#x", offs[i], offs[i-1])
				}
			}
		}
	})
}
