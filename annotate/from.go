package annotate

import (
	"fmt"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
)

// From is a recording whose programs' metadata FillFrom puts in a Table,
// and the source of programs to take it from when the recording has none.
type From struct {
	// Name is the recording's, in errors ("NAME: error").
	Name string
	// Recording is the recording, open. Reopen opens it again, to be read
	// a second time, and closes the first (whatever it returns, the
	// caller closes the recording last returned); nil when the
	// recording cannot be read again (a stream).
	Recording inject.Recording
	Reopen    func() (inject.Recording, error)
	// Source opens the source of programs inject would read (the
	// running kernel and its journal, a snapshot), with what closes it.
	Source func() (bpfprog.Source, func(), error)
	// SourceNamed takes the metadata from Source even for a recording
	// with BPF_METADATA records: a source the user named (--snapshot).
	SourceNamed bool
}

// Filled is where FillFrom took the metadata from.
type Filled int

const (
	// FromRecords: the recording's BPF_METADATA records (Fill), also when
	// it has none and no loads of programs.
	FromRecords Filled = iota
	// FromSource: those inject would add from the Source (NewInjected),
	// the recording read as inject reads it.
	FromSource
	// NotReread: none. The recording has loads of programs and no
	// BPF_METADATA records, and cannot be read again for the Source's.
	NotReread
)

// FillFrom fills t with the metadata of the recording's programs as
// bpfmeta annotate labels them: the recording's BPF_METADATA records; or,
// when the source is named, or when the recording has none and loads of
// programs, those bpfmeta inject would add from the source, the
// recording read again (Reopen) unless the source is named. An error of
// Reopen is returned as it is; one of reading, or of the source, after
// the recording's name.
func FillFrom(t *Table, f From) (Filled, error) {
	r := f.Recording
	if !f.SourceNamed {
		sum, err := Fill(t, r)
		switch {
		case err != nil:
			return FromRecords, fmt.Errorf("%s: %w", f.Name, err)
		case sum.Records > 0 || sum.Loads == 0:
			return FromRecords, nil
		case f.Reopen == nil:
			return NotReread, nil
		}
		if r, err = f.Reopen(); err != nil {
			return FromSource, err
		}
	}
	if err := fillInjected(t, r, f.Source); err != nil {
		return FromSource, fmt.Errorf("%s: %w", f.Name, err)
	}
	return FromSource, nil
}

// fillInjected fills t from r as inject writes it from the source open
// opens.
func fillInjected(t *Table, r inject.Recording, open func() (bpfprog.Source, func(), error)) error {
	src, closeSrc, err := open()
	if err != nil {
		return err
	}
	defer closeSrc()
	inj := NewInjected(r, src, inject.Options{})
	defer inj.Close()
	_, err = Fill(t, inj)
	return err
}
