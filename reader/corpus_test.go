package reader_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// corpusFile returns the path of corpus recording name.
func corpusFile(t testing.TB, name string) string { return testkit.CorpusFile(t, name) }

func openFile(t testing.TB, path string, opts reader.Options) *reader.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	r, err := reader.NewFile(f, st.Size(), opts)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestCorpusOuterCounts reads every corpus file to its end and checks the
// number of top-level records of each type against the MANIFEST's
// independent count. The one file the MANIFEST marks corrupt must fail with
// an error naming the offset the MANIFEST names.
func TestCorpusOuterCounts(t *testing.T) {
	man := testkit.Manifest(t)
	for _, name := range testkit.CorpusNames(t) {
		t.Run(name, func(t *testing.T) {
			want, ok := man[name]
			if !ok {
				t.Fatalf("%s is not in MANIFEST.md", name)
			}
			r := openFile(t, corpusFile(t, name), reader.Options{})
			got := map[perfdata.RecordType]int{}
			for r.Next() {
				got[r.Record().Header.Type]++
			}
			for typ, n := range want.Outer {
				if got[typ] != n {
					t.Errorf("%v records: got %d, MANIFEST says %d", typ, got[typ], n)
				}
			}
			for typ, n := range got {
				if _, ok := want.Outer[typ]; !ok {
					t.Errorf("%v records: got %d, MANIFEST has none", typ, n)
				}
			}
			_, trailing := r.Trailing()
			switch {
			case strings.HasPrefix(want.Stopped, "bad size 0 at "):
				off, _ := strconv.ParseInt(strings.TrimPrefix(want.Stopped, "bad size 0 at 0x"), 16, 64)
				var fe *reader.FormatError
				if !errors.As(r.Err(), &fe) || fe.Offset != off || !errors.Is(r.Err(), reader.ErrCorrupt) {
					t.Errorf("error = %v, want a FormatError (corrupt) at %#x", r.Err(), off)
				}
			case strings.Contains(want.Stopped, "unparsed trailing bytes"):
				n, _ := strconv.Atoi(regexp.MustCompile(`(\d+) unparsed trailing bytes`).FindStringSubmatch(want.Stopped)[1])
				if r.Err() != nil || len(trailing) != n {
					t.Errorf("err = %v, %d trailing bytes; want no error and %d trailing bytes", r.Err(), len(trailing), n)
				}
			case want.Stopped != "":
				t.Fatalf("MANIFEST says %q: the test does not know what to expect", want.Stopped)
			default:
				if r.Err() != nil || len(trailing) != 0 {
					t.Errorf("err = %v, %d trailing bytes; want a clean end", r.Err(), len(trailing))
				}
			}
		})
	}
}

// TestOrigin: the origin of a file comes from its features, that of a pipe
// stream from its HEADER_FEATURE records, and they agree for the same
// recording in both formats.
func TestOrigin(t *testing.T) {
	for _, name := range []string{"mstange_perf6.16_x86_64_zstd_compressed2.data", "mstange_perf6.16_x86_64_zstd_compressed2.pipe.data"} {
		r := openFile(t, corpusFile(t, name), reader.Options{})
		o, known := r.Origin()
		if strings.Contains(name, ".pipe.") && known {
			t.Errorf("%s: the origin is complete before any record is read", name)
		}
		for r.Next() {
		}
		o, known = r.Origin()
		if !known || o.Hostname != "arthur-des" || o.OSRelease != "5.15.193-1-MANJARO" || o.PerfVersion != "6.16-1" {
			t.Errorf("%s: origin %+v, complete %v", name, o, known)
		}
	}
}
