package cliapp

import (
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func testApp() *cli.App {
	return &cli.App{Name: "prog", EnableBashCompletion: true, Commands: []*cli.Command{
		{Name: "list", Usage: "list things", Description: "Lists.\n\nExamples:\n   prog list 1 --json",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}, &cli.StringFlag{Name: "output", Aliases: []string{"o"}}}},
		{Name: "run", Flags: []cli.Flag{&cli.BoolFlag{Name: "v"}}},
	}}
}

func TestReorderFlags(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"prog list 1 2 --json", "prog list --json 1 2"},
		{"prog list 1 -o out 2", "prog list -o out 1 2"},
		{"prog list 1 -o=out", "prog list -o=out 1"},
		{"prog list 1 -- --json", "prog list 1 -- --json"},
		{"prog list - --json", "prog list --json -"},
		{"prog run cmd -v", "prog run cmd -v"}, // kept as it is
		{"prog nosuch 1 --json", "prog nosuch 1 --json"},
		{"prog", "prog"},
		{"prog -o x list 1", "prog -o x list 1"}, // a value is not a command
		{"prog --json -x list 1", "prog -x list --json 1"},
		{"prog -v run cmd -v", "prog run -v cmd -v"},
	} {
		got := strings.Join(ReorderFlags(testApp(), strings.Fields(c.in), "run"), " ")
		if got != c.want {
			t.Errorf("ReorderFlags(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		s, err := Completion(testApp(), sh)
		if err != nil || !strings.Contains(s, "prog") || strings.Contains(s, "PROG") {
			t.Errorf("%s: %v\n%s", sh, err, s)
		}
	}
	if _, err := Completion(testApp(), "tcsh"); err == nil {
		t.Errorf("tcsh: no error")
	}
}

// Complete answers what bash asks: the words before the cursor, then the
// word at it.
func TestComplete(t *testing.T) {
	args := func(cmd string) []string { return []string{"arg-of-" + cmd} }
	for _, c := range []struct{ words, want string }{
		{"|", "list run"},
		{"-|", "--help -h"},
		{"li|", "list run"}, // the shell keeps those it begins
		{"list |", "arg-of-list"},
		{"list -|", "--json --output -o --help -h"},
		{"list --|", "--json --output --help"},
		{"list --o|", "--output"},
		{"list -o|", "-o"},
		{"list -o |", ""},     // a file
		{"list 1 -- |", ""},   // after --, no flags
		{"list 1 -- --|", ""}, // nor there
		{"nosuch -|", ""},     // no command of that name
		{"list --json |", "arg-of-list"},
	} {
		words := strings.Fields(strings.TrimSuffix(c.words, "|"))
		if strings.HasSuffix(c.words, " |") || c.words == "|" {
			words = append(words, "")
		}
		got := strings.Join(Complete(testApp(), words, args), " ")
		if got != c.want {
			t.Errorf("Complete(%q) = %q, want %q", words, got, c.want)
		}
	}
}

// The fish script names each flag once.
func TestFishCompletion(t *testing.T) {
	s, err := Completion(testApp(), "fish")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		if seen[l] {
			t.Errorf("twice: %s", l)
		}
		seen[l] = true
	}
	for _, want := range []string{"-l help", "-l output -s o -r", "-a list"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}

// The man page has every command with its description, markdown's markup
// characters escaped and the examples as code.
func TestManPage(t *testing.T) {
	page := ManPage(testApp(), 1, []ManSection{{Title: "Exit status", Items: [][2]string{{"0", "success"}}}})
	for _, want := range []string{".TH PROG 1", "List things.", "Lists.", "prog list 1 \\-\\-json",
		".SH SYNOPSIS", "\\fBprog list\\fR [\\-\\-json] [\\-o\\ VALUE]", ".SH EXIT STATUS", ".TP\n\\fB\\-o, \\-\\-output\\fR \\fIVALUE\\fR"} {
		if !strings.Contains(page, want) {
			t.Errorf("the man page has no %q:\n%s", want, page)
		}
	}
}

func TestVersion(t *testing.T) {
	if v := Version("prog"); !strings.HasPrefix(v, "prog ") {
		t.Errorf("Version = %q", v)
	}
}

// TestVersionStamped: a make dist build prints the version and commit
// the linker stamped, not the module's "(devel)".
func TestVersionStamped(t *testing.T) {
	defer func(v, c, at string) { stampVersion, stampCommit, stampTime = v, c, at }(stampVersion, stampCommit, stampTime)
	stampVersion, stampCommit, stampTime = "1.2.3+4.gabcdef0", "abcdef012345", "2026-12-06T10:00:00Z"
	v := Version("prog")
	if want := "prog 1.2.3+4.gabcdef0 (commit abcdef012345, 2026-12-06T10:00:00Z) go"; !strings.HasPrefix(v, want) {
		t.Errorf("Version = %q, want it to start %q", v, want)
	}
}
