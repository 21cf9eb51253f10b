package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/writer"
)

// output is where a command writes a recording.
type output struct {
	name string
	file *writer.Output // nil for stdout
	w    io.Writer
}

// openOutput opens path for writing ("-" or "" is stdout). The input is
// never overwritten: naming it as the output is an error.
func openOutput(path string, force bool, in *input, stdout io.Writer) (*output, error) {
	if path == "" || path == "-" {
		return &output{name: "stdout", w: stdout}, nil
	}
	if in.file != nil {
		if ist, err := in.file.Stat(); err == nil {
			if ost, err := os.Stat(path); err == nil && os.SameFile(ist, ost) {
				return nil, usagef("%s is the input: write the output to another file", path)
			}
		}
	}
	mode := fs.FileMode(0o600) // as perf record creates perf.data
	if in.file != nil {
		if st, err := in.file.Stat(); err == nil && st.Mode().IsRegular() {
			mode = st.Mode().Perm()
		}
	}
	f, err := writer.Create(path, force, mode)
	if err != nil {
		return nil, err
	}
	return &output{name: path, file: f, w: f}, nil
}

// pipeFormat reports whether the output must be a pipe stream: stdout and
// FIFOs cannot seek to finish a file's header, and perf reads "-" as a pipe.
func (o *output) pipeFormat() bool {
	if o.file == nil {
		return true
	}
	if o.file.Regular() {
		return false
	}
	st, err := o.file.Stat()
	return err != nil || st.Mode()&fs.ModeNamedPipe != 0
}

func (o *output) commit() error {
	if o.file == nil {
		return nil
	}
	if err := o.file.Commit(); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return nil
}

func (o *output) abort() {
	if o.file != nil {
		o.file.Abort()
	}
}

// newWriter returns the record writer for copying in to o: a layout-keeping
// rewrite for file to file, a pipe stream (with the pipe prelude for a file
// input) for pipe output, and a new file for pipe to file.
func newWriter(in *input, o *output) (writer.RecordWriter, *writer.Pipe, error) {
	if o.pipeFormat() {
		p, err := writer.NewPipe(o.w, in.ByteOrder())
		if err != nil {
			return nil, nil, err
		}
		if l := in.Layout(); l != nil {
			if err := p.WritePrelude(l, in.src); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", in.name, err)
			}
		}
		return p, p, nil
	}
	if l := in.Layout(); l != nil && in.Format() == perfdata.FormatFile {
		return writer.NewFile(o.file, in.src, l), nil, nil
	}
	return writer.NewFromPipe(o.file, in.ByteOrder()), nil, nil
}
