package bpfmeta_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestArchitectureDoc: docs/architecture.md stays a true map. Every file
// its text names (`dir/file.go`; COMMAND stands for any command, so its
// directory) exists, so that a recipe of "where a change goes" names the
// files a change touches today; and every package of the module is in its
// package table (by its path, or under cmd/internal by its last element).
func TestArchitectureDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	files := regexp.MustCompile("`([a-z][a-zA-Z0-9_/.-]*/[a-zA-Z0-9_.-]+\\.(?:go|md|txt|sh))`").FindAllStringSubmatch(doc, -1)
	if len(files) == 0 {
		t.Fatal("docs/architecture.md names no file: the pattern no longer matches its text")
	}
	for _, m := range files {
		name := m[1]
		if strings.Contains(name, "COMMAND") {
			name = filepath.Dir(name)
		}
		if _, err := os.Stat(name); err != nil {
			t.Errorf("docs/architecture.md names %s: %v", m[1], err)
		}
	}
	table, _, ok := strings.Cut(doc, "\n```\n\nEach package")
	if !ok {
		t.Fatal("docs/architecture.md: no package table (a ``` block followed by \"Each package\")")
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && line[0] != ' ' {
			listed[f[0]] = true
		} else if len(f) > 0 && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			listed["cmd/internal/"+f[0]] = true
		}
	}
	for _, p := range modulePackages(t) {
		if p == "." {
			continue
		}
		if !listed[p] {
			t.Errorf("package %s is not in docs/architecture.md's package table", p)
		}
	}
}

// modulePackages lists the module's packages, by their path in it ("."
// for the module's own).
func modulePackages(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command(testkit.Command(t, "go"), "list", "./...")
	cmd.Dir = testkit.RepoPath()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		if p == module {
			pkgs = append(pkgs, ".")
		} else if rel, ok := strings.CutPrefix(p, module+"/"); ok {
			pkgs = append(pkgs, rel)
		}
	}
	return pkgs
}
