package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
)

// Writer writes a snapshot one program at a time, a line each, so that a
// watcher can add programs as they are loaded and a snapshot cut short
// still holds every program written before.
type Writer struct {
	w      io.Writer
	ids    map[uint32]bool
	err    error // first write error; sticks
	closed bool
}

// NewWriter writes the snapshot's first line (format, system, time).
func NewWriter(w io.Writer, sys bpfprog.System, taken time.Time) (*Writer, error) {
	sw := &Writer{w: w, ids: make(map[uint32]bool)}
	sw.writeLine(header{Header: bpfprog.NewHeader(bpfprog.KindSnapshot), System: sys, Taken: taken.UTC()})
	return sw, sw.err
}

func (sw *Writer) writeLine(v any) {
	if sw.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		sw.err = fmt.Errorf("snapshot: %w", err)
		return
	}
	if _, err := sw.w.Write(append(b, '\n')); err != nil {
		sw.err = fmt.Errorf("writing the snapshot: %w", err)
	}
}

// Add writes one program, in one write. A program id may appear once.
func (sw *Writer) Add(p *bpfprog.Program) error {
	switch {
	case sw.closed:
		return errors.New("snapshot: Add after Close")
	case sw.err != nil:
		return sw.err
	case sw.ids[p.ID]:
		return fmt.Errorf("snapshot: program %d added twice", p.ID)
	}
	if err := p.Check(); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("snapshot: program %d: %w", p.ID, err)
	}
	sw.ids[p.ID] = true
	sw.writeLine(programLine{Program: b})
	return sw.err
}

// Close writes the end line. It does not close the underlying writer.
func (sw *Writer) Close(end End) error {
	if sw.closed {
		return sw.err
	}
	sw.closed = true
	end.Programs = len(sw.ids)
	end.Until = end.Until.UTC()
	sw.writeLine(struct {
		End End `json:"end"`
	}{end})
	return sw.err
}

// Take writes a snapshot of every program src lists now (the running
// kernel: live.Kernel), and returns how many it wrote. A program that
// cannot be read fails the snapshot, whose end line is then not written: a
// snapshot with a program missing would be taken for all there is (a
// program unloaded while it is taken is no error; src leaves it out).
//
// bpfmeta snapshot is Take; bpfmeta watch, which goes on adding programs
// as they are loaded, is watch.StartSnapshot.
func Take(w io.Writer, src bpfprog.Lister) (int, error) {
	sw, err := NewWriter(w, src.System(), time.Now())
	if err != nil {
		return 0, err
	}
	n := 0
	for p, err := range src.All() {
		if err != nil {
			return n, err
		}
		if err := sw.Add(p); err != nil {
			return n, err
		}
		n++
	}
	return n, sw.Close(End{Until: time.Now()})
}
