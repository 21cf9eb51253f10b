package main

// What a new user tries first: the recording as an argument, options
// before the command, -j, --prog, a mistyped flag, and show on a recording
// that has no BPF_METADATA yet.

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

func TestCLIPerfHabits(t *testing.T) {
	in := corpusPath(t, bpfFile)
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // a part of it
		stderr string
	}{
		// show FILE is show -i FILE; it names the file, and what inject would do
		{[]string{"show", in}, exitOK, "BPF_METADATA records; it has ", ""},
		{[]string{"show", in}, exitOK, "bpfmeta inject adds their metadata", ""},
		{[]string{"show", "-j", in}, exitOK, `"records": []`, ""},
		{[]string{"-q", "show", in}, exitOK, "no BPF_METADATA records", ""},
		{[]string{"-v", "show", in}, exitOK, "no BPF_METADATA records", "records, "},
		{[]string{"dump", "--stats", in}, exitOK, "KSYMBOL", ""},
		{[]string{"show", "--prog", "1", in}, exitFailure, "", "no BPF_METADATA record of a program 1"},
		{[]string{"show", "-i", in, in}, exitUsage, "", "name the recording once"},
		{[]string{"show", "--jsn", in}, exitUsage, "", "did you mean --json?"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := bpfmeta(t, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("%v, stdout %q; want exit %d, %q on stdout and %q on stderr", r, tail(r.stdout, 500), tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// TestInjectSummary: one line without -v; the note that perf before 6.17
// cannot read the output only where such a perf may read it, not on the
// way into bpfmeta show, nor into /dev/null.
func TestInjectSummary(t *testing.T) {
	bin := buildBinary(t)
	bash := testkit.Command(t, "bash")
	in := corpusPath(t, bpfFile)
	snap := programsSnapshot(t, recordedPrograms(t, in, allPrograms))
	out := filepath.Join(t.TempDir(), "out.data")
	inject := bin + " inject --snapshot " + snap + " -i " + in
	for _, tc := range []struct {
		script string
		lines  int
		note   bool
	}{
		{inject + " -o " + out, 1, true},
		{inject + " | cat >/dev/null", 1, true},
		{inject + " | " + bin + " show >/dev/null", 1, false},
		{inject + " -o /dev/null", 1, false},
		{inject + " -v -o /dev/null", 2, false}, // and the programs not looked for
	} {
		t.Run(tc.script, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := exec.Command(bash, "-e", "-o", "pipefail", "-c", tc.script)
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			// the recording is of another machine, from a pipe: warnings and
			// notes of its own come first
			_, summary, _ := strings.Cut(stderr.String(), "BPF_METADATA records added")
			lines := strings.Count(summary, "\n")
			note := strings.Contains(summary, "note: perf before 6.17")
			if note {
				lines--
			}
			if lines != tc.lines || note != tc.note {
				t.Errorf("stderr:\n%s\nwant %d lines of summary, the note %v", stderr.String(), tc.lines, tc.note)
			}
		})
	}
}
