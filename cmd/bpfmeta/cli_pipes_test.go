package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// noploopC is the workload of TestPerfInjectPipes: a function perf
// report names, as perf test -w noploop's would if Debian's perf binaries
// were not stripped (and go test strips its test binaries).
const noploopC = `
#include <time.h>
__attribute__((noinline)) void noploop(void) {
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (volatile int i = 0; i < 100000; i++)
			;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 300000000L);
}
int main(void) { noploop(); return 0; }
`

// pipesScript runs, with bpfmeta inject where a script has perf inject,
// the pipelines of perf's tests/shell/pipe_test.sh (the shapes of its
// record+report and inject sections; the script itself is perf's, GPL,
// and not copied here): bpfmeta inject between perf record and perf report
// on pipes, into an existing file (-o over the mktemp'd file a first
// record wrote, as perf inject writes over it), from a file perf record
// wrote over an older one (perf.data.old) and from a pipe recording in a
// file, and from a file into another mktemp'd one. It stops at the first
// command that fails, or pipeline whose report lacks the workload's
// function, as perf's script stops (set -e) or fails.
const pipesScript = `
data=$(mktemp "$TMPDIR/perf.data.XXXXXX")
data2=$(mktemp "$TMPDIR/perf.data2.XXXXXX")
fail() { echo "FAILED: $*"; exit 1; }
rec() { perf record -e task-clock:u "$@" 2>/dev/null; }

rec -o - $prog | perf report -i - --task | grep -q "$task" || fail "record | report --task"
rec -g -o - $prog > "$data" || fail "record -o - > data"
perf report -i "$data" | grep -q noploop || fail "record -o - > data; report -i data"

rec -o - $prog | bpfmeta inject | perf report -i - | grep -q noploop || fail "#1 record | inject | report"
rec -g -o - $prog | bpfmeta inject | perf report -i - | grep -q noploop || fail "#2 record -g | inject | report"
rec -o - $prog | bpfmeta inject -o "$data" || fail "#3 record | inject -o data (data exists)"
perf report -i "$data" | grep -q noploop || fail "#3 report -i data"
rec -o "$data" $prog || fail "#4 record -o data"
bpfmeta inject -i "$data" | perf report -i - | grep -q noploop || fail "#4 record -o data; inject -i data | report"
rec -o - $prog > "$data" || fail "#5 record -o - > data"
bpfmeta inject -i "$data" | perf report -i - | grep -q noploop || fail "#5 record -o - > data; inject -i data | report"
rec -o - $prog > "$data" || fail "#6 record -o - > data"
bpfmeta inject -i "$data" -o "$data2" || fail "#6 inject -i data -o data2 (mktemp'd)"
perf report -i "$data2" | grep -q noploop || fail "#6 report -i data2"
echo PASSED
`

// TestPerfInjectPipes: bpfmeta inject is a drop-in for perf inject in
// perf's own pipe test's pipelines, with perf 6.1 and with the modern
// perf recording and reporting: each report finds the workload's function,
// and -o over an existing file of the caller's writes it (the file it
// replaces kept as FILE.old). On the old rule, #3 failed: "exists (-f
// replaces a file ...)".
func TestPerfInjectPipes(t *testing.T) {
	bin := buildBinary(t)
	cc := testkit.Command(t, "cc")
	exe := filepath.Join(t.TempDir(), "noploop")
	build := exec.Command(cc, "-O0", "-o", exe, "-x", "c", "-")
	build.Stdin = strings.NewReader(noploopC)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	for _, role := range []string{stockPerf, modernPerf} {
		t.Run(role, func(t *testing.T) {
			perf := perfPath(t, role)
			testkit.Exclusive(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "bin")
			os.Mkdir(path, 0o755)
			for name, target := range map[string]string{"perf": perf, "bpfmeta": bin} {
				if err := os.Symlink(target, filepath.Join(path, name)); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("sh", "-c", pipesScript)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+path+":"+os.Getenv("PATH"), "TMPDIR="+dir,
				"prog="+exe, "task=noploop")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.HasSuffix(string(out), "PASSED\n") {
				t.Fatalf("%v\n%s", err, out)
			}
			old, _ := filepath.Glob(filepath.Join(dir, "perf.data.*.old"))
			if len(old) != 1 {
				t.Errorf("FILE.old beside the output: %q, want the file inject and record replaced", old)
			}
		})
	}
}
