package main

// TestREADME runs the examples of the README and of docs/*.md as written:
// every fenced block whose info string is "sh" or "sh modern-perf" (which
// needs the perf >= 6.17 scripts/modern-perf.sh installs), a file at a time,
// each file's blocks in order in a directory of their own, with bash -e -o
// pipefail, in the environment of a new shell after the README's make
// install: PATH as a login shell has it, with the install's bin first, as
// /usr/local/bin is for the default PREFIX, and an empty home. Blocks of
// other kinds ("shell" for installation and make targets, "json", "go",
// plain) are not run.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// docFiles are the README and docs/*.md, as paths in the repository.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(testkit.RepoPath("docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	return files
}

// readmeBlocks are the blocks of file (a path in the repository) to run.
func readmeBlocks(t *testing.T, file string) []readmeBlock {
	t.Helper()
	f, err := os.Open(testkit.RepoPath(file))
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
	// programs with metadata, so that the blocks have some to show
	testkit.LoadCilium(t, "meta")
	prefix, _ := makeInstall(t)
	if n := len(readmeBlocks(t, "README.md")); n < 5 {
		t.Fatalf("%d runnable blocks in the README", n)
	}
	for _, file := range docFiles(t) {
		// the modern-perf blocks run BPFMETA_MODERN_PERF's perf
		env := append(freshEnv(t, prefix), testkit.ModernPerfEnv+"="+modern)
		dir := t.TempDir()
		blocks := readmeBlocks(t, file)
		t.Logf("%s: %d blocks", file, len(blocks))
		for _, b := range blocks {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			cmd := exec.CommandContext(ctx, bash, "-e", "-o", "pipefail", "-c", b.script)
			cmd.Dir = dir
			cmd.Env = append(env, "TMPDIR="+dir)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			cancel()
			if err != nil {
				t.Errorf("%s:%d: the block fails: %v\n%s\n---\n%s", file, b.line, err, b.script, tail(out.String(), 2000))
			}
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// TestREADMELibrary compiles docs/library.md's "Use as a library" program as
// written, as a package of the module (an overlay: nothing is written into
// the repository).
func TestREADMELibrary(t *testing.T) {
	goTool := testkit.Command(t, "go")
	src, err := os.ReadFile(testkit.RepoPath("docs", "library.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(src), "## Use as a library\n")
	_, block, ok := strings.Cut(section, "```go\n")
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !strings.HasPrefix(block, "package main\n") {
		t.Fatalf("no go block with a package main under \"Use as a library\"")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := testkit.RepoPath("internal", "readmelibrary")
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkg, "main.go"): file}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	// (go vet cannot take a package that is only in an overlay)
	cmd := exec.Command(goTool, "build", "-overlay", overlayFile, "-o", filepath.Join(dir, "prog"), "./internal/readmelibrary")
	cmd.Dir = testkit.RepoPath()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go build: %v\n%s\n---\n%s", err, out, block)
	}
	if _, err := os.Stat(pkg); err == nil {
		t.Errorf("%s exists in the repository", pkg)
	}
}

// TestREADMEGolden compiles the two go blocks of docs/golden.md's "Golden
// tests of your BPF program's metadata" as written, as test files of a
// package of the module (an overlay), each block under 20 lines of test,
// the first (with bpfmetatest.Object, issue 48) at most 10 lines of Go.
func TestREADMEGolden(t *testing.T) {
	goTool := testkit.Command(t, "go")
	src, err := os.ReadFile(testkit.RepoPath("docs", "golden.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(src), "## Golden tests of your BPF program's metadata\n")
	section, _, _ = strings.Cut(section, "\n## ")
	dir := t.TempDir()
	pkg := testkit.RepoPath("internal", "readmegolden")
	replace := map[string]string{}
	for i := 0; ; i++ {
		_, rest, ok := strings.Cut(section, "```go\n")
		if !ok {
			break
		}
		block, after, _ := strings.Cut(rest, "```\n")
		section = after
		if _, fn, _ := strings.Cut(block, "\nfunc Test"); strings.Count(fn, "\n") >= 20 {
			t.Errorf("block %d: its test is %d lines, want under 20", i, strings.Count(fn, "\n"))
		}
		// the first is the test of the object file, at most 10 lines of Go
		if lines := len(slices.DeleteFunc(strings.Split(block, "\n"), func(l string) bool { return strings.TrimSpace(l) == "" })); i == 0 && (lines > 10 || !strings.Contains(block, "bpfmetatest.Object(")) {
			t.Errorf("block 0 is %d lines, want the test with bpfmetatest.Object in at most 10:\n%s", lines, block)
		}
		file := filepath.Join(dir, fmt.Sprintf("b%d_test.go", i))
		if err := os.WriteFile(file, []byte(block), 0o644); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(pkg, fmt.Sprintf("b%d_test.go", i))] = file
	}
	if len(replace) != 2 {
		t.Fatalf("%d go blocks, want 2", len(replace))
	}
	// the second block defines -update, which a test package does once
	replace[filepath.Join(pkg, "doc.go")] = filepath.Join(dir, "doc.go")
	os.WriteFile(filepath.Join(dir, "doc.go"), []byte("package myprog\n"), 0o644)
	overlay, _ := json.Marshal(map[string]any{"Replace": replace})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "test", "-vet=off", "-overlay", overlayFile, "-c", "-o", filepath.Join(dir, "prog.test"), "./internal/readmegolden")
	cmd.Dir = testkit.RepoPath()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go test -c: %v\n%s", err, out)
	}
	if _, err := os.Stat(pkg); err == nil {
		t.Errorf("%s exists in the repository", pkg)
	}
}
