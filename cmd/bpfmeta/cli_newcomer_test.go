package main

// What a new user tries first: the recording as an argument, options
// before the command, -j, --prog, a mistyped flag, and show on a recording
// that has no BPF_METADATA yet.

import (
	"strings"
	"testing"
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
