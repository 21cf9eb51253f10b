package dump_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/bpfmeta/bpfmeta/dump"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/reader"
)

// FuzzDump: the listing and the counts of any bytes, read as a file and as
// a stream, end (with an error or not) and print no control byte but the
// newline: what comes from a recording reaches a terminal escaped.
func FuzzDump(f *testing.F) {
	testkit.AddCorpusPrefixes(f, 64<<10)
	f.Fuzz(func(t *testing.T, b []byte) {
		open := func(stream bool) (*reader.Reader, error) {
			opts := reader.Options{Decompress: true, MaxExpansion: 20}
			if stream {
				return reader.NewStream(bytes.NewReader(b), opts)
			}
			return reader.NewFile(bytes.NewReader(b), int64(len(b)), opts)
		}
		for _, stream := range []bool{false, true} {
			for _, list := range []func(io.Writer, *reader.Reader) error{
				func(w io.Writer, r *reader.Reader) error { return dump.Records(w, r, "fuzz", true) },
				dump.Stats,
			} {
				r, err := open(stream)
				if err != nil {
					continue
				}
				var out bytes.Buffer
				list(&out, r)
				r.Close()
				for i, c := range out.Bytes() {
					if c < 0x20 && c != '\n' || c == 0x7f {
						t.Fatalf("control byte %#x at %d of the listing:\n%q", c, i, out.Bytes()[max(0, i-60):min(out.Len(), i+20)])
					}
				}
			}
		}
	})
}
