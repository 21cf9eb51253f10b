package main

// TestREADME runs the README's examples as written: every fenced block
// whose info string is "sh" (with the system's perf, 6.1 on Debian 12) or
// "sh modern-perf" (with a perf >= 6.17 first in PATH as "perf"), in order,
// in one directory, with bash -e -o pipefail. Blocks of other kinds
// ("shell" for installation and make targets, "json", "go", plain) are
// not run.

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

type readmeBlock struct {
	line   int
	modern bool
	script string
}

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	f, err := os.Open(testkit.RepoPath("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []readmeBlock
	var cur *readmeBlock
	var body strings.Builder
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			info := strings.TrimPrefix(line, "```")
			cur = &readmeBlock{line: n, modern: info == "sh modern-perf"}
			if info != "sh" && info != "sh modern-perf" {
				cur.line = -1 // a block not to run
			}
			body.Reset()
		case cur != nil && line == "```":
			if cur.line > 0 {
				cur.script = body.String()
				blocks = append(blocks, *cur)
			}
			cur = nil
		case cur != nil:
			body.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

func TestREADME(t *testing.T) {
	testkit.BPF(t)
	testkit.PerfStock(t)
	modern := testkit.PerfModern(t)
	bash := testkit.Command(t, "bash")
	testkit.Command(t, "jq")
	bin := buildBinary(t)
	modernDir := t.TempDir()
	if err := os.Symlink(modern, filepath.Join(modernDir, "perf")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	blocks := readmeBlocks(t)
	if len(blocks) < 5 {
		t.Fatalf("%d runnable blocks in the README", len(blocks))
	}
	for _, b := range blocks {
		path := filepath.Dir(bin) + ":" + os.Getenv("PATH")
		if b.modern {
			path = modernDir + ":" + path
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, bash, "-e", "-o", "pipefail", "-c", b.script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+path, "TMPDIR="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Errorf("README.md:%d: the block fails: %v\n%s\n---\n%s", b.line, err, b.script, tail(out.String(), 2000))
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
