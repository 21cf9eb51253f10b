package cliutil

import (
	"fmt"
	"io"
	"time"
)

// Progress is shown once a run has taken ProgressDelay, and redrawn every
// ProgressInterval at most.
const (
	ProgressDelay    = time.Second
	ProgressInterval = 200 * time.Millisecond
)

// Progress draws "bpfmeta: 42% of in.data (130 of 310 MB)" on a terminal
// while a file of Size bytes is read; Offset says how far. The zero
// Progress (Size 0) draws nothing.
type Progress struct {
	W      io.Writer // a terminal
	Prefix string    // "bpfmeta"
	Name   string    // the file, as messages name it
	Size   int64
	Offset func() int64

	start time.Time
	next  time.Time
	shown bool
}

// Update redraws the line if it is due.
func (p *Progress) Update() {
	if p.Size <= 0 {
		return
	}
	now := time.Now()
	switch {
	case p.start.IsZero():
		p.start, p.next = now, now.Add(ProgressDelay)
		return
	case now.Before(p.next):
		return
	}
	p.next = now.Add(ProgressInterval)
	off := p.Offset()
	fmt.Fprintf(p.W, "\r%s: %3d%% of %s (%d of %d MB)", p.Prefix, 100*off/p.Size, p.Name, off>>20, p.Size>>20)
	p.shown = true
}

// Done erases the line, if it was drawn.
func (p *Progress) Done() {
	if p.shown {
		fmt.Fprint(p.W, "\r\033[K")
	}
}
