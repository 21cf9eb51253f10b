package inject

import (
	"fmt"
	"slices"

	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/writer"
)

// existing notes a BPF_METADATA record the recording already has. perf
// writes a program's records right after its BPF_EVENT or at the end, so
// the record stands, by position, for one record inject would add: of the
// program whose BPF_EVENT it follows, or else of a program loaded during
// the recording. Its name alone does not say which program: two loads of
// one object have the same names, and may have other metadata.
//
// In a directory recording the records at the end of its first file come
// before the data files that load their programs, so their names are kept
// until the end; forgetting one would make inject write its record again,
// so past MaxAtEnd of them, or MaxAtEndBytes of names, it is an error.
//
// The records right after a BPF_EVENT end at the first that is not one of
// its program's: the records at the end follow those of the recording's
// last BPF_EVENT, if nothing else came between (perf 7.2 recording a
// command that makes no other record, or a recording cut short). Taking
// them for the BPF_EVENT's program would make inject write them again.
func (j *injector) existing(name string) error {
	j.sum.Kept++
	if j.pend.cur != nil {
		if k := slices.IndexFunc(j.pend.after, func(p pending) bool { return slices.Contains(p.names, name) }); k >= 0 {
			j.stands(j.pend.after[k].prog, name)
			j.pend.after = slices.Delete(j.pend.after, k, k+1)
			return nil
		}
		// A record due at the end for a program the source has is that
		// one before it is a record the source could not resolve: only
		// a damaged recording has one such record right after another
		// program's BPF_EVENT, and inject writes its own there when that
		// BPF_EVENT is the recording's last.
		if j.cancelAtEnd(name) {
			j.pend.cur = nil
			return nil
		}
		if j.claim(j.pend.cur, name) {
			return nil
		}
		j.pend.cur = nil // record writes the program's records still to write first
	}
	if j.dir && j.part == 0 {
		switch {
		case len(j.end.deferred) == MaxAtEnd:
			return fmt.Errorf("%w (%d records at the end of a directory recording's first file)", ErrTooMany, MaxAtEnd)
		case j.end.deferredBytes+len(name) > MaxAtEndBytes:
			return fmt.Errorf("%w (%d MiB of names of records at the end of a directory recording's first file)", ErrTooMany, MaxAtEndBytes>>20)
		}
		j.end.deferred = append(j.end.deferred, name)
		j.end.deferredBytes += len(name)
		return j.charge()
	}
	return j.atEndRecord(name)
}

// stands notes that the recording's record named name is one of
// program p's.
func (j *injector) stands(p *program, name string) {
	p.setOutcome(AlreadyPresent, nil, j)
	p.present = append(p.present, name)
}

// claim takes the recording's record named name for program p, which the
// source could not resolve, if it is one of that program's KSYMBOLs not
// claimed yet: the recording resolves the program.
func (j *injector) claim(p *program, name string) bool {
	if slices.Contains(p.present, name) || !slices.ContainsFunc(p.tracked.Funcs, func(f *bpftrack.Func) bool { return f.Name == name }) {
		return false
	}
	if p.Outcome.complete() && p.Outcome != AlreadyPresent {
		return false
	}
	j.stands(p, name)
	return true
}

func (j *injector) flushAfter() error {
	for _, p := range j.pend.after {
		if err := j.write(p); err != nil {
			return err
		}
	}
	j.pend.after = j.pend.after[:0]
	return nil
}

func (j *injector) write(p pending) error {
	raw, err := p.md.Encode(j.r.ByteOrder(), j.r.IDHeaderSize())
	if err != nil {
		return err // records checked it for the program's first record
	}
	rec := perfdata.Record{
		Offset: -1,
		Outer:  -1,
		Header: perfdata.DecodeEventHeader(raw, j.r.ByteOrder()),
		Raw:    raw,
		Part:   p.part,
	}
	if err := j.w.WriteRecord(&rec); err != nil {
		return &writer.WriteError{Err: err}
	}
	j.sum.Injected++
	p.prog.Records++
	if p.prog.Outcome == AlreadyPresent {
		p.prog.Outcome = Injected // some of its records were there, the others are new
	}
	return nil
}
