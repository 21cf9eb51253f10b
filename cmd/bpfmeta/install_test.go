package main

// What a user gets from make install: the binary in PATH, man bpfmeta, and
// bash completion as bash-completion loads it.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// bashCompletionScript is bash-completion's main script (Debian's
// bash-completion package), which /etc/bash.bashrc sources.
const bashCompletionScript = "/usr/share/bash-completion/bash_completion"

// makeInstall runs make install PREFIX=prefix, building bpfmeta into a
// directory of the test's, and returns prefix and the lines make install
// said to add to each shell's startup file (by shell), as a user reads them.
func makeInstall(t *testing.T) (string, map[string]string) {
	t.Helper()
	mk := testkit.Command(t, "make")
	prefix, build := t.TempDir(), t.TempDir()
	cmd := exec.Command(mk, "-s", "-C", testkit.RepoPath(), "install", "PREFIX="+prefix, "BIN="+filepath.Join(build, "bpfmeta"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	add := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		sh, rest, _ := strings.Cut(l, ": ")
		if _, line, ok := strings.Cut(rest, ":  "); ok && strings.Contains(rest, "add to ~/") {
			add[sh] = line
		}
	}
	return prefix, add
}

// TestCompletionDirs: for the default PREFIX, make install puts each
// completion script in a directory the shell on the machine searches with
// its own default path (no XDG_DATA_DIRS, a new user's home), and prints no
// line to add; fish 3.6 of Debian 12 does not search
// /usr/local/share/fish/vendor_completions.d.
func TestCompletionDirs(t *testing.T) {
	mk := testkit.Command(t, "make")
	out, err := exec.Command(mk, "-n", "-C", testkit.RepoPath(), "install", "PREFIX=/usr/local").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n install: %v\n%s", err, out)
	}
	dirOf := func(name string) string {
		m := regexp.MustCompile(`completion \w+ >(\S+)/` + regexp.QuoteMeta(name) + `\n`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("make -n install writes no %s:\n%s", name, out)
		}
		return string(m[1])
	}
	env := []string{"HOME=" + t.TempDir(), "PATH=/usr/local/bin:/usr/bin:/bin"}
	search := map[string][]string{
		"zsh":  {testkit.Command(t, "zsh"), "-fc", `print -rl -- $fpath`},
		"fish": {testkit.Command(t, "fish"), "-c", `printf "%s\n" $fish_complete_path`},
	}
	for sh, name := range map[string]string{"zsh": "_bpfmeta", "fish": "bpfmeta.fish"} {
		dir := dirOf(name)
		cmd := exec.Command(search[sh][0], search[sh][1:]...)
		cmd.Env = env
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", sh, err)
		}
		if !slices.Contains(strings.Split(string(b), "\n"), dir) {
			t.Errorf("make install puts %s in %s, which %s does not search:\n%s", name, dir, sh, b)
		}
	}
	// bash: bash-completion's default XDG_DATA_DIRS, /usr/local/share:/usr/share
	if dir := dirOf("bpfmeta"); dir != "/usr/local/share/bash-completion/completions" {
		t.Errorf("make install puts the bash script in %s", dir)
	}
	// no line to add, but bash's source line where bash-completion is
	// not installed (plain bash loads no completion by itself)
	hints := exec.Command("scripts/completion-dirs.sh", "hints")
	hints.Dir, hints.Env = testkit.RepoPath(), append(env, "PREFIX=/usr/local")
	b, err := hints.CombinedOutput()
	want := ""
	if _, err := os.Stat(bashCompletionScript); err != nil {
		want = "bash: bash-completion does not load /usr/local/share/bash-completion/completions: add to ~/.bashrc:  source /usr/local/share/bash-completion/completions/bpfmeta\n"
	}
	if err != nil || string(b) != want {
		t.Errorf("make install PREFIX=/usr/local would say (%v):\n%s\nwant:\n%s", err, b, want)
	}
}

// newShellPATH is the PATH a new login shell starts with (/etc/profile's
// and the user's), not the one go test runs with.
func newShellPATH(t *testing.T) string {
	t.Helper()
	bash := testkit.Command(t, "bash")
	out, err := exec.Command("env", "-i", "HOME="+os.Getenv("HOME"), bash, "-l", "-c", `printf %s "$PATH"`).Output()
	if err != nil || len(out) == 0 {
		t.Fatalf("bash -l: PATH %q: %v", out, err)
	}
	return string(out)
}

// freshEnv is the environment of a new shell of a user who ran make
// install PREFIX=prefix: PREFIX/bin first in PATH (as /usr/local/bin is
// for the default PREFIX), and an empty home.
func freshEnv(t *testing.T, prefix string) []string {
	return []string{
		"PATH=" + filepath.Join(prefix, "bin") + ":" + newShellPATH(t),
		"HOME=" + t.TempDir(),
		"LANG=C.UTF-8",
	}
}

func TestMakeInstall(t *testing.T) {
	testkit.Command(t, "man")
	bash := testkit.Command(t, "bash")
	prefix, add := makeInstall(t)
	env := freshEnv(t, prefix)

	// man finds the page through PATH (PREFIX/bin -> PREFIX/share/man).
	man := exec.Command("man", "bpfmeta")
	man.Env = append(env, "MANPAGER=cat", "MANWIDTH=80")
	out, err := man.CombinedOutput()
	if err != nil {
		t.Fatalf("man bpfmeta: %v\n%s", err, out)
	}
	// the docs file the man page and -h refer to for the JSON
	if b, err := os.ReadFile(filepath.Join(prefix, "share/doc/bpfmeta/docs/json.md")); err != nil || !strings.Contains(string(b), "\n## JSON\n") {
		t.Errorf("make install put no docs/json.md with its JSON section in share/doc/bpfmeta: %v", err)
	}
	for _, want := range []string{"NAME", "SYNOPSIS", "bpfmeta inject", "EXIT STATUS", "share/doc/bpfmeta/README.md", "docs/json.md"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("man bpfmeta has no %q:\n%s", want, tail(string(out), 3000))
		}
	}

	// The script is loaded as make install said (a PREFIX bash-completion
	// does not search: the line it printed for ~/.bashrc; with
	// bash-completion, its loader otherwise), and the function it
	// installs answers as bash would ask it, from COMP_WORDS.
	loader := ""
	if _, err := os.Stat(bashCompletionScript); err == nil {
		loader = ". " + bashCompletionScript
	}
	rc, ok := add["bash"]
	if !ok {
		rc = "_completion_loader bpfmeta"
	}
	script := loader + `
` + rc + `
complete -p bpfmeta || exit 1
fn=$(complete -p bpfmeta | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
for line in "$@"; do
	read -ra COMP_WORDS <<<"$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line COMP_POINT=${#line}
	COMPREPLY=()
	"$fn" bpfmeta "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
	echo "$line|${COMPREPLY[*]}"
done
`
	cases := []struct{ line, want, not string }{
		{"bpfmeta ", `^inject show .*strip .*convert`, ""},
		{"bpfmeta inject -", `--input -i --output -o .*--snapshot .*--help -h$`, ""},
		{"bpfmeta inject --", `^--input --output --force --no-clobber --sync --snapshot `, " -i"},
		{"bpfmeta inject --sn", `^--snapshot$`, ""},
		{"bpfmeta show --", `--input .*--json `, "perf"},
		{"bpfmeta completion ", `^bash zsh fish$`, ""},
		{"bpfmeta inject -i ", `^$`, ""}, // files: bash's -o default
		{"bpfmeta watch -o w.jsonl -- perf -", `^$`, ""},
	}
	args := []string{"-c", script, "bash"}
	for _, c := range cases {
		args = append(args, c.line)
	}
	cmd := exec.Command(bash, args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash completion: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if line, reply, ok := strings.Cut(l, "|"); ok {
			got[line] = reply
		}
	}
	for _, c := range cases {
		reply, ok := got[c.line]
		switch {
		case !ok:
			t.Errorf("%q: no answer\n%s", c.line, out)
		case !regexp.MustCompile(c.want).MatchString(reply):
			t.Errorf("%q<TAB><TAB> offers %q, want %s", c.line, reply, c.want)
		case c.not != "" && strings.Contains(reply, c.not):
			t.Errorf("%q<TAB><TAB> offers %q, with %q", c.line, reply, c.not)
		}
	}

	uninstall := exec.Command("make", "-C", testkit.RepoPath(), "uninstall", "PREFIX="+prefix)
	if out, err := uninstall.CombinedOutput(); err != nil {
		t.Fatalf("make uninstall: %v\n%s", err, out)
	}
	filepath.WalkDir(prefix, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("make uninstall left %s", path)
		}
		return nil
	})
}

// zshComplete drives an interactive zsh on a pseudo-terminal (zsh/zpty):
// each line is typed and completed by a widget that runs the completion TAB
// runs (expand-or-complete), appends the line then in the buffer to $out and
// prints a token the driver waits for, so no line is typed before the last
// one is done (zsh drops what is typed ahead of a widget's redisplay).
const zshComplete = `out=$1; shift
zmodload zsh/zpty || exit 2
zpty z 'TERM=dumb zsh -i'
zpty -w z "autoload -Uz compinit; compinit -u -D"
zpty -w z "complete-line() { zle expand-or-complete; print -r -- \"\$BUFFER|\" >>${(q)out}; BUFFER=; zle -R; zle reset-prompt; print -n DO\"\"NE }; zle -N complete-line; bindkey '^X' complete-line"
for line in "$@"; do
	zpty -w -n z "$line"$'\x18'
	zpty -r -m z junk '*DONE*' || exit 3
done
zpty -d z
`

// TestZshFishCompletion completes command lines in zsh and fish with the
// scripts make install put where each shell looks under PREFIX/share, as
// TestMakeInstall does for bash.
func TestZshFishCompletion(t *testing.T) {
	zsh, fish := testkit.Command(t, "zsh"), testkit.Command(t, "fish")
	prefix, add := makeInstall(t)
	env := freshEnv(t, prefix)
	home := strings.TrimPrefix(env[1], "HOME=")
	// the lines make install said to add, where it said (a temporary
	// PREFIX is one no shell searches by default)
	for sh, file := range map[string]string{"zsh": ".zshrc", "fish": ".config/fish/config.fish"} {
		line, ok := add[sh]
		if !ok {
			t.Fatalf("make install PREFIX=tmp printed no line to add for %s", sh)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(home, file)), 0o755)
		if err := os.WriteFile(filepath.Join(home, file), []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "recordings"), 0o755); err != nil {
		t.Fatal(err)
	}
	// line typed, then the line after one TAB (zsh) and the words fish offers
	cases := []struct{ line, zsh, fish string }{
		{"bpfmeta inj", "bpfmeta inject ", "inject"},
		{"bpfmeta inject --sn", "bpfmeta inject --snapshot ", "--snapshot"},
		{"bpfmeta completion f", "bpfmeta completion fish ", "fish"},
		{"bpfmeta dump --st", "bpfmeta dump --stats ", "--stats"},
		{"bpfmeta inject -i rec", "bpfmeta inject -i recordings/", "recordings/"},
		{"bpfmeta -", "bpfmeta -", "-h -q -v --help --quiet --verbose --version"},
	}
	var lines []string
	for _, c := range cases {
		lines = append(lines, c.line)
	}

	t.Run("zsh", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "lines")
		args := []string{"-f", "-c", zshComplete, "zsh", out}
		cmd := exec.Command(zsh, append(args, lines...)...)
		cmd.Env, cmd.Dir = env, dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zsh: %v\n%s", err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(got) != len(cases) {
			t.Fatalf("zsh completed %d lines, want %d:\n%s", len(got), len(cases), b)
		}
		for i, c := range cases {
			if want := c.zsh + "|"; got[i] != want {
				t.Errorf("zsh: %q<TAB> gives %q, want %q", c.line, strings.TrimSuffix(got[i], "|"), c.zsh)
			}
		}
	})

	t.Run("fish", func(t *testing.T) {
		// fish reads ~/.config/fish/config.fish (no --no-config), with
		// its own default search path otherwise: no XDG_DATA_DIRS.
		script := `for line in $argv; echo (complete -C "$line" | string split -f1 \t | string join ' '); end`
		cmd := exec.Command(fish, append([]string{"-c", script}, lines...)...)
		cmd.Env = env
		cmd.Dir = dir
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fish: %v\n%s", err, b)
		}
		got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(got) != len(cases) {
			t.Fatalf("fish answered %d lines, want %d:\n%s", len(got), len(cases), b)
		}
		for i, c := range cases {
			if got[i] != c.fish {
				t.Errorf("fish: %q<TAB> offers %q, want %q", c.line, got[i], c.fish)
			}
		}
	})
}

// TestSystemdUnit: make install puts bpfmeta-watch.service where systemd
// looks under PREFIX, running the installed binary on /var/lib/bpfmeta
// with the capabilities it needs and no others, and systemd-analyze
// verify accepts it (man finds its Documentation= page through PATH).
func TestSystemdUnit(t *testing.T) {
	analyze := testkit.Command(t, "systemd-analyze")
	testkit.Command(t, "man")
	prefix, _ := makeInstall(t)
	unit := filepath.Join(prefix, "lib", "systemd", "system", "bpfmeta-watch.service")
	b := string(testkit.ReadFile(t, unit))
	for _, want := range []string{
		"ExecStart=" + filepath.Join(prefix, "bin", "bpfmeta") + " watch --journal /var/lib/bpfmeta\n",
		"StateDirectory=bpfmeta\n", "StateDirectoryMode=0700\n",
		"CapabilityBoundingSet=CAP_SYS_ADMIN CAP_SYSLOG CAP_PERFMON CAP_BPF\n",
		"ProtectSystem=strict\n", "ProtectHome=yes\n", "PrivateTmp=yes\n", "NoNewPrivileges=yes\n",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("%s has no %q", unit, want)
		}
	}
	cmd := exec.Command(analyze, "verify", unit)
	cmd.Env = freshEnv(t, prefix)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
