package main

// Helpers of the CLI tests (cli_*_test.go): running bpfmeta in-process
// through run() or as a real process, the corpus, perf, and reading
// recordings back with the project's reader.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// The perfs the tests compare with, by role (perfPath finds them): perf 6.1
// (writes no BPF_METADATA) and a perf >= 6.17 (the oracle).
const (
	stockPerf  = "stock"
	modernPerf = "modern"
)

// perfPath returns the perf of a role, or ends the test when it is missing.
func perfPath(t testing.TB, role string) string {
	t.Helper()
	if role == stockPerf {
		return testkit.PerfStock(t)
	}
	return testkit.PerfModern(t)
}

// cliGoldenDir holds the golden files (-update rewrites them).
const cliGoldenDir = "testdata"

// Corpus files the tests use by name.
const (
	smallFile      = "autofdo_perf5.6_x86_64_small.data"             // file mode, 6 KiB, both perfs read it
	smallPipe      = "quipper_perf4.4_x86_64_lost_samples.pipe.data" // pipe mode, 15 KiB
	bpfFile        = "quipper_perf5.19_x86_64_branch_spec_ksymbol_bpf.data"
	bpfPipe        = "mstange_perf6.5_aarch64_zstd_compressed.pipe.data" // BPF programs, COMPRESSED
	bpfZstdFile    = "mstange_perf6.5_aarch64_zstd_compressed.data"
	trailingPipe   = "mstange_perf6.16_x86_64_zstd_compressed2.pipe.data" // perf record's stderr after the last record
	corruptPipe    = "quipper_CORRUPTED_zero_size_sample.pipe.data"
	corruptOffset  = "0xbfd0" // the SAMPLE of size 0
	trailingOffset = "0x7c40"
)

// corpusPath returns the path of a corpus recording.
func corpusPath(t testing.TB, name string) string { return testkit.CorpusFile(t, name) }

// result is what one bpfmeta run did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	stderr := r.stderr
	if len(stderr) > 400 {
		stderr = stderr[:400] + "..."
	}
	return fmt.Sprintf("exit %d, stderr %q", r.code, stderr)
}

// bpfmeta runs the CLI in-process, as main does, with stdin as given (nil:
// an empty stream).
func bpfmeta(t testing.TB, stdin *os.File, args ...string) result {
	t.Helper()
	var in io.Reader = strings.NewReader("")
	if stdin != nil {
		in = stdin
	}
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"bpfmeta"}, args...), cliutil.NewSession(in, &stdout, &stderr))
	return result{code, stdout.String(), stderr.String()}
}

// The bpfmeta binary the process tests run, built once (TestMain removes it).
var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func TestMain(m *testing.M) {
	if os.Getenv(maxRSSEnv) == "1" {
		os.Exit(maxRSSHelper(os.Args[1:]))
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildBinary returns a bpfmeta binary of the test's own, for the cases
// that need a real process (pipes, signals, another user, its peak memory).
func buildBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		// go test puts its GOROOT/bin first in the PATH it runs tests with.
		goTool, err := exec.LookPath("go")
		if err != nil {
			binErr = fmt.Errorf("building bpfmeta: %v", err)
			return
		}
		if binDir, binErr = os.MkdirTemp("", "bpfmeta-test-bin-"); binErr != nil {
			return
		}
		if out, err := exec.Command(goTool, "build", "-o", filepath.Join(binDir, "bpfmeta"), ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	b, err := os.ReadFile(filepath.Join(binDir, "bpfmeta"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bpfmeta")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// oneLine checks that stderr is exactly one line "bpfmeta: ..." and
// contains every string in want.
func oneLine(t testing.TB, what string, r result, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "bpfmeta: ") || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("%s: stderr is not one line \"bpfmeta: ...\":\n%s", what, r.stderr)
		return
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Errorf("%s: the message does not say %q: %s", what, w, lines[0])
		}
	}
}

// fileState is what "unchanged" means for a file: its bytes and mtime.
type fileState struct {
	data  []byte
	mtime time.Time
}

func stateOf(t testing.TB, path string) fileState {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fileState{b, st.ModTime()}
}

func (s fileState) check(t testing.TB, path, what string) {
	t.Helper()
	now := stateOf(t, path)
	if !bytes.Equal(now.data, s.data) {
		t.Errorf("%s: %s was modified (%d bytes, were %d)", what, path, len(now.data), len(s.data))
	}
	if !now.mtime.Equal(s.mtime) {
		t.Errorf("%s: %s has a new mtime %v (was %v)", what, path, now.mtime, s.mtime)
	}
}

// copyFile copies src to a new file in dir, with an old mtime so that a
// write would show, and returns its path.
func copyFile(t testing.TB, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(dst, old, old); err != nil {
		t.Fatal(err)
	}
	return dst
}

// readBack is a recording as the project's reader reads it (not
// decompressing: every record is a top-level one).
type readBack struct{ *rectest.Recording }

// readRecording reads a recording file (file or pipe format) to its end.
func readRecording(t testing.TB, path string) readBack {
	t.Helper()
	return readBack{rectest.Read(t, path, reader.Options{})}
}

// compressedRecords returns the raw bytes of the top-level COMPRESSED and
// COMPRESSED2 records.
func (rb readBack) compressedRecords() [][]byte {
	var out [][]byte
	for _, r := range rb.Records {
		if !r.Compressed() && (r.Type == perfdata.RecordCompressed || r.Type == perfdata.RecordCompressed2) {
			out = append(out, r.Raw)
		}
	}
	return out
}

// preludeRecords counts the top-level records of the pipe prelude's types
// (HEADER_ATTR, HEADER_FEATURE, ...) in a file's data section, as
// "TYPE×n ...", or "".
func (rb readBack) preludeRecords() string {
	counts := map[perfdata.RecordType]int{}
	for _, r := range rb.Records {
		if !r.Compressed() && isPrelude(r.Type) {
			counts[r.Type]++
		}
	}
	var parts []string
	for _, t := range []perfdata.RecordType{perfdata.RecordHeaderAttr, perfdata.RecordHeaderEventType, perfdata.RecordHeaderTracingData, perfdata.RecordHeaderBuildID, perfdata.RecordHeaderFeature} {
		if counts[t] > 0 {
			parts = append(parts, fmt.Sprintf("%v×%d", t, counts[t]))
		}
	}
	return strings.Join(parts, " ")
}
