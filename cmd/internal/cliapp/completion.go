package cliapp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// CompletionFlag is what the bash and zsh scripts append to the words
// before the cursor to ask the program for the words that can come next
// (urfave/cli's name for it, which the scripts already installed use).
const CompletionFlag = "--generate-bash-completion"

// Completion returns the completion script of app for shell (bash, zsh or
// fish). The bash and zsh scripts ask the program itself for the words that
// can come next (Complete), after urfave/cli's autocomplete scripts (MIT
// licence); files complete where none match. The fish script lists the
// commands and their flags.
func Completion(app *cli.App, shell string) (string, error) {
	r := strings.NewReplacer("PROG", app.Name)
	switch shell {
	case "bash":
		return r.Replace(bashCompletion), nil
	case "zsh":
		return r.Replace(zshCompletion), nil
	case "fish":
		return fishCompletion(app), nil
	}
	return "", fmt.Errorf("no completion for %q: bash, zsh or fish", shell)
}

// CompletionShells are the shells Completion has a script for.
var CompletionShells = []string{"bash", "zsh", "fish"}

// Complete returns the words that can replace the last of words, the
// word at the cursor (possibly empty), after the others (the command line
// without the program's name): for a word that starts with "-", the flags
// it begins (every name for "-", the long ones for "--"); else the
// commands, or a command's arguments where they are known (args). Nothing,
// so that the shell completes file names, after "--", or where a flag
// takes a value. No command runs.
func Complete(app *cli.App, words []string, args func(cmd string) []string) []string {
	if len(words) == 0 {
		return nil
	}
	cur, words := words[len(words)-1], words[:len(words)-1]
	if !strings.HasPrefix(cur, "-") {
		cur = ""
	}
	i := slices.IndexFunc(words, func(w string) bool { return !strings.HasPrefix(w, "-") })
	if i < 0 {
		if cur != "" {
			return flagWords(cur, app.VisibleFlags(), true)
		}
		var names []string
		for _, c := range app.VisibleCommands() {
			names = append(names, c.Name)
		}
		return names
	}
	cmd := app.Command(words[i])
	if cmd == nil {
		return nil
	}
	after := words[i+1:]
	if slices.Contains(after, "--") {
		return nil
	}
	if n := len(after); n > 0 && strings.HasPrefix(after[n-1], "-") && takesValue(cmd.Flags, strings.TrimLeft(after[n-1], "-")) {
		return nil
	}
	if cur != "" {
		return flagWords(cur, cmd.VisibleFlags(), !cmd.HideHelp)
	}
	if args != nil {
		return args(cmd.Name)
	}
	return nil
}

// flagWords are the dashed names of flags that start with cur: "-" takes
// every name, "--" the long ones; help adds -h and --help.
func flagWords(cur string, flags []cli.Flag, help bool) []string {
	var out []string
	add := func(name string) {
		w := "--" + name
		if len(name) == 1 {
			w = "-" + name
		}
		if strings.HasPrefix(w, cur) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			add(n)
		}
	}
	if help {
		add("help")
		add("h")
	}
	return out
}

func takesValue(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() && slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// fishCompletion lists the commands, each command's flags (those that take
// a FILE complete file names, others none) and the arguments args knows.
func fishCompletion(app *cli.App) string {
	var b strings.Builder
	name := app.Name
	var cmds []string
	for _, c := range app.VisibleCommands() {
		cmds = append(cmds, c.Name)
	}
	fmt.Fprintf(&b, "# fish completion for %[1]s: %[1]s completion fish > ~/.config/fish/completions/%[1]s.fish\n", name)
	fmt.Fprintf(&b, "complete -c %s -f\n", name)
	none := "not __fish_seen_subcommand_from " + strings.Join(cmds, " ")
	fishFlags(&b, name, none, app.VisibleFlags(), true)
	for _, c := range app.VisibleCommands() {
		fmt.Fprintf(&b, "complete -c %s -n %s -a %s -d %s\n", name, fishQuote(none), c.Name, fishQuote(c.Usage))
	}
	for _, c := range app.VisibleCommands() {
		cond := "__fish_seen_subcommand_from " + c.Name
		fishFlags(&b, name, cond, c.VisibleFlags(), !c.HideHelp)
		if c.Name == "completion" {
			fmt.Fprintf(&b, "complete -c %s -n %s -a %s\n", name, fishQuote(cond), fishQuote(strings.Join(CompletionShells, " ")))
		}
	}
	return b.String()
}

func fishFlags(b *strings.Builder, name, cond string, flags []cli.Flag, help bool) {
	for _, f := range flags {
		fmt.Fprintf(b, "complete -c %s -n %s", name, fishQuote(cond))
		for _, n := range f.Names() {
			if len(n) == 1 {
				fmt.Fprintf(b, " -s %s", n)
			} else {
				fmt.Fprintf(b, " -l %s", n)
			}
		}
		if v, ok := f.(cli.DocGenerationFlag); ok {
			if v.TakesValue() {
				b.WriteString(" -r")
				if sf, ok := f.(*cli.StringFlag); ok && sf.TakesFile {
					b.WriteString(" -F")
				}
			}
			fmt.Fprintf(b, " -d %s", fishQuote(strings.ReplaceAll(v.GetUsage(), "`", "")))
		}
		b.WriteString("\n")
	}
	// urfave/cli adds its help flag to an app's flags, and to a command's
	// only when it runs: write it once.
	if help && !slices.ContainsFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "help") }) {
		fmt.Fprintf(b, "complete -c %s -n %s -s h -l help -d 'show help'\n", name, fishQuote(cond))
	}
}

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

const (
	bashCompletion = `# bash completion for PROG: source <(PROG completion bash)
_PROG_complete() {
	local cur=${COMP_WORDS[COMP_CWORD]} words opts
	words=("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur")
	opts=$("${words[@]}" ` + CompletionFlag + ` 2>/dev/null) || return
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _PROG_complete PROG
`
	zshCompletion = `#compdef PROG
# zsh completion for PROG: PROG completion zsh > "${fpath[1]}/_PROG"
_PROG() {
	local -a opts
	opts=("${(@f)$(${words[@]:0:#words[@]-1} "${words[-1]}" ` + CompletionFlag + ` 2>/dev/null)}")
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
