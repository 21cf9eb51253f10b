package inject

import (
	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
)

// A kernel load whose KSYMBOLs have not all come by its BPF_EVENT (and
// those right after it, settleLoad) awaits them: the kernel emits a load's
// KSYMBOLs and its BPF_EVENT one by one (perf_event_bpf_event(),
// perf_event_bpf_emit_ksymbols()), each into the ring buffer of the CPU
// its loader runs on at that moment, and perf record writes one CPU's
// records after another's, so that a loader that moves between CPUs
// meanwhile leaves the rest of its KSYMBOLs further on in the recording
// (perf's readers sort them by time, ordered_events; inject streams). Its
// records are queued to be written at the end, where perf writes them
// (writeAtEnd); it is a Mismatch until each of its functions has a
// KSYMBOL at its address with one of its names, and then Injected. What
// has not come by the end is a Mismatch, and its records are dropped.

// awaitedFunc is a function of a program that awaits its KSYMBOL.
type awaitedFunc struct {
	p *program
	// fn is the source's function; its record is j.end.records[p.firstAtEnd+i].
	fn bpfprog.Func
	i  int
}

// awaitFuncs makes p, whose records (if any) load queues at the end next,
// await the KSYMBOLs of the functions awaited of sp; outcome and err are
// its outcome once they have come.
func (j *injector) awaitFuncs(p *program, sp *bpfprog.Program, awaited []int, outcome Outcome, err error) {
	p.firstAtEnd = len(j.end.records)
	p.awaiting = len(awaited)
	p.then, p.thenErr = outcome, err
	for _, i := range awaited {
		j.pend.awaited[sp.Funcs[i].Addr] = awaitedFunc{p: p, fn: sp.Funcs[i], i: i}
	}
}

// arrived takes a KSYMBOL that registers f: a function a program may
// await.
func (j *injector) arrived(f *bpftrack.Func) {
	a, ok := j.pend.awaited[f.Addr]
	if !ok {
		return
	}
	delete(j.pend.awaited, f.Addr)
	p := a.p
	if p.awaiting <= 0 {
		return // another function of it had another name
	}
	if f.Name != a.fn.PerfName && f.Name != a.fn.KernelName {
		p.awaiting = -1 // not its function: it stays a Mismatch
		return
	}
	if p.then == Injected && !j.opts.PerfNames {
		// named after the KSYMBOL, as the others are
		j.end.records[p.firstAtEnd+a.i].md.ProgName = f.Name
	}
	p.awaiting--
	if p.awaiting == 0 && p.Outcome == Mismatch {
		p.setOutcome(p.then, p.thenErr, j)
		if p.then.matched() {
			j.progs.matched = true
		}
	}
}

// waits tells a record to write at the end that still waits for a
// KSYMBOL: it is not written.
func (pr *pending) waits() bool { return pr.prog.awaiting != 0 }

// endAwait ends the waiting, at the end: the programs that still await a
// KSYMBOL are a Mismatch.
func (j *injector) endAwait() {
	clear(j.pend.awaited)
}
