package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/writer"
)

// Progress is shown only for inputs at least this big, on a terminal.
const (
	progressMinSize  = 64 << 20
	progressInterval = 200 * time.Millisecond
)

// progress draws "bpfmeta: 42% of in.data (130 of 310 MB)" on a terminal's
// stderr while a long file is copied.
type progress struct {
	w     io.Writer
	name  string
	size  int64
	in    *input
	next  time.Time
	shown bool
}

func newProgress(stderr io.Writer, in *input, quiet bool) *progress {
	p := &progress{w: stderr, name: in.name, in: in}
	f, ok := stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) || in.Layout() == nil || in.Layout().Size < progressMinSize {
		return p
	}
	p.size = in.Layout().Size
	return p
}

func (p *progress) wrap(w writer.RecordWriter) writer.RecordWriter {
	if p.size == 0 {
		return w
	}
	return &progressWriter{RecordWriter: w, p: p}
}

type progressWriter struct {
	writer.RecordWriter
	p *progress
	n int
}

func (w *progressWriter) WriteRecord(rec *perfdata.Record) error {
	if w.n++; w.n%4096 == 0 {
		w.p.update()
	}
	return w.RecordWriter.WriteRecord(rec)
}

func (p *progress) update() {
	now := time.Now()
	if now.Before(p.next) {
		return
	}
	p.next = now.Add(progressInterval)
	off := p.in.Offset()
	fmt.Fprintf(p.w, "\rbpfmeta: %3d%% of %s (%d of %d MB)", 100*off/p.size, p.name, off>>20, p.size>>20)
	p.shown = true
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
