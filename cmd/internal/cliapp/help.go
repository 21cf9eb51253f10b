package cliapp

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
)

// flagDoc is one flag as -h and the man page list it: its names, short
// form first ("-i, --input FILE"), and what it does, with its default
// where it has one worth saying (not a boolean's false).
type flagDoc struct {
	Names, Value, Usage string
}

// flagDocs lists flags in the order they are defined, then -h, --help
// when help is true.
func flagDocs(flags []cli.Flag, help bool) []flagDoc {
	var docs []flagDoc
	for _, f := range flags {
		df, ok := f.(cli.DocGenerationFlag)
		if v, vok := f.(cli.VisibleFlag); !ok || vok && !v.IsVisible() {
			continue
		}
		value, usage := placeholder(df)
		if def := df.GetDefaultText(); df.TakesValue() && def != "" && def != `""` {
			usage += " (default: " + strings.Trim(def, `"`) + ")"
		}
		docs = append(docs, flagDoc{Names: strings.Join(dashed(f.Names()), ", "), Value: value, Usage: usage})
	}
	if help {
		docs = append(docs, flagDoc{Names: "-h, --help", Usage: "show this help"})
	}
	return docs
}

// placeholder splits a flag's usage into the name of its value (the
// `FILE` in its usage, as urfave/cli takes it) and the usage without the
// back quotes.
func placeholder(df cli.DocGenerationFlag) (value, usage string) {
	usage = df.GetUsage()
	if a := strings.Index(usage, "`"); a >= 0 {
		if b := strings.Index(usage[a+1:], "`"); b >= 0 {
			value = usage[a+1 : a+1+b]
			usage = usage[:a] + value + usage[a+1+b+1:]
		}
	}
	if df.TakesValue() && value == "" {
		value = "VALUE"
	}
	if !df.TakesValue() {
		value = ""
	}
	return value, usage
}

// dashed orders names short first and gives each its dashes.
func dashed(names []string) []string {
	var short, long []string
	for _, n := range names {
		if len(n) == 1 {
			short = append(short, "-"+n)
		} else {
			long = append(long, "--"+n)
		}
	}
	return append(short, long...)
}

// usageLine is a command's usage line: every flag, in its shortest form,
// then the arguments ("bpfmeta inject [-i FILE] [-o FILE] [-f] ...").
func usageLine(app string, c *cli.Command) string {
	parts := []string{app, c.Name}
	for _, f := range c.VisibleFlags() {
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		name := dashed(f.Names())[0]
		if value, _ := placeholder(df); value != "" {
			name += " " + value
		}
		parts = append(parts, "["+name+"]")
	}
	if a := strings.TrimSpace(c.ArgsUsage); a != "" {
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// SetHelp has c's -h say its synopsis and list its flags as flagDocs does
// (urfave/cli's own list puts long names first, sorts nothing but adds
// "(default: false)" to every boolean).
//
// The text is made when the help is printed, by cli.HelpPrinter (which
// every command help of urfave/cli v2 goes through), not when c is set up:
// making it for each command at every start cost about half a millisecond
// of bpfmeta's start-up, for a help few runs print. Until then c's
// CustomHelpTemplate is only a mark for that printer.
func SetHelp(app string, c *cli.Command) {
	installHelpPrinter.Do(func() {
		next := cli.HelpPrinter
		cli.HelpPrinter = func(w io.Writer, templ string, data any) {
			if c, ok := data.(*cli.Command); ok {
				if app, ok := strings.CutPrefix(templ, lazyHelp); ok {
					c.UsageText, templ = commandHelp(app, c)
				}
			}
			next(w, templ, data)
		}
	})
	c.CustomHelpTemplate = lazyHelp + app
}

// lazyHelp, then the program's name, is the template SetHelp gives a
// command: the printer it installs prints commandHelp's in its place.
const lazyHelp = "\x00cliapp.SetHelp:"

var installHelpPrinter sync.Once

// commandHelp is c's synopsis and its help template. urfave/cli adds its
// help flag to c.Flags before it prints the help; the list names -h as
// flagDocs does instead, and the synopsis leaves it out, as they did when
// made before the flag was added.
func commandHelp(app string, c *cli.Command) (synopsis, templ string) {
	own := *c
	own.Flags = slices.DeleteFunc(slices.Clone(c.Flags), func(f cli.Flag) bool { return f == cli.HelpFlag })
	return usageLine(app, &own), `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{template "usageTemplate" .}}{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

OPTIONS:
` + flagTable(own.Flags, !c.HideHelp)
}

// flagTable lists flags as flagDocs does, in columns, as template text (no
// {{ in it).
func flagTable(flags []cli.Flag, help bool) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, d := range flagDocs(flags, help) {
		fmt.Fprintf(tw, "   %s\t%s\n", strings.TrimSpace(d.Names+" "+d.Value), d.Usage)
	}
	tw.Flush()
	return strings.ReplaceAll(b.String(), "{{", `{{"{{"}}`)
}

// SuggestFlag is the flag of flags (with -h and --help) that provided, a
// flag none of them is, was likely meant to be: the one it begins, or
// one a couple of typing mistakes away; "" when none is close.
func SuggestFlag(flags []cli.Flag, provided string) string {
	typed := strings.TrimLeft(provided, "-")
	if typed == "" {
		return ""
	}
	best, bestDist := "", len(typed)/3+1
	var begun []string
	names := []string{"help"}
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	for _, n := range names {
		if len(n) == 1 {
			continue
		}
		if strings.HasPrefix(n, typed) {
			begun = append(begun, n)
		}
		if d := editDistance(typed, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	if len(begun) == 1 {
		best = begun[0]
	}
	if best == "" {
		return ""
	}
	return "--" + best
}

// editDistance is the edit distance of a and b with two neighbours swapped
// counting as one edit (optimal string alignment, Damerau): --jsno is one
// mistake away from --json, as it is one typing slip.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// SetAppHelp has app's -h list its flags as flagDocs does.
func SetAppHelp(app *cli.App) {
	head, _, _ := strings.Cut(cli.AppHelpTemplate, "{{if .VisibleFlagCategories}}")
	app.CustomAppHelpTemplate = head + "\n\nGLOBAL OPTIONS:\n" + flagTable(app.Flags, !app.HideHelp)
}
