package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// versionText is what bpfmeta --version prints: the module version (a tag
// for go install ...@vX.Y.Z, "(devel)" for a build from a clone), the VCS
// revision the binary was built from, and the Go release that built it.
func versionText() string {
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
	return fmt.Sprintf("bpfmeta %s%s %s %s/%s", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print bpfmeta's version, the revision it was built from, and the Go release that built it",
		ArgsUsage: " ",
		Description: "The version is the module's (a tag for go install ...@vX.Y.Z, or a pseudo-version\n" +
			"for a build from a clone), with the commit the binary was built from.\n\n" +
			"Examples:\n" +
			"   bpfmeta version\n" +
			"   bpfmeta version | cut -d' ' -f2     (the version alone)",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("version takes no arguments")
			}
			_, err := fmt.Fprintln(c.App.Writer, versionText())
			return err
		},
	}
}

// The completion scripts ask bpfmeta itself for the words that can come
// next (urfave/cli's --generate-bash-completion), after urfave/cli's
// autocomplete scripts (MIT licence); files complete where none match.
const (
	bashCompletion = `# bash completion for bpfmeta: source <(bpfmeta completion bash)
_bpfmeta_complete() {
	local cur=${COMP_WORDS[COMP_CWORD]} words
	words=("${COMP_WORDS[@]:0:COMP_CWORD}")
	if [[ $cur == -* ]]; then
		words+=("$cur")
	fi
	local opts
	opts=$("${words[@]}" --generate-bash-completion 2>/dev/null) || return
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _bpfmeta_complete bpfmeta
`
	zshCompletion = `#compdef bpfmeta
# zsh completion for bpfmeta: bpfmeta completion zsh > "${fpath[1]}/_bpfmeta"
_bpfmeta() {
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
	_bpfmeta "$@"
else
	compdef _bpfmeta bpfmeta
fi
`
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "Prints a script that makes the shell complete bpfmeta's commands and flags (and\n" +
			"file names where a flag takes one). Install it as your shell expects:\n\n" +
			"Examples:\n" +
			"   source <(bpfmeta completion bash)                               (in ~/.bashrc)\n" +
			"   bpfmeta completion bash > /etc/bash_completion.d/bpfmeta\n" +
			"   bpfmeta completion zsh > \"${fpath[1]}/_bpfmeta\"\n" +
			"   bpfmeta completion fish > ~/.config/fish/completions/bpfmeta.fish",
		Action: func(c *cli.Context) error {
			if c.Args().Len() != 1 {
				return usagef("completion: name one shell: bash, zsh or fish")
			}
			var script string
			switch sh := c.Args().First(); sh {
			case "bash":
				script = bashCompletion
			case "zsh":
				script = zshCompletion
			case "fish":
				s, err := c.App.ToFishCompletion()
				if err != nil {
					return err
				}
				script = s
			default:
				return usagef("completion: no completion for %q: bash, zsh or fish", sh)
			}
			_, err := io.WriteString(c.App.Writer, script)
			return err
		},
	}
}

// manCommand prints the man page, made from the commands' own definitions
// (their usage, descriptions and flags), so that it says what --help says.
// make man writes it to bin/bpfmeta.1.
func manCommand() *cli.Command {
	return &cli.Command{
		Name:   "man",
		Usage:  "print the man page (roff)",
		Hidden: true,
		Action: func(c *cli.Context) error {
			page, err := manPage(c.App)
			if err != nil {
				return err
			}
			_, err = io.WriteString(c.App.Writer, page)
			return err
		},
	}
}

// manSection: bpfmeta is a user command.
const manSection = 1

// manPage renders app as a man page. urfave/cli writes the texts into
// markdown before turning it into roff, so they are made markdown first:
// indented lines (the examples) become code blocks, and the rest has the
// characters markdown would take for markup escaped.
func manPage(app *cli.App) (string, error) {
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
			dc.Usage = "bpfmeta " + c.Name + " [options] " + markdownEscape(c.ArgsUsage) + "\n\n" + dc.Usage
		}
		doc.Commands = append(doc.Commands, &dc)
	}
	return doc.ToManWithSection(manSection)
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
