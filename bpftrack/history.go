package bpftrack

import (
	"slices"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// goneTally counts the functions of one name gone that History keeps no
// longer one by one (past MaxRecordFuncs of the name), and their samples.
type goneTally struct{ n, samples int }

// keep adds f, a function of a program loaded during the recording, to
// the history.
func (t *Tracker) keep(f *Func) {
	t.history[f.Name] = append(t.history[f.Name], f)
	if _, fn, ok := perfdata.ParseBPFProgName(f.Name); ok {
		t.called[fn] = append(t.called[fn], f)
	}
}

// drop removes f from the history.
func (t *Tracker) drop(f *Func) {
	deleteFunc(t.history, f.Name, f)
	if _, fn, ok := perfdata.ParseBPFProgName(f.Name); ok {
		deleteFunc(t.called, fn, f)
	}
	t.calledCache = nil
	// A Go map that has had many more keys deleted than it holds looks
	// keys up more slowly (ReadMetadata of 280,000 names loaded and gone
	// took 11 times the time of 70,000 without this, 6 times with it, on
	// a shared machine): made again.
	if t.dropped++; t.dropped > 4*len(t.history)+4096 {
		t.history, t.called = remake(t.history), remake(t.called)
		t.goneKept, t.extra = remake(t.goneKept), remake(t.extra)
		t.dropped = 0
	}
}

// remake copies m into a new map.
func remake[V any](m map[string]V) map[string]V {
	n := make(map[string]V, len(m))
	for k, v := range m {
		n[k] = v
	}
	return n
}

// deleteFunc removes f from m[key], and the key with the last.
func deleteFunc(m map[string][]*Func, key string, f *Func) {
	fs := m[key]
	if i := slices.Index(fs, f); i >= 0 {
		fs = slices.Delete(fs, i, i+1)
	}
	if len(fs) == 0 {
		delete(m, key)
	} else {
		m[key] = fs
	}
}

// retire settles a function that may be gone for good: its program gone
// and it no longer live, so that no sample can be its any more.
// History keeps the first MaxRecordFuncs of a name and counts the others
// (a record at the end names them all the same); of those it keeps, the
// oldest go past MaxHistory or MaxNameBytes.
func (t *Tracker) retire(f *Func) {
	p := f.Program
	if !t.opts.History || f.retired || f.live() || p == nil || !p.gone || p.Synthesized {
		return
	}
	f.retired = true
	if t.goneKept[f.Name] >= MaxRecordFuncs {
		x := t.extra[f.Name]
		x.n++
		x.samples += f.Samples
		t.extra[f.Name] = x
		t.drop(f)
		return
	}
	t.goneKept[f.Name]++
	t.gone = append(t.gone, f)
	t.pin(p, 1)
	for t.goneFuncs > MaxHistory || t.goneNames > MaxNameBytes {
		t.forget1()
	}
	if t.goneHead > len(t.gone)/2 && t.goneHead > 1024 {
		t.gone = slices.Delete(t.gone, 0, t.goneHead)
		t.goneHead = 0
	}
}

// forget1 drops the oldest gone function the history keeps: into the
// count of its name's others while others of its name are kept (a
// program loaded again and again keeps its count), else for good, with
// that count.
func (t *Tracker) forget1() {
	f := t.gone[t.goneHead]
	t.gone[t.goneHead] = nil
	t.goneHead++
	t.pin(f.Program, -1)
	t.drop(f)
	x, counted := t.extra[f.Name]
	if t.goneKept[f.Name]--; t.goneKept[f.Name] > 0 {
		if counted {
			x.n++
			x.samples += f.Samples
			t.extra[f.Name] = x
		} else {
			t.forgotten++
		}
		return
	}
	delete(t.goneKept, f.Name)
	delete(t.extra, f.Name)
	t.forgotten += 1 + x.n
}

// pin counts n more (or fewer) gone functions of p the history keeps.
// A kept function keeps its program, and the program all its functions
// (the next function of a record at the end is found through it): the
// bounds count them all, once per program.
func (t *Tracker) pin(p *Program, n int) {
	if p.kept == 0 {
		t.goneFuncs += len(p.Funcs)
		t.goneNames += nameBytes(p.Funcs)
	}
	if p.kept += n; p.kept == 0 {
		t.goneFuncs -= len(p.Funcs)
		t.goneNames -= nameBytes(p.Funcs)
	}
}

// extraOf sums the functions the history counts but does not keep, and
// their samples, of the names of fs (each once).
func (t *Tracker) extraOf(fs []*Func) goneTally {
	var x goneTally
	if len(t.extra) == 0 {
		return x
	}
	var seen []string
	for _, f := range fs {
		if e, ok := t.extra[f.Name]; ok && !slices.Contains(seen, f.Name) {
			seen = append(seen, f.Name)
			x.n += e.n
			x.samples += e.samples
		}
	}
	return x
}
