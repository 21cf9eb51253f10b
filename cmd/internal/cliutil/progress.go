package cliutil

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress is shown once a run has taken ProgressDelay, and redrawn every
// progressInterval at most.
const (
	ProgressDelay    = time.Second
	progressInterval = 200 * time.Millisecond
)

// Progress draws "bpfmeta: 42% of in.data (130 of 310 MB)" on a terminal
// while a file of Size bytes is read, or "bpfmeta: stdin: 130 MB read"
// while a stream of unknown size is; Offset says how far. The zero
// Progress (no Offset) draws nothing.
type Progress struct {
	W      io.Writer // a terminal
	Prefix string    // "bpfmeta"
	Name   string    // the file, as messages name it
	Size   int64     // 0 for a stream
	Offset func() int64

	mu      sync.Mutex // Abort comes from the signal handler
	start   time.Time
	next    time.Time
	shown   bool
	untrack func()
}

// NewProgress is the progress line of reading name, on stderr if it is a
// terminal (else the zero Progress). A signal that ends the run erases it
// first, so that the shell's prompt starts a clean line.
func (s *Session) NewProgress(name string, size int64, offset func() int64) *Progress {
	if !isTerminal(s.Stderr) {
		return &Progress{}
	}
	p := &Progress{W: s.Stderr, Prefix: "bpfmeta", Name: name, Size: size, Offset: offset}
	p.untrack = s.track(p)
	return p
}

// Active reports whether the progress can draw anything.
func (p *Progress) Active() bool { return p.Offset != nil }

// Update redraws the line if it is due.
func (p *Progress) Update() {
	if p.Offset == nil {
		return
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.start.IsZero():
		p.start, p.next = now, now.Add(ProgressDelay)
		return
	case now.Before(p.next):
		return
	}
	p.next = now.Add(progressInterval)
	off := p.Offset()
	if p.Size > 0 {
		fmt.Fprintf(p.W, "\r%s: %3d%% of %s (%d of %d MB)", p.Prefix, 100*off/p.Size, p.Name, off>>20, p.Size>>20)
	} else {
		fmt.Fprintf(p.W, "\r%s: %s: %d MB read\033[K", p.Prefix, p.Name, off>>20)
	}
	p.shown = true
}

// Abort erases the line, if it was drawn (outfile.Aborter: a signal).
func (p *Progress) Abort() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.W, "\r\033[K")
		p.shown = false
	}
}

// Done erases the line, if it was drawn.
func (p *Progress) Done() {
	p.Abort()
	if p.untrack != nil {
		p.untrack()
	}
}
