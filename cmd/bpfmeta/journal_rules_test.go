package main

// Tests of how the CLI reaches a journal's files (issue 46 item 1): by the
// writer's rules, refused with one line naming the path and the rule.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
)

func TestJournalRulesCLI(t *testing.T) {
	mk := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "journal")
		jw, err := journal.Create(dir, bpfprog.System{Hostname: "alpha", BootID: "b"}, journal.Options{})
		if err != nil {
			t.Fatal(err)
		}
		jw.Close()
		return dir
	}
	seg := filepath.Join("alpha", "0000000000000001.journal")
	cases := []struct {
		name  string
		spoil func(dir string) error
		want  string
	}{
		{"/", nil, `bpfmeta: /: not a bpfmeta journal: no segment file, and no host directory holding one`},
		{"0777", func(dir string) error { return os.Chmod(dir, 0o777) }, "journal: mode 0777: others can write it"},
		{"FIFO segment", func(dir string) error {
			os.Remove(filepath.Join(dir, seg))
			return syscall.Mkfifo(filepath.Join(dir, seg), 0o600)
		}, seg + ": not a regular file"},
		{"symlinked host", func(dir string) error {
			if err := os.Rename(filepath.Join(dir, "alpha"), dir+".alpha"); err != nil {
				return err
			}
			return os.Symlink(dir+".alpha", filepath.Join(dir, "alpha"))
		}, "journal/alpha is a symlink, not followed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := "/"
			if c.spoil != nil {
				dir = mk(t)
				if err := c.spoil(dir); err != nil {
					t.Fatal(err)
				}
			}
			r := bpfmeta(t, nil, "programs", "--journal", dir)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != exitFailure || len(lines) != 1 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("programs --journal %s: %v, want one line with %q", dir, r, c.want)
			}
		})
	}
}
