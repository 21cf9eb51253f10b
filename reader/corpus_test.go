package reader_test

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// corpusDir holds real recordings from public projects (read-only, shared).
const corpusDir = "../../shared/corpus"

// manifestEntry is what ../shared/corpus/MANIFEST.md says about one file.
type manifestEntry struct {
	outer   map[perfdata.RecordType]int // "outer records (independent count)"
	stopped string                      // "parse stopped: ..." or ""
}

var (
	outerRE   = regexp.MustCompile(`([A-Z0-9_]+)\((\d+)\)=(\d+)`)
	stoppedRE = regexp.MustCompile(`parse stopped: (.*)$`)
)

func readManifest(t *testing.T) map[string]manifestEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "MANIFEST.md"))
	if err != nil {
		t.Fatalf("corpus manifest: %v", err)
	}
	defer f.Close()
	m := map[string]manifestEntry{}
	var cur string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "### "); ok {
			cur = name
			continue
		}
		rest, ok := strings.CutPrefix(line, "- outer records (independent count): ")
		if !ok || cur == "" {
			continue
		}
		e := manifestEntry{outer: map[perfdata.RecordType]int{}}
		counts, stopped, _ := strings.Cut(rest, "; parse stopped: ")
		for _, g := range outerRE.FindAllStringSubmatch(counts, -1) {
			typ, _ := strconv.Atoi(g[2])
			n, _ := strconv.Atoi(g[3])
			e.outer[perfdata.RecordType(typ)] = n
		}
		e.stopped = stopped
		m[cur] = e
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func corpusFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.data"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files in %s (%v): the tests read the shared corpus in place", corpusDir, err)
	}
	return files
}

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
	man := readManifest(t)
	for _, path := range corpusFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			want, ok := man[name]
			if !ok {
				t.Fatalf("%s is not in MANIFEST.md", name)
			}
			r := openFile(t, path, reader.Options{})
			got := map[perfdata.RecordType]int{}
			for r.Next() {
				got[r.Record().Header.Type]++
			}
			for typ, n := range want.outer {
				if got[typ] != n {
					t.Errorf("%v records: got %d, MANIFEST says %d", typ, got[typ], n)
				}
			}
			for typ, n := range got {
				if _, ok := want.outer[typ]; !ok {
					t.Errorf("%v records: got %d, MANIFEST has none", typ, n)
				}
			}
			_, trailing := r.Trailing()
			switch {
			case strings.HasPrefix(want.stopped, "bad size 0 at "):
				off, _ := strconv.ParseInt(strings.TrimPrefix(want.stopped, "bad size 0 at 0x"), 16, 64)
				var fe *reader.FormatError
				if !errors.As(r.Err(), &fe) || fe.Offset != off || !errors.Is(r.Err(), reader.ErrCorrupt) {
					t.Errorf("error = %v, want a FormatError (corrupt) at %#x", r.Err(), off)
				}
			case strings.Contains(want.stopped, "unparsed trailing bytes"):
				n, _ := strconv.Atoi(regexp.MustCompile(`(\d+) unparsed trailing bytes`).FindStringSubmatch(want.stopped)[1])
				if r.Err() != nil || len(trailing) != n {
					t.Errorf("err = %v, %d trailing bytes; want no error and %d trailing bytes", r.Err(), len(trailing), n)
				}
			case want.stopped != "":
				t.Fatalf("MANIFEST says %q: the test does not know what to expect", want.stopped)
			default:
				if r.Err() != nil || len(trailing) != 0 {
					t.Errorf("err = %v, %d trailing bytes; want a clean end", r.Err(), len(trailing))
				}
			}
		})
	}
}
