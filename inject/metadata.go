package inject

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// load handles a PROG_LOAD BPF_EVENT.
func (j *injector) load(tp *bpftrack.Program) error {
	p := &program{Program: Program{ID: tp.ID, Tag: tp.Tag, Synthesized: tp.Synthesized, Outcome: Injected}, tracked: tp}
	if len(tp.Funcs) > 0 {
		p.Name = tp.Funcs[0].Name
	}
	if j.progs.known[tp.ID] {
		// perf's tree of bpf_prog_info has the id's first load already:
		// perf_env__insert_bpf_prog_info() refuses this one, and perf
		// writes no metadata for it.
		p.Outcome = Duplicate
	}
	// Listed while the list and the functions its programs keep are
	// within bounds.
	if len(j.progs.listed) < MaxListed && j.progs.listedFuncs+len(tp.Funcs) <= bpftrack.MaxFuncs {
		p.listed = true
		j.progs.listedFuncs += len(tp.Funcs)
		j.progs.listed = append(j.progs.listed, p)
		j.progs.known[p.ID] = true
	}
	j.progs.byTP[tp] = p
	if tp.Synthesized {
		// Only perf's own records of a program are followed by its
		// BPF_METADATA: those right after a kernel's BPF_EVENT are at the
		// end (the one before them is the recording's last).
		j.pend.cur = p
	}
	if p.Outcome == Duplicate {
		return nil
	}
	recs, outcome, err := j.records(tp, p)
	p.setOutcome(outcome, err, j)
	p.SamplesShort = !p.Outcome.complete() && j.uncounted != [2]int{}
	if outcome.matched() {
		j.progs.matched = true
	}
	if outcome.matched() || outcome == Mismatch || outcome == Failed {
		j.progs.known[p.ID] = true
	}
	// A record at the end may be one of a listed program's the source
	// could not resolve (claim).
	if p.listed && !tp.Synthesized && outcome != Injected && outcome != NoMetadata {
		for _, f := range tp.Funcs {
			j.progs.claimable[f.Name] = append(j.progs.claimable[f.Name], p)
		}
	}
	p.atEnd = !tp.Synthesized && len(recs) > 0
	for _, pr := range recs {
		if tp.Synthesized {
			pr.part = j.part
			j.pend.after = append(j.pend.after, pr)
		} else if err := j.queueAtEnd(pr); err != nil {
			return err
		}
	}
	if err := j.charge(); err != nil {
		return fmt.Errorf("program %d: %w", p.ID, err)
	}
	return nil
}

// records builds the BPF_METADATA records for program tp (p), or says why
// there are none.
func (j *injector) records(tp *bpftrack.Program, p *program) ([]pending, Outcome, error) {
	sp, err := j.lookup(tp)
	switch {
	case errors.Is(err, bpfprog.ErrNotFound):
		return nil, NotFound, err
	case errors.Is(err, bpfprog.ErrTagMismatch):
		return nil, Mismatch, err
	case err != nil:
		return nil, Failed, err
	}
	if slices.ContainsFunc(sp.Funcs, bpfprog.Func.Hidden) {
		// Names alone are the same in every boot; without its addresses
		// the program cannot be told from another boot's.
		return nil, Failed, fmt.Errorf("program %d: the source has no addresses for its functions (read without CAP_SYSLOG, or with kernel.kptr_restrict): it cannot be matched to the recording's KSYMBOLs", tp.ID)
	}
	names, awaited, err := j.matchFuncs(tp, sp)
	if err != nil {
		return nil, Mismatch, err
	}
	if len(names) > 0 {
		p.Name = names[0]
	}
	out, outcome, err := j.build(p, sp, names)
	if len(awaited) > 0 {
		// a Mismatch until the KSYMBOLs come (awaitFuncs)
		j.awaitFuncs(p, sp, awaited, outcome, err)
		return out, Mismatch, noKSymbol(tp.ID, sp, awaited[0])
	}
	return out, outcome, err
}

// build makes the records of the source's program sp (p), its functions
// named names, or says why perf writes none.
func (j *injector) build(p *program, sp *bpfprog.Program, names []string) ([]pending, Outcome, error) {
	m, entries, outcome, err := metadataOf(sp)
	if outcome != Injected {
		return nil, outcome, err
	}
	var out []pending
	for i, f := range sp.Funcs {
		name := names[i]
		if j.opts.PerfNames {
			name = m.ProgNames[i]
		}
		bm := perfdata.BPFMetadata{ProgName: name, Entries: entries}
		if i == 0 {
			// what Encode checks is the same for every record of a program
			if _, err := bm.Encode(j.r.ByteOrder(), j.r.IDHeaderSize()); err != nil {
				return nil, Failed, fmt.Errorf("program %d: %w", sp.ID, err)
			}
		}
		out = append(out, pending{prog: p, names: bpftrack.Names(names[i], m.ProgNames[i], f.PerfName, f.KernelName), md: bm})
	}
	return out, Injected, nil
}

// matchFuncs matches the source's program sp to the recording's program
// tp: its functions must be the recording's KSYMBOLs, at the same address
// and with one of the two names perf and the kernel give them; names are
// the KSYMBOLs' names. Those of a kernel load may yet come: awaited are
// the indexes of sp's functions whose addresses have no KSYMBOL yet
// (awaitFuncs). perf synthesizes a program's KSYMBOLs before its BPF_EVENT.
func (j *injector) matchFuncs(tp *bpftrack.Program, sp *bpfprog.Program) (names []string, awaited []int, err error) {
	names = make([]string, len(sp.Funcs))
	for i, f := range sp.Funcs {
		k := j.track.Func(f.Addr)
		switch {
		case k == nil && !tp.Synthesized:
			names[i] = f.KernelName
			awaited = append(awaited, i)
		case k == nil || k.Name != f.PerfName && k.Name != f.KernelName:
			return nil, nil, noKSymbol(tp.ID, sp, i)
		default:
			names[i] = k.Name
		}
	}
	return names, awaited, nil
}

func noKSymbol(id uint32, sp *bpfprog.Program, i int) error {
	f := sp.Funcs[i]
	return fmt.Errorf("program %d: no KSYMBOL for its function %d (%s at %#x) in the recording: another boot?", id, i, f.KernelName, f.Addr)
}

// lookup asks the source for program tp: by the whole of its load when
// the source keeps loads of several boots or hosts (bpfprog.Finder), else
// by id and tag.
func (j *injector) lookup(tp *bpftrack.Program) (*bpfprog.Program, error) {
	f, ok := j.src.(bpfprog.Finder)
	if !ok {
		return j.src.Lookup(tp.ID, tp.Tag)
	}
	l := bpfprog.Load{ID: tp.ID, Tag: tp.Tag, Addrs: make([]uint64, len(tp.Funcs)), Time: tp.Time, Clock: j.recordingClock()}
	for i, fn := range tp.Funcs {
		l.Addrs[i] = fn.Addr
	}
	if o, known := j.r.Origin(); known {
		l.Host = o.Hostname
	}
	return f.Find(l)
}

// metadataOf returns a source program's metadata and its entries as a
// record holds them, with outcome Injected; or the outcome that says why
// perf writes none (NoMetadata, TooLarge) or why it cannot be known
// (Failed), with its error.
func metadataOf(sp *bpfprog.Program) (*bpfprog.Metadata, []perfdata.BPFMetadataEntry, Outcome, error) {
	m, err := sp.BPFMetadata()
	var tl *bpfprog.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, nil, TooLarge, err
	case errors.Is(err, bpfprog.ErrNoMetadata):
		return nil, nil, NoMetadata, nil
	case err != nil:
		return nil, nil, Failed, err
	case len(m.ProgNames) != len(sp.Funcs):
		return nil, nil, Failed, fmt.Errorf("program %d: %d functions but %d metadata names", sp.ID, len(sp.Funcs), len(m.ProgNames))
	}
	entries := make([]perfdata.BPFMetadataEntry, len(m.Entries))
	for i, en := range m.Entries {
		entries[i] = perfdata.BPFMetadataEntry{Key: en.Key, Value: en.Value}
	}
	return m, entries, Injected, nil
}
