package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/writer"
)

// output is where a command writes a recording.
type output struct {
	name string
	file *writer.Output // nil for stdout
	w    io.Writer
	// While a file is written under its temporary name, a signal that
	// ends bpfmeta removes it first (see removeOnSignal).
	mu       sync.Mutex
	sigs     chan os.Signal
	sigsDone chan struct{}
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
	sigs := catchSignals() // from before the temporary file exists
	f, err := writer.Create(path, force, mode)
	if err != nil {
		signal.Stop(sigs)
		// Name the output, not the temporary file next to it that
		// writer.Create failed to make.
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Path != path {
			return nil, fmt.Errorf("%s: cannot create the output: %w", path, pe.Err)
		}
		return nil, err
	}
	o := &output{name: path, file: f, w: f}
	if !f.Regular() {
		signal.Stop(sigs) // no temporary file
		return o, nil
	}
	o.removeOnSignal(sigs)
	return o, nil
}

// catchSignals catches the signals that end bpfmeta (SIGINT, SIGTERM,
// SIGHUP), unless they are ignored (under nohup, SIGHUP stays ignored).
func catchSignals() chan os.Signal {
	sigs := make(chan os.Signal, 1)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			signal.Notify(sigs, sig)
		}
	}
	return sigs
}

// signalGrace is how long a re-raised signal has to end bpfmeta before it
// exits with 128+N instead.
const signalGrace = time.Second

// removeOnSignal makes the caught signals remove the temporary file, then
// end bpfmeta as they would have: an interrupted run leaves nothing behind,
// as a failed one does.
func (o *output) removeOnSignal(sigs chan os.Signal) {
	done := make(chan struct{})
	o.sigs, o.sigsDone = sigs, done
	go func() {
		select {
		case sig := <-sigs:
			o.mu.Lock() // not during a commit
			o.file.Abort()
			signal.Reset(sig)
			s, _ := sig.(syscall.Signal)
			syscall.Kill(os.Getpid(), s)
			time.Sleep(signalGrace)
			os.Exit(128 + int(s))
		case <-done:
		}
	}()
}

// stopSignals ends removeOnSignal once the file is committed or removed.
func (o *output) stopSignals() {
	if o.sigs != nil {
		signal.Stop(o.sigs)
		close(o.sigsDone)
		o.sigs = nil
	}
}

// pipeFormat reports whether the output must be a pipe stream: stdout, a
// FIFO, a socket or a terminal cannot seek to finish a file's header, and
// perf reads "-" as a pipe.
func (o *output) pipeFormat() bool {
	if o.file == nil {
		return true
	}
	if o.file.Regular() {
		return false
	}
	st, err := o.file.Stat()
	if err != nil || st.Mode()&fs.ModeNamedPipe != 0 {
		return true
	}
	_, err = o.file.Seek(0, io.SeekCurrent)
	return err != nil
}

func (o *output) commit() error {
	if o.file == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	defer o.stopSignals()
	if err := o.file.Commit(); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return nil
}

func (o *output) abort() {
	if o.file != nil {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.file.Abort()
		o.stopSignals()
	}
}

// newWriter returns the record writer for copying in to o (writer.New):
// the input's format is kept unless toFile turns a pipe stream written to
// a file into a file-mode recording; a stream output is always a pipe.
func newWriter(in *input, o *output, stderr io.Writer, toFile bool) (writer.RecordWriter, *writer.Pipe, error) {
	s := writer.Setup{
		Layout: in.Layout(),
		Source: in.src,
		Order:  in.ByteOrder(),
		Out:    o.w,
		ToFile: toFile,
		Reader: in.Reader, // records go out from the reader's buffers
	}
	if !o.pipeFormat() {
		s.File = o.file
	}
	w, p, omitted, err := writer.New(s)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", o.name, err)
	}
	for _, f := range omitted {
		if f.Feature != perfdata.FeatAuxtrace && f.Size > 0 { // perf rebuilds the one, the other is empty
			fmt.Fprintf(stderr, "bpfmeta: note: %s: feature %v (%d bytes) is not in the pipe stream: %s\n", in.name, f.Feature, f.Size, f.Why)
		}
	}
	return w, p, nil
}

// notes is where a command prints its notes: stderr, or nowhere with -q.
func notes(c *cli.Context) io.Writer {
	if c.Bool("quiet") {
		return io.Discard
	}
	return c.App.ErrWriter
}
