package testkit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Root of the repository, found from this file's location at build time:
// tests run from their package's directory, wherever the clone is.
var repoRoot = func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("testkit: no caller information")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}()

// RepoPath returns the path of elem in the repository.
func RepoPath(elem ...string) string {
	return filepath.Join(append([]string{repoRoot}, elem...)...)
}

// Fixture returns the path of a compiled BPF fixture in testdata/bpf
// ("meta" is testdata/bpf/meta.bpf.o).
func Fixture(name string) string { return RepoPath("testdata", "bpf", name+".bpf.o") }

// CorpusDir is the directory of the real recordings (testdata/corpus, see
// its README.md).
func CorpusDir() string { return RepoPath("testdata", "corpus") }

// ThreadsDir is the directory of the real directory recordings (perf
// record --threads), testdata/corpus/threads: NAME.data directories, with
// NAME.data.counts beside them; with elem, the path of elem in it.
func ThreadsDir(elem ...string) string {
	return RepoPath(append([]string{"testdata", "corpus", "threads"}, elem...)...)
}

// ThreadsNames lists the directory recordings by name, sorted.
func ThreadsNames(t testing.TB) []string {
	t.Helper()
	return recordingNames(t, ThreadsDir(), func(e os.DirEntry) string {
		if e.IsDir() {
			return e.Name()
		}
		return ""
	})
}

// zstSuffix marks corpus files stored compressed.
const zstSuffix = ".zst"

// CorpusNames lists the corpus recordings by name (NAME.data, whether it is
// stored as NAME.data or NAME.data.zst), sorted.
func CorpusNames(t testing.TB) []string {
	t.Helper()
	return recordingNames(t, CorpusDir(), func(e os.DirEntry) string { return strings.TrimSuffix(e.Name(), zstSuffix) })
}

// recordingNames lists the NAME.data recordings in dir, sorted: the names
// name gives its entries ("" for none).
func recordingNames(t testing.TB, dir string, name func(os.DirEntry) string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the recordings: %v", err)
	}
	var names []string
	for _, e := range ents {
		if n := name(e); strings.HasSuffix(n, ".data") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		t.Fatalf("no recordings in %s", dir)
	}
	slices.Sort(names)
	return names
}

// CorpusFile returns the path of corpus recording name (NAME.data); its base
// name is name. A file stored compressed is decompressed once into the
// user's cache directory, in a directory named after its content.
func CorpusFile(t testing.TB, name string) string {
	t.Helper()
	plain := filepath.Join(CorpusDir(), name)
	if _, err := os.Stat(plain); err == nil {
		return plain
	}
	zst := plain + zstSuffix
	comp, err := os.ReadFile(zst)
	if err != nil {
		t.Fatalf("corpus file %s: %v", name, err)
	}
	sum := sha256.Sum256(comp)
	dir := t.TempDir()
	if cache, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(cache, "bpfmeta-test")
	}
	dir = filepath.Join(dir, hex.EncodeToString(sum[:8]))
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	b, err := dec.DecodeAll(comp, nil)
	if err != nil {
		t.Fatalf("%s: %v", zst, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		t.Fatal(err)
	}
	return path
}

// CorpusFiles returns the paths of the corpus recordings (CorpusFile of
// each of CorpusNames).
func CorpusFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, name := range CorpusNames(t) {
		files = append(files, CorpusFile(t, name))
	}
	return files
}

// LargestCorpusFile returns the path of the largest corpus recording of
// those keep keeps by name (nil: of all).
func LargestCorpusFile(t testing.TB, keep func(name string) bool) string {
	t.Helper()
	var path string
	var best int64
	for _, name := range CorpusNames(t) {
		if keep != nil && !keep(name) {
			continue
		}
		f := CorpusFile(t, name)
		if st, err := os.Stat(f); err == nil && st.Size() > best {
			path, best = f, st.Size()
		}
	}
	if path == "" {
		t.Fatal("no corpus recording to pick")
	}
	return path
}

// AddCorpusPrefixes seeds f with the first max bytes of every corpus
// recording (all of a smaller one): the fuzz targets that read any bytes
// as a recording (reader, dump).
func AddCorpusPrefixes(f *testing.F, max int) {
	for _, name := range CorpusNames(f) {
		b := CorpusBytes(f, name)
		f.Add(b[:min(len(b), max)])
	}
}

// CorpusBytes returns the content of corpus recording name.
func CorpusBytes(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(CorpusFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ManifestEntry is what testdata/corpus/MANIFEST.md says about a recording.
type ManifestEntry struct {
	// Outer counts the top-level records by type ("outer records
	// (independent count)").
	Outer map[perfdata.RecordType]int
	// Stopped says why the independent count stopped early ("parse
	// stopped: ..."), or is empty.
	Stopped string
}

var (
	outerRE = regexp.MustCompile(`([A-Z0-9_]+)\((\d+)\)=(\d+)`)
)

// Manifest reads testdata/corpus/MANIFEST.md.
func Manifest(t testing.TB) map[string]ManifestEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(CorpusDir(), "MANIFEST.md"))
	if err != nil {
		t.Fatalf("corpus manifest: %v", err)
	}
	defer f.Close()
	m := map[string]ManifestEntry{}
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
		e := ManifestEntry{Outer: map[perfdata.RecordType]int{}}
		counts, stopped, _ := strings.Cut(rest, "; parse stopped: ")
		for _, g := range outerRE.FindAllStringSubmatch(counts, -1) {
			typ, _ := strconv.Atoi(g[2])
			n, _ := strconv.Atoi(g[3])
			e.Outer[perfdata.RecordType(typ)] = n
		}
		e.Stopped = stopped
		m[cur] = e
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}
