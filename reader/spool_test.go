package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/reader"
)

// spoolFile is an os.File in the test's directory.
func spoolFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "spool"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestSpool: every file-format recording of the corpus comes through a
// stream byte for byte, with no more read than the file has.
func TestSpool(t *testing.T) {
	for _, name := range testkit.CorpusNames(t) {
		b := testkit.CorpusBytes(t, name)
		if !reader.IsFileFormat(b) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			f := spoolFile(t)
			n, err := reader.Spool(f, bytes.NewReader(b), 0)
			if err != nil {
				if strings.Contains(name, "CORRUPT") {
					return
				}
				t.Fatal(err)
			}
			got, _ := os.ReadFile(f.Name())
			if n != int64(len(got)) || !bytes.Equal(got, b[:n]) {
				t.Fatalf("spooled %d bytes, not the file's first %d", len(got), n)
			}
			if int64(len(b))-n > 64<<10 {
				t.Errorf("spooled %d of %d bytes", n, len(b))
			}
		})
	}
}

// TestSpoolBounds: a header that claims more than the room there is, a
// stream that ends early or goes on past the recording: errors, each
// before anything of the claimed size is copied.
func TestSpoolBounds(t *testing.T) {
	b := testkit.CorpusBytes(t, "autofdo_perf5.6_x86_64_small.data")
	if _, err := reader.Spool(spoolFile(t), bytes.NewReader(b), 1000); err == nil || !strings.Contains(err.Error(), "room") {
		t.Errorf("a recording larger than the room: %v", err)
	}
	if _, err := reader.Spool(spoolFile(t), bytes.NewReader(b[:len(b)/2]), 0); !errors.Is(err, reader.ErrTruncated) {
		t.Errorf("a stream cut in half: %v, want a truncation", err)
	}
	endless := io.MultiReader(bytes.NewReader(b), &zeros{})
	n, err := reader.Spool(spoolFile(t), endless, 0)
	if !errors.Is(err, reader.ErrCorrupt) || n > int64(len(b))+128<<10 {
		t.Errorf("a stream that goes on: %d bytes copied, %v", n, err)
	}
	if _, err := reader.Spool(spoolFile(t), strings.NewReader("not a recording at all, not at all, no, no, no, nothing to see here, really nothing, at all, not any"), 0); !errors.Is(err, reader.ErrNotPerfData) {
		t.Errorf("not a recording: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestSpoolCut: a stream cut short says where the header says the
// recording ends and where the stream ended, each number in its place.
func TestSpoolCut(t *testing.T) {
	b := testkit.CorpusBytes(t, "autofdo_perf5.6_x86_64_small.data")
	cut := len(b) / 2
	_, err := reader.Spool(spoolFile(t), bytes.NewReader(b[:cut]), 0)
	want := fmt.Sprintf("; the stream ends at %#x", cut)
	if !errors.Is(err, reader.ErrTruncated) || !strings.HasSuffix(err.Error(), want) || !strings.Contains(err.Error(), "the recording ends at 0x") {
		t.Errorf("a stream cut at %#x: %v, want ...%s", cut, err, want)
	}
}
