package cliapp

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// ManSection is a section of the man page after the commands: EXIT STATUS,
// ENVIRONMENT, FILES, EXAMPLES. Text is paragraphs as Description has them
// (indented lines are shown as they are); each of Items is a term and what
// it means.
type ManSection struct {
	Title string
	Text  string
	Items [][2]string
}

// ManPage renders app as a man page of section section, in roff: NAME,
// SYNOPSIS (every command's usage line), DESCRIPTION, COMMANDS (each with
// its description and flags, as -h has them), then extra.
func ManPage(app *cli.App, section int, extra []ManSection) string {
	var b strings.Builder
	name := app.Name
	fmt.Fprintf(&b, ".TH %s %d \"\" \"%s\" \"User Commands\"\n", strings.ToUpper(name), section, name)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", name, roffText(app.Usage))
	b.WriteString(".SH SYNOPSIS\n")
	for _, c := range app.VisibleCommands() {
		fmt.Fprintf(&b, "%s\n.br\n", roffSynopsis(usageLine(name, c)))
	}
	fmt.Fprintf(&b, "\\fB%s\\fR \\-\\-version | \\-h\n", name)
	b.WriteString(".SH DESCRIPTION\n")
	roffParagraphs(&b, app.Description)
	if flags := flagDocs(app.VisibleFlags(), false); len(flags) > 0 {
		b.WriteString(".PP\nOptions before the command:\n")
		roffFlags(&b, flags)
	}
	b.WriteString(".SH COMMANDS\n")
	for _, c := range app.VisibleCommands() {
		fmt.Fprintf(&b, ".SS %s\n", roffSynopsis(usageLine(name, c)))
		if c.Usage != "" {
			fmt.Fprintf(&b, "%s.\n", roffLine(capitalize(c.Usage)))
		}
		if c.Description != "" {
			b.WriteString(".PP\n")
			roffParagraphs(&b, c.Description)
		}
		roffFlags(&b, flagDocs(c.Flags, !c.HideHelp))
	}
	for _, s := range extra {
		fmt.Fprintf(&b, ".SH %s\n", strings.ToUpper(s.Title))
		if s.Text != "" {
			roffParagraphs(&b, s.Text)
		}
		for _, it := range s.Items {
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffText(it[0]), roffText(it[1]))
		}
	}
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// roffFlags lists flags as tagged paragraphs: bold names, italic value.
func roffFlags(b *strings.Builder, flags []flagDoc) {
	for _, f := range flags {
		fmt.Fprintf(b, ".TP\n\\fB%s\\fR", roffText(f.Names))
		if f.Value != "" {
			fmt.Fprintf(b, " \\fI%s\\fR", roffText(f.Value))
		}
		fmt.Fprintf(b, "\n%s\n", roffText(f.Usage))
	}
}

// roffSynopsis sets a usage line: the command bold, the rest as it is,
// never broken inside brackets.
func roffSynopsis(s string) string {
	fields := strings.SplitN(s, " ", 3)
	head := strings.Join(fields[:min(2, len(fields))], " ")
	out := "\\fB" + roffText(head) + "\\fR"
	if len(fields) == 3 {
		var rest strings.Builder
		depth := 0
		for _, r := range roffText(fields[2]) {
			switch {
			case r == '[':
				depth++
			case r == ']':
				depth--
			case r == ' ' && depth > 0:
				rest.WriteString(`\ `)
				continue
			}
			rest.WriteRune(r)
		}
		out += " " + rest.String()
	}
	return out
}

// roffParagraphs sets text: paragraphs apart at blank lines, indented
// lines (examples) as they are.
func roffParagraphs(b *strings.Builder, text string) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	literal := false
	for i, l := range lines {
		indented := strings.HasPrefix(l, " ")
		switch {
		case indented && !literal:
			b.WriteString(".RS\n.nf\n")
			literal = true
		case !indented && literal:
			b.WriteString(".fi\n.RE\n")
			literal = false
		}
		switch {
		case literal:
			b.WriteString(roffLine(strings.TrimLeft(l, " ")) + "\n")
		case strings.TrimSpace(l) == "":
			if i > 0 && i < len(lines)-1 {
				b.WriteString(".PP\n")
			}
		default:
			b.WriteString(roffLine(l) + "\n")
		}
	}
	if literal {
		b.WriteString(".fi\n.RE\n")
	}
}

var roffEscape = strings.NewReplacer(`\`, `\e`, "-", `\-`)

// roffText escapes s for roff: backslashes, and minus signs, which roff
// would otherwise print as hyphens (a flag copied from the page must work).
func roffText(s string) string { return roffEscape.Replace(s) }

// roffLine is roffText for a whole line: one starting with . or ' would be
// a request.
func roffLine(s string) string {
	s = roffText(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
