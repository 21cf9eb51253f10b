package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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

// output is where a command writes: a file bpfmeta creates (under a
// temporary name until committed, see package outfile), a device or FIFO
// written through, or stdout.
type output struct {
	name    string
	file    *outfile.File // nil for stdout
	w       io.Writer
	untrack func()
	held    *os.File // what is written to a stream until release (hold)
}

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
	if path == "-" || isOwnStdout(path) {
		switch {
		case s.stdoutClosed:
			return nil, errors.New("stdout is closed (-o FILE writes to a file)")
		case kind == binaryOutput && s.stdoutTerminal && !c.IsSet("output"):
			return nil, usagef("stdout is a terminal, and a recording is binary: -o FILE writes a file (-o - writes to the terminal anyway)")
		}
		if f, ok := s.out.File(); ok && kind == binaryOutput {
			outfile.GrowPipe(f)
		}
		return &output{name: "stdout", w: s.stdout}, nil
	}
	name := safetext.Quote(path)
	if in != nil && in.file != nil {
		if ist, err := in.file.Stat(); err == nil {
			if ost, err := os.Stat(path); err == nil && os.SameFile(ist, ost) {
				return nil, usagef("%s is the input: write the output to another file", name)
			}
		}
	}
	f, err := outfile.Create(path, outfile.Options{Force: c.Bool("force"), Journal: journal})
	if err != nil {
		return nil, fileError(name, err)
	}
	return &output{name: name, file: f, w: f, untrack: s.track(f)}, nil
}

// isOwnStdout tells the names of bpfmeta's own stdout (/dev/stdout, fd 1):
// written to as stdout is, never replaced.
func isOwnStdout(path string) bool {
	p := filepath.Clean(path)
	return p == "/dev/stdout" || p == "/dev/fd/1" || p == "/proc/self/fd/1"
}

// commit finishes a file: synced, then put under its name.
func (o *output) commit() error {
	if o.file == nil {
		return nil
	}
	defer o.untrack()
	if err := o.file.Commit(); err != nil {
		return fileError(o.name, err)
	}
	return nil
}

// abort removes a file that is not committed, and what was held.
func (o *output) abort() {
	if o.held != nil {
		o.held.Close()
		o.held = nil
	}
	if o.file != nil {
		o.file.Abort()
		o.untrack()
	}
}

// regular reports whether the output is a regular file: one that appears
// only when complete (commit), so needs no holding.
func (o *output) regular() bool { return o.file != nil && o.file.Regular() }

// hold keeps what the command writes in an unnamed file in $TMPDIR until
// release: a stream cannot take back what it was given. what names it
// in an error.
func (o *output) hold(what string) error {
	f, err := outfile.Unnamed(os.TempDir())
	if err != nil {
		return fmt.Errorf("holding %s back in %s: %w", what, os.TempDir(), err)
	}
	o.held = f
	return nil
}

// dest is where the command writes: the held file, the output file (which
// a recording's writer can seek in), or stdout.
func (o *output) dest() io.Writer {
	switch {
	case o.held != nil:
		return o.held
	case o.file != nil:
		return o.file.File
	}
	return o.w
}

// recordFormat is the format a recording written to the output must have
// (writer.Options.Format): the input's (0) for a regular file, a pipe
// stream for anything else, held or not.
func (o *output) recordFormat() perfdata.Format {
	if o.regular() {
		return 0
	}
	return perfdata.FormatPipe
}

// release writes what was held to the output.
func (o *output) release() error {
	if o.held == nil {
		return nil
	}
	if _, err := o.held.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.Copy(o.w, o.held); err != nil {
		return o.writeError(err)
	}
	return nil
}

// writeError names the output in an error writing it.
func (o *output) writeError(err error) error {
	if strings.HasPrefix(err.Error(), o.name) {
		return err
	}
	return fmt.Errorf("%s: %w", o.name, err)
}
