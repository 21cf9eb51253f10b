package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

func outputFlag(what string) cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", TakesFile: true,
		Usage: "write the " + what + " to `FILE` (- for stdout)"}
}

func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Aliases: []string{"f"},
		Usage: "replace FILE if it is a regular file (or write to it if it is a device or FIFO)"}
}

func quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"}
}

func verboseFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: what}
}

// output is where a command writes (outfile.Output).
type output struct{ *outfile.Output }

// outputKind says what a command writes, for the checks on stdout.
type outputKind int

const (
	binaryOutput outputKind = iota // a recording: not for a terminal
	textOutput                     // JSON, a snapshot
)

// openOutput opens what -o names. "-" is stdout, which must be open (a
// shell's >&- is an error, not a silent loss) and, for a recording, not a
// terminal unless -o - was given. A file is created by package outfile's
// policy (-f: Options.Force), mode 0600; naming the input is an error. With
// journal, a new file appears under its name at once (watch).
func openOutput(c *cli.Context, in *input, kind outputKind, journal bool) (*output, error) {
	s := sessionOf(c)
	path := c.String("output")
	if path == "-" || outfile.IsStdout(path) {
		switch {
		case s.stdoutClosed:
			return nil, errors.New("stdout is closed (-o FILE writes to a file)")
		case kind == binaryOutput && s.stdoutTerminal && !c.IsSet("output"):
			return nil, usagef("stdout is a terminal, and a recording is binary: -o FILE writes a file (-o - writes to the terminal anyway)")
		}
		if f, ok := s.out.File(); ok && kind == binaryOutput {
			outfile.GrowPipe(f)
		}
		return &output{outfile.NewStream("stdout", s.stdout)}, nil
	}
	name := safetext.Quote(path)
	if in != nil && in.file != nil {
		if ist, err := in.file.Stat(); err == nil {
			if ost, err := os.Stat(path); err == nil && os.SameFile(ist, ost) {
				return nil, usagef("%s is the input: write the output to another file", name)
			}
		}
	}
	o, err := outfile.Open(path, name, outfile.Options{Force: c.Bool("force"), Journal: journal}, s.track)
	if err != nil {
		return nil, fileError(name, err)
	}
	return &output{o}, nil
}

// hold holds a stream output back until release, in $TMPDIR.
func (o *output) hold(what string) error { return o.Hold(os.TempDir(), what) }

// recordFormat is the format a recording written to the output must have
// (writer.Options.Format): the input's (0) for a regular file, a pipe
// stream for anything else, held or not.
func (o *output) recordFormat() perfdata.Format {
	if o.Regular() {
		return 0
	}
	return perfdata.FormatPipe
}
