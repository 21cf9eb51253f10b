package bpfprog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// SnapshotFormatVersion is the version of the snapshot file format this
// package writes and the only one it reads.
const SnapshotFormatVersion = 1

// Snapshot is a record of the programs loaded on one machine at one time. It
// is a Source that answers after the programs are gone and on another
// machine.
//
// The file is one JSON object:
//
//	{
//	  "format_version": 1,
//	  "kernel_release": "6.18.44", "boot_id": "...", "hostname": "...",
//	  "boot_time": "2026-12-02T14:50:01.123Z",
//	  "taken": "2026-12-02T15:37:00Z",
//	  "programs": [ {"id": 97, "tag": "e21be2de8fc54252", ..., "funcs": [...], "metadata": {...}}, ... ]
//	}
//
// with programs in the JSON encoding of Program.
//
// Programs must not change after the first Lookup.
type Snapshot struct {
	Sys      System    // the machine and boot the snapshot was taken on
	Taken    time.Time // when
	Programs []*Program

	indexOnce sync.Once
	index     map[uint32]*Program
}

// snapshotHeader is the file's object without "programs".
type snapshotHeader struct {
	FormatVersion int `json:"format_version"`
	System
	Taken time.Time `json:"taken"`
}

type snapshotFile struct {
	snapshotHeader
	Programs []*Program `json:"programs"`
}

// ErrSnapshotFormat is wrapped by the errors ReadSnapshot returns for input
// that is not a snapshot this package can read.
var ErrSnapshotFormat = errors.New("not a bpfmeta snapshot")

// System describes the machine and boot the snapshot was taken on.
func (s *Snapshot) System() System { return s.Sys }

// Lookup returns the program with id from the snapshot if its tag is tag.
func (s *Snapshot) Lookup(id uint32, tag Tag) (*Program, error) {
	s.indexOnce.Do(func() {
		if s.index != nil {
			return
		}
		s.index = make(map[uint32]*Program, len(s.Programs))
		for _, p := range s.Programs {
			s.index[p.ID] = p
		}
	})
	p, ok := s.index[id]
	if !ok {
		return nil, notFound(id)
	}
	if err := checkTag(id, tag, p.Tag); err != nil {
		return nil, err
	}
	return p, nil
}

// ReadSnapshot reads a snapshot file.
func ReadSnapshot(r io.Reader) (*Snapshot, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("bpfprog: reading snapshot: %w", err)
	}
	// The version decides how to read the rest, so read it first.
	var v struct {
		FormatVersion *int `json:"format_version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("bpfprog: snapshot: %w: %v", ErrSnapshotFormat, err)
	}
	switch {
	case v.FormatVersion == nil:
		return nil, fmt.Errorf("bpfprog: snapshot: %w: no format_version", ErrSnapshotFormat)
	case *v.FormatVersion != SnapshotFormatVersion:
		return nil, fmt.Errorf("bpfprog: snapshot: %w: format_version %d, this bpfmeta reads %d",
			ErrSnapshotFormat, *v.FormatVersion, SnapshotFormatVersion)
	}
	var f snapshotFile
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("bpfprog: snapshot: %w: %v", ErrSnapshotFormat, err)
	}
	s := &Snapshot{Sys: f.System, Taken: f.Taken, Programs: f.Programs,
		index: make(map[uint32]*Program, len(f.Programs))}
	for i, p := range f.Programs {
		if p == nil {
			return nil, fmt.Errorf("bpfprog: snapshot: %w: program %d is null", ErrSnapshotFormat, i)
		}
		if err := checkProgram(p); err != nil {
			return nil, fmt.Errorf("bpfprog: snapshot: %w: %v", ErrSnapshotFormat, err)
		}
		if _, dup := s.index[p.ID]; dup {
			return nil, fmt.Errorf("bpfprog: snapshot: %w: program %d appears twice", ErrSnapshotFormat, p.ID)
		}
		s.index[p.ID] = p
	}
	return s, nil
}

// checkProgram rejects a program a Source must not hand out.
func checkProgram(p *Program) error {
	if md := p.Metadata; md != nil && len(md.ProgNames) != len(p.Funcs) {
		return fmt.Errorf("program %d: %d metadata prog_names for %d functions", p.ID, len(md.ProgNames), len(p.Funcs))
	}
	return nil
}

// WriteSnapshot writes s to w.
func WriteSnapshot(w io.Writer, s *Snapshot) error {
	sw, err := NewSnapshotWriter(w, s.Sys, s.Taken)
	if err != nil {
		return err
	}
	for _, p := range s.Programs {
		if err := sw.Add(p); err != nil {
			return err
		}
	}
	return sw.Close()
}

// SnapshotWriter writes a snapshot one program at a time, so that a watcher
// can add programs as they are loaded. The output is a valid snapshot only
// after Close.
type SnapshotWriter struct {
	w      io.Writer
	ids    map[uint32]bool
	err    error // first write error; sticks
	closed bool
}

// Indentation of the snapshot file.
const (
	snapshotIndent        = "  "
	snapshotProgramPrefix = snapshotIndent + snapshotIndent
)

// NewSnapshotWriter writes the snapshot header (format version, sys, taken) to w.
func NewSnapshotWriter(w io.Writer, sys System, taken time.Time) (*SnapshotWriter, error) {
	sw := &SnapshotWriter{w: w, ids: make(map[uint32]bool)}
	h, err := json.MarshalIndent(snapshotHeader{FormatVersion: SnapshotFormatVersion, System: sys, Taken: taken.UTC()}, "", snapshotIndent)
	if err != nil {
		return nil, fmt.Errorf("bpfprog: snapshot header: %w", err)
	}
	// Reopen the object to append "programs" to it.
	h = bytes.TrimSuffix(h, []byte("\n}"))
	sw.write(h, []byte(",\n"+snapshotIndent+`"programs": [`))
	return sw, sw.err
}

func (sw *SnapshotWriter) write(bs ...[]byte) {
	for _, b := range bs {
		if sw.err != nil {
			return
		}
		if _, err := sw.w.Write(b); err != nil {
			sw.err = fmt.Errorf("bpfprog: writing snapshot: %w", err)
		}
	}
}

// Add writes one program. A program id may appear once.
func (sw *SnapshotWriter) Add(p *Program) error {
	switch {
	case sw.closed:
		return errors.New("bpfprog: snapshot: Add after Close")
	case sw.err != nil:
		return sw.err
	case sw.ids[p.ID]:
		return fmt.Errorf("bpfprog: snapshot: program %d added twice", p.ID)
	}
	if err := checkProgram(p); err != nil {
		return fmt.Errorf("bpfprog: snapshot: %w", err)
	}
	b, err := json.MarshalIndent(p, snapshotProgramPrefix, snapshotIndent)
	if err != nil {
		return fmt.Errorf("bpfprog: snapshot: program %d: %w", p.ID, err)
	}
	sep := ","
	if len(sw.ids) == 0 {
		sep = ""
	}
	sw.ids[p.ID] = true
	sw.write([]byte(sep+"\n"+snapshotProgramPrefix), b)
	return sw.err
}

// Close ends the snapshot. It does not close the underlying writer.
func (sw *SnapshotWriter) Close() error {
	if sw.closed {
		return sw.err
	}
	sw.closed = true
	if len(sw.ids) == 0 {
		sw.write([]byte("]\n}\n"))
	} else {
		sw.write([]byte("\n" + snapshotIndent + "]\n}\n"))
	}
	return sw.err
}
