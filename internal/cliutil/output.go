package cliutil

import (
	"errors"
	"os"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// OutputOptions say what an output is and what the user allowed.
type OutputOptions struct {
	Given   bool     // -o was given (-o - writes a recording to a terminal)
	Force   bool     // -f: outfile.Options.Force
	Journal bool     // a new file appears under its name at once (watch)
	Binary  bool     // a recording, not text: never to a terminal unasked
	Input   *os.File // the input, which the output may not be
}

// OpenOutput opens what -o names. "-" is stdout, which must be open (a
// shell's >&- is an error, not a silent loss) and, for a binary output,
// not a terminal unless -o - was given. A file is created by package
// outfile's policy, mode 0600, and removed if a signal ends the run; naming
// the input is an error.
func (s *Session) OpenOutput(path string, o OutputOptions) (*outfile.Output, error) {
	if path == "-" || outfile.IsStdout(path) {
		switch {
		case s.StdoutClosed:
			return nil, errors.New("stdout is closed (-o FILE writes to a file)")
		case o.Binary && s.StdoutTerminal && !o.Given:
			return nil, Usagef("stdout is a terminal, and a recording is binary: -o FILE writes a file (-o - writes to the terminal anyway)")
		}
		if f, ok := s.out.File(); ok && o.Binary {
			outfile.GrowPipe(f)
		}
		return outfile.NewStream("stdout", s.Stdout), nil
	}
	name := safetext.Quote(path)
	if o.Input != nil {
		if ist, err := o.Input.Stat(); err == nil {
			if ost, err := os.Stat(path); err == nil && os.SameFile(ist, ost) {
				return nil, Usagef("%s is the input: write the output to another file", name)
			}
		}
	}
	out, err := outfile.Open(path, name, outfile.Options{Force: o.Force, Journal: o.Journal}, s.Track)
	if err != nil {
		return nil, FileError(name, err)
	}
	return out, nil
}
