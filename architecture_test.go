package bpfmeta_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestArchitectureDoc: docs/architecture.md stays a true map. Every file
// its text names (`dir/file.go`; COMMAND stands for any command, so its
// directory) exists, so that a recipe of "where a change goes" names the
// files a change touches today; and every package of the module is in its
// package tables, the stacks (by its path, or under cmd/internal by its
// last element), once: a package's stack is the table it is in.
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
	tables, _, ok := strings.Cut(doc, "\n```\n\nEach package")
	if !ok {
		t.Fatal("docs/architecture.md: no package table (a ``` block followed by \"Each package\")")
	}
	listed := map[string]int{}
	in := false
	for _, line := range strings.Split(tables+"\n```", "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if f := strings.Fields(line); !in || len(f) == 0 {
			continue
		} else if line[0] != ' ' {
			listed[f[0]]++
		} else if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			listed["cmd/internal/"+f[0]]++
		}
	}
	if len(listed) == 0 {
		t.Fatal("docs/architecture.md: its package tables list nothing: the pattern no longer matches them")
	}
	for p, n := range listed {
		if n > 1 {
			t.Errorf("package %s is in %d of docs/architecture.md's package tables: a package is in one stack", p, n)
		}
	}
	for _, p := range modulePackages(t) {
		if p == "." {
			continue
		}
		if listed[p] == 0 {
			t.Errorf("package %s is not in docs/architecture.md's package table", p)
		}
	}
}

// maxSynopsis is the longest a package's synopsis (its doc comment's first
// sentence, go list's .Doc) may be: one line of go doc ./...'s map.
const maxSynopsis = 100

// TestArchitecturePackageDocs: go list -f '{{.Doc}}' ./... reads as a map
// of the project. Every package but a command has a doc comment that
// begins "Package NAME ", every doc comment's first sentence is a one-line
// synopsis (maxSynopsis), and every package is in docs/architecture.md's
// tables (TestArchitectureDoc).
func TestArchitecturePackageDocs(t *testing.T) {
	seen := 0
	for _, p := range moduleList(t) {
		if p.goFiles == 0 {
			continue // the module's own: tests only
		}
		seen++
		if want := "Package " + p.name + " "; p.name != "main" && !strings.HasPrefix(p.doc, want) {
			t.Errorf("package %s: its doc comment does not begin %q: %q", p.path, want, p.doc)
		}
		if p.name == "main" && !strings.HasPrefix(p.doc, "Command ") {
			t.Errorf("command %s: its doc comment does not begin \"Command \": %q", p.path, p.doc)
		}
		if n := utf8.RuneCountInString(p.doc); n > maxSynopsis {
			t.Errorf("package %s: its synopsis is %d characters, more than %d (one line, then the rest after a blank line): %q", p.path, n, maxSynopsis, p.doc)
		}
	}
	if seen == 0 {
		t.Fatal("go list listed no package with Go files")
	}
}

// modulePackages lists the module's packages, by their path in it ("."
// for the module's own).
func modulePackages(t *testing.T) []string {
	var pkgs []string
	for _, p := range moduleList(t) {
		pkgs = append(pkgs, p.path)
	}
	return pkgs
}

// modulePackage is a package of the module as go list tells it.
type modulePackage struct {
	path    string // in the module, "." for the module's own
	name    string
	goFiles int    // its non-test Go files
	doc     string // its doc comment's first sentence
}

// moduleList lists the module's packages.
func moduleList(t *testing.T) []modulePackage {
	t.Helper()
	cmd := exec.Command(testkit.Command(t, "go"), "list", "-f", "{{.ImportPath}}\t{{.Name}}\t{{len .GoFiles}}\t{{.Doc}}", "./...")
	cmd.Dir = testkit.RepoPath()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []modulePackage
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 4)
		if len(f) != 4 {
			t.Fatalf("go list: %q: not four fields", line)
		}
		p := modulePackage{name: f[1], doc: f[3]}
		p.goFiles, err = strconv.Atoi(f[2])
		if err != nil {
			t.Fatalf("go list: %q: %v", line, err)
		}
		if f[0] == module {
			p.path = "."
		} else if rel, ok := strings.CutPrefix(f[0], module+"/"); ok {
			p.path = rel
		} else {
			continue
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
