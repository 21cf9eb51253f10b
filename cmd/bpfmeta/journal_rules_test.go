package main

// Tests of how the CLI reaches a journal's files (issue 46 item 1): by the
// writer's rules, refused with one line naming the path and the rule.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
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

// TestWatchJournalENOSPC: watch --journal on a file system that fills up
// says the error once, on one line, with the summary, and exits 1; the
// load it could not journal is in the summary.
func TestWatchJournalENOSPC(t *testing.T) {
	watchNeeds(t)
	bin := buildBinary(t)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		testkit.Missing(t, "mounting a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	p := startBpfmeta(t, bin, "watch", "--journal", filepath.Join(mnt, "journal"), "--max-size", "4M")
	waitFor(t, "the journal to start", func() bool { return strings.Contains(p.stderr.String(), "following BPF program loads") })
	fill, _ := os.Create(filepath.Join(mnt, "fill"))
	fill.Write(make([]byte, 16<<20)) // to ENOSPC
	fill.Close()
	for i := 0; i < 50; i++ {
		select {
		case <-p.done:
		default:
			prog, _, _ := loadWatchTestProg(t, int32(i))
			defer prog.Close()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		break
	}
	p.cmd.Process.Signal(syscall.SIGTERM) // if it did not stop by itself
	status := p.wait(t)
	stderr := p.stderr.String()
	if status != exitFailure || strings.Count(stderr, "no space left on device") != 1 || strings.Contains(stderr, `\n`) ||
		!strings.Contains(stderr, "BPF programs at start") {
		t.Errorf("watch --journal on a full file system: exit %d, stderr:\n%s", status, stderr)
	}
}

// TestWatchJournalSignals: SIGINT, SIGTERM, SIGHUP and SIGQUIT each stop
// watch --journal as -h says: the summary, exit 0.
func TestWatchJournalSignals(t *testing.T) {
	watchNeeds(t)
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		dir := filepath.Join(t.TempDir(), "journal")
		p := startBpfmeta(t, bin, "watch", "--journal", dir, "--max-size", "4M")
		waitFor(t, "the journal to start", func() bool { return strings.Contains(p.stderr.String(), "until SIGINT, SIGTERM, SIGHUP or SIGQUIT") })
		p.cmd.Process.Signal(sig)
		if status := p.wait(t); status != exitOK || !strings.Contains(p.stderr.String(), "segments") {
			t.Errorf("%v: exit %d, stderr:\n%s", sig, status, p.stderr)
		}
	}
}

// TestDefaultJournalRules: the default journal (/var/lib/bpfmeta) that
// breaks the reader's rules (others can write it) is skipped with a
// warning naming the rule, never read, and inject goes on without it
// (issue 46 item 1: a plain inject injected a forged load from it).
func TestDefaultJournalRules(t *testing.T) {
	watchNeeds(t)
	in := corpusPath(t, "mstange_perf6.16_x86_64_zstd_compressed2.data")
	dir := filepath.Join(t.TempDir(), "journal")
	jw, err := journal.Create(dir, bpfprog.System{Hostname: "arthur-des", BootID: "b"}, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jw.Close()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	old := defaultJournal
	defaultJournal = dir
	t.Cleanup(func() { defaultJournal = old })
	r := bpfmeta(t, nil, "inject", "-i", in, "-o", "/dev/null")
	if r.code != exitOK || !strings.Contains(r.stderr, "warning: the journal "+dir+" is not read: ") || !strings.Contains(r.stderr, "others can write it") {
		t.Errorf("inject with a default journal others can write: %v", r)
	}
}
