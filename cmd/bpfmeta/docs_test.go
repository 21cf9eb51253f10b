package main

// The README a newcomer reads in five minutes, and docs/ for the rest: the
// README's length, its links to every docs file, every relative link of the
// README and docs/*.md resolving (file and heading), the README's golden-test
// recipe being docs/golden.md's (which TestREADMEGolden compiles), and what
// make install does with them.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// readmeMaxLines is what a newcomer reads in five minutes (issue 50).
const readmeMaxLines = 250

func TestREADMELength(t *testing.T) {
	src, err := os.ReadFile(testkit.RepoPath("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: the detail goes to docs/", n, readmeMaxLines)
	}
	for _, f := range docFiles(t)[1:] {
		if !strings.Contains(string(src), "]("+f+")") {
			t.Errorf("README.md has no link to %s", f)
		}
	}
}

// TestDocLinks: every relative link of the README and docs/*.md names a file
// that exists, and a heading of it where the link has a #fragment.
func TestDocLinks(t *testing.T) {
	root := testkit.RepoPath()
	n := 0
	for _, f := range docFiles(t) {
		problems, links := linkProblems(root, f)
		n += links
		for _, p := range problems {
			t.Error(p)
		}
	}
	if n < 15 {
		t.Errorf("%d relative links in the README and docs/, want the README's to each docs file and more", n)
	}
}

// TestDocLinksBroken: the check finds a link to a missing file and one to
// a missing heading, and takes a heading's anchor as GitHub makes it.
func TestDocLinksBroken(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "docs"), 0o755)
	os.WriteFile(filepath.Join(root, "docs", "a.md"), []byte("# A\n\n## Running as root: `-f`\n\n```\n## not a heading\n```\n"), 0o644)
	os.WriteFile(filepath.Join(root, "README.md"), []byte(strings.Join([]string{
		"[ok](docs/a.md) [ok](docs/a.md#running-as-root--f) [ok](#b) `[code](nofile.md)`",
		"[missing](docs/b.md) [bad anchor](docs/a.md#not-a-heading) [web](https://example.com/x.md)",
		"## B", "",
	}, "\n")), 0o644)
	problems, links := linkProblems(root, "README.md")
	if links != 5 || len(problems) != 2 || !strings.Contains(problems[0], "docs/b.md") || !strings.Contains(problems[1], "#not-a-heading") {
		t.Errorf("%d links, problems %q; want 5 links, docs/b.md and #not-a-heading", links, problems)
	}
}

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdCodeSpan = regexp.MustCompile("`[^`]*`")
)

// linkProblems checks the relative links of file (a path under root) and
// returns what does not resolve and how many links it checked.
func linkProblems(root, file string) ([]string, int) {
	src, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return []string{err.Error()}, 0
	}
	var problems []string
	links := 0
	for i, line := range mdProse(string(src)) {
		for _, m := range mdLink.FindAllStringSubmatch(mdCodeSpan.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, frag, _ := strings.Cut(target, "#")
			to := file
			if path != "" {
				to = filepath.Join(filepath.Dir(file), path)
			}
			dst, err := os.ReadFile(filepath.Join(root, to))
			if err != nil {
				problems = append(problems, file+":"+strconv.Itoa(i+1)+": "+target+": "+err.Error())
				continue
			}
			if frag != "" && !mdAnchors(string(dst))[frag] {
				problems = append(problems, file+":"+strconv.Itoa(i+1)+": "+target+": "+to+" has no heading #"+frag)
			}
		}
	}
	return problems, links
}

// mdProse is the lines of a Markdown text with those of fenced code blocks
// emptied, so that line numbers stay.
func mdProse(src string) []string {
	lines := strings.Split(src, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// mdAnchors are a Markdown text's headings' anchors as GitHub makes them:
// lower case, letters, digits, '-' and '_' kept, a space made '-', anything
// else dropped, a repeated anchor numbered -1, -2, ...
func mdAnchors(src string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range mdProse(src) {
		text := strings.TrimLeft(l, "#")
		if text == l || !strings.HasPrefix(text, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors
}

// TestREADMERecipeGolden: the README's golden-test recipe is one of
// docs/golden.md's go blocks, which TestREADMEGolden compiles.
func TestREADMERecipeGolden(t *testing.T) {
	readme, err := os.ReadFile(testkit.RepoPath("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(testkit.RepoPath("docs", "golden.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```go\n")
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 {
		t.Fatal("no go block in the README")
	}
	if !strings.Contains(string(golden), "```go\n"+block+"```\n") {
		t.Errorf("the README's go block is none of docs/golden.md's:\n%s", block)
	}
}

// TestMakeInstallDocs: make install puts the README and docs/ in
// share/doc/bpfmeta as they are in the repository, so that the README's
// links hold there too, and docs/json.md, which -h and the man page name.
func TestMakeInstallDocs(t *testing.T) {
	prefix, _ := makeInstall(t)
	doc := filepath.Join(prefix, "share/doc/bpfmeta")
	for _, f := range docFiles(t) {
		want, err := os.ReadFile(testkit.RepoPath(f))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(doc, f)); err != nil || string(got) != string(want) {
			t.Errorf("make install: %s in %s: %v (not the repository's)", f, doc, err)
		}
		problems, _ := linkProblems(doc, f)
		for _, p := range problems {
			t.Errorf("installed: %s", p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(doc, "docs", "json.md")); err != nil || !strings.Contains(string(b), "\n## JSON\n") {
		t.Errorf("make install put no docs/json.md with its JSON section in %s: %v", doc, err)
	}
	mk := testkit.Command(t, "make")
	out, err := exec.Command(mk, "-s", "-C", testkit.RepoPath(), "uninstall", "PREFIX="+prefix).CombinedOutput()
	if err != nil {
		t.Fatalf("make uninstall: %v\n%s", err, out)
	}
	filepath.WalkDir(doc, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("make uninstall left %s", path)
		}
		return nil
	})
}

// TestMakeInstallPATH: make install PREFIX=... says when PREFIX/bin is not
// in PATH, with the line that puts it there, and says nothing when it is.
func TestMakeInstallPATH(t *testing.T) {
	sh := testkit.Command(t, "sh")
	prefix, add := makeInstall(t) // the test's PATH has no temporary PREFIX
	bin := filepath.Join(prefix, "bin")
	line, ok := add["PATH"]
	if !ok {
		t.Fatalf("make install PREFIX=%s printed no line to add for PATH", prefix)
	}
	got, err := exec.Command(sh, "-c", "PATH=/usr/bin:/bin; "+line+"; command -v bpfmeta").Output()
	if err != nil || strings.TrimSpace(string(got)) != filepath.Join(bin, "bpfmeta") {
		t.Errorf("after %q, command -v bpfmeta is %q (%v), want %s", line, got, err, filepath.Join(bin, "bpfmeta"))
	}
	mk := testkit.Command(t, "make")
	cmd := exec.Command(mk, "-s", "-C", testkit.RepoPath(), "install", "PREFIX="+prefix, "BIN="+filepath.Join(t.TempDir(), "bpfmeta"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "PATH:") {
		t.Errorf("make install with %s in PATH says:\n%s", bin, out)
	}
}
