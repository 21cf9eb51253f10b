// Package cliutil is the plumbing of bpfmeta's command line, apart from
// what its commands do: a run's session (standard streams, signals that
// must remove a half-written file first, exit statuses), opening -i and -o
// by the project's policy, a progress line, running a child command, and
// what urfave/cli v2 lacks (flags after arguments, shell completion
// scripts, a man page that agrees with --help, the version from the build
// info). It knows nothing of the commands themselves.
package cliutil

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Version is what NAME --version prints: the module version (a tag
// for go install ...@vX.Y.Z, "(devel)" for a build from a clone), the VCS
// revision the binary was built from, and the Go release that built it.
func Version(name string) string {
	v, rev := "(unknown)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
		var revision, at, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
		if revision != "" {
			rev = fmt.Sprintf(" (revision %.12s, %s%s)", revision, at, modified)
		}
	}
	return fmt.Sprintf("%s %s%s %s %s/%s", name, v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// ReorderFlags moves a command's flags that follow its arguments before
// them, so that `bpfmeta programs 97 --json` means what it says (urfave/cli
// v2 stops at the first argument). Nothing after "--" moves, nor anything
// of the commands in keep, whose arguments are a command line of their own.
func ReorderFlags(app *cli.App, args []string, keep ...string) []string {
	if len(args) < 3 {
		return args
	}
	ci := slices.IndexFunc(args[1:], func(a string) bool { return !strings.HasPrefix(a, "-") })
	if ci < 0 {
		return args
	}
	ci++
	cmd := app.Command(args[ci])
	if cmd == nil || slices.Contains(keep, cmd.Name) {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() {
			for _, n := range f.Names() {
				takesValue[n] = true
			}
		}
	}
	var flags, rest []string
	tail := args[ci+1:]
	for i := 0; i < len(tail); i++ {
		a := tail[i]
		switch {
		case a == "--":
			rest = append(rest, tail[i:]...)
			i = len(tail)
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if takesValue[name] && !strings.Contains(a, "=") && i+1 < len(tail) {
				i++
				flags = append(flags, tail[i])
			}
		default:
			rest = append(rest, a)
		}
	}
	out := slices.Clone(args[:ci+1])
	out = append(out, flags...)
	return append(out, rest...)
}

// Completion returns the completion script of app for shell (bash, zsh or
// fish). The bash and zsh scripts ask the program itself for the words that
// can come next (urfave/cli's --generate-bash-completion, which needs
// app.EnableBashCompletion), after urfave/cli's autocomplete scripts (MIT
// licence); files complete where none match.
func Completion(app *cli.App, shell string) (string, error) {
	r := strings.NewReplacer("PROG", app.Name)
	switch shell {
	case "bash":
		return r.Replace(bashCompletion), nil
	case "zsh":
		return r.Replace(zshCompletion), nil
	case "fish":
		return app.ToFishCompletion()
	}
	return "", fmt.Errorf("no completion for %q: bash, zsh or fish", shell)
}

const (
	bashCompletion = `# bash completion for PROG: source <(PROG completion bash)
_PROG_complete() {
	local cur=${COMP_WORDS[COMP_CWORD]} words
	words=("${COMP_WORDS[@]:0:COMP_CWORD}")
	if [[ $cur == -* ]]; then
		words+=("$cur")
	fi
	local opts
	opts=$("${words[@]}" --generate-bash-completion 2>/dev/null) || return
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _PROG_complete PROG
`
	zshCompletion = `#compdef PROG
# zsh completion for PROG: PROG completion zsh > "${fpath[1]}/_PROG"
_PROG() {
	local -a opts
	local cur=${words[-1]}
	if [[ $cur == -* ]]; then
		opts=("${(@f)$(_CLI_ZSH_AUTOCOMPLETE_HACK=1 ${words[@]:0:#words[@]-1} $cur --generate-bash-completion 2>/dev/null)}")
	else
		opts=("${(@f)$(_CLI_ZSH_AUTOCOMPLETE_HACK=1 ${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
	fi
	if [[ -n ${opts[1]} ]]; then
		_describe 'values' opts
	else
		_files
	fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
	_PROG "$@"
else
	compdef _PROG PROG
fi
`
)

// ManPage renders app as a man page of section section. urfave/cli writes the texts into
// markdown before turning it into roff, so they are made markdown first:
// indented lines (the examples) become code blocks, and the rest has the
// characters markdown would take for markup escaped.
func ManPage(app *cli.App, section int) (string, error) {
	doc := *app
	doc.Description = markdownText(app.Description)
	doc.Commands = nil
	for _, c := range app.Commands {
		dc := *c
		// urfave/cli's man page has each command's usage and flags, not
		// its description: the description goes into the usage.
		dc.Usage = markdownEscape(c.Usage)
		if c.Description != "" {
			dc.Usage += "\n\n" + markdownText(c.Description)
		}
		if c.ArgsUsage != "" && strings.TrimSpace(c.ArgsUsage) != "" {
			dc.Usage = app.Name + " " + c.Name + " [options] " + markdownEscape(c.ArgsUsage) + "\n\n" + dc.Usage
		}
		doc.Commands = append(doc.Commands, &dc)
	}
	return doc.ToManWithSection(section)
}

func markdownText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " ") {
			lines[i] = "    " + strings.TrimLeft(l, " ")
		} else {
			lines[i] = markdownEscape(l)
		}
	}
	return strings.Join(lines, "\n")
}

var markdownSpecial = strings.NewReplacer("\\", "\\\\", "_", "\\_", "*", "\\*", "`", "\\`", "[", "\\[", "]", "\\]", "<", "\\<", ">", "\\>", "#", "\\#")

func markdownEscape(s string) string { return markdownSpecial.Replace(s) }
