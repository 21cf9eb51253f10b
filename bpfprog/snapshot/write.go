package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/doc"
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
	sw.writeLine(header{Header: doc.NewHeader(doc.KindSnapshot), System: sys, Taken: taken.UTC()})
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
	return take(w, src.System(), time.Now(), src, func(p *bpfprog.Program) *bpfprog.Program { return p })
}

// TakePortable is Take for a snapshot to check in beside a recording of
// one's programs (bpfmeta snapshot --portable): it has what inject needs
// to match the recording's programs and write their records (ids, tags,
// names, the functions' addresses and names, the metadata), and nothing
// that says which host, boot or user they are of, or when: no hostname,
// boot id, boot time or clock offset, no time taken, no load times, uids,
// map or BTF ids. Only the kernel release is kept (inject warns of a
// recording of another). inject labels the recording's programs from it
// as from the whole snapshot; the programs the recording has no record of
// it cannot place in time, and says so.
func TakePortable(w io.Writer, src bpfprog.Lister) (int, error) {
	sys := bpfprog.System{KernelRelease: src.System().KernelRelease}
	return take(w, sys, time.Time{}, src, portable)
}

// portable is p without what TakePortable leaves out.
func portable(p *bpfprog.Program) *bpfprog.Program {
	q := *p
	q.LoadTime, q.LoadedAt, q.CreatedByUID, q.BTFID, q.MapIDs = 0, time.Time{}, 0, 0, nil
	if p.Metadata != nil {
		m := *p.Metadata
		m.MapID, m.BTFID = 0, 0
		q.Metadata = &m
	}
	var me *bpfprog.MetadataError
	if errors.As(p.MetadataErr, &me) {
		e := *me
		e.MapID = 0
		q.MetadataErr = &e
	}
	if p.TooLarge != nil {
		e := *p.TooLarge
		e.MapID = 0
		q.TooLarge = &e
	}
	return &q
}

func take(w io.Writer, sys bpfprog.System, taken time.Time, src bpfprog.Lister, keep func(*bpfprog.Program) *bpfprog.Program) (int, error) {
	sw, err := NewWriter(w, sys, taken)
	if err != nil {
		return 0, err
	}
	n := 0
	for p, err := range src.All() {
		if err != nil {
			return n, err
		}
		if err := sw.Add(keep(p)); err != nil {
			return n, err
		}
		n++
	}
	until := time.Now()
	if taken.IsZero() {
		until = time.Time{}
	}
	return n, sw.Close(End{Until: until})
}
