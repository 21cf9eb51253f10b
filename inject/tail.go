package inject

import (
	"bytes"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/writer"
)

// Recordings synthesized at their tail (perf record --tail-synthesize, and
// --overwrite, which implies it: the flight recorder perf daemon runs).
// perf synthesizes nothing at the start; at the end it writes the records
// of the programs loaded during the recording
// (record__synthesize_final_bpf_metadata(), right after the main loop),
// then FINISHED_INIT and the tail synthesis (write_finished_init(rec,
// true), record__synthesize(rec, true)): the KSYMBOLs and BPF_EVENTs of
// the programs still loaded, each followed by its BPF_METADATA if its id is
// not in perf's tree of bpf_prog_info yet (perf_env__insert_bpf_prog_info()
// refuses an id the side-band thread saw load, and perf 7.2 then writes
// neither the BPF_EVENT nor metadata). A FINISHED_INIT after the records
// perf writes while recording is that one: inject writes the records of
// the programs loaded during the recording before it.
//
// A pipe stream synthesized at its tail has its HEADER_ATTRs in the tail
// synthesis too, right after FINISHED_INIT: the records inject writes
// before it need their size of sample_id trailer, as perf's do, so
// FINISHED_INIT waits for the next record.
//
// With --overwrite, perf reads the kernel's records from backward ring
// buffers, newest first: a program's KSYMBOLs come after its BPF_EVENT.
// A program the kernel loaded is matched to the source's by the addresses
// of its functions, so inject does that at the first record after its
// BPF_EVENT that does not register one more (settleLoad).

// MaxHeld bounds the bytes of the records a pipe stream synthesized at
// its tail has between FINISHED_INIT and its first HEADER_ATTR that
// inject holds back: perf writes one COMM there, if any (the workload's,
// record__synthesize_workload()). Past it, or at any record that is not
// one of those, inject writes the records at the end without a sample_id
// trailer.
const MaxHeld = 64 << 10

// tailInit writes the records at the end before rec, the FINISHED_INIT
// that starts the tail synthesis, or holds rec back (held) if the stream
// has not said what their trailer is yet.
func (j *injector) tailInit(rec *perfdata.Record) (held bool, err error) {
	if len(j.events.Attrs()) == 0 {
		j.hold(rec)
		j.track.Feed(rec)
		return true, nil
	}
	j.end.written = true
	return false, j.writeAtEnd()
}

func (j *injector) hold(rec *perfdata.Record) {
	h := *rec
	h.Raw = bytes.Clone(rec.Raw)
	j.tail.held = append(j.tail.held, &h)
	j.tail.bytes += len(h.Raw)
}

// holds holds rec back after a held FINISHED_INIT if it is a record perf
// synthesizes before the HEADER_ATTRs (one that needs nothing more of
// inject than to be passed on), within MaxHeld.
func (j *injector) holds(rec *perfdata.Record) bool {
	switch t := rec.Header.Type; {
	case t >= perfdata.UserTypeStart, t == perfdata.RecordKSymbol, t == perfdata.RecordBPFEvent, t == perfdata.RecordSample,
		rec.Compressed(), rec.Payload != nil, j.tail.bytes+len(rec.Raw) > MaxHeld:
		return false
	}
	j.hold(rec)
	return true
}

// releaseInit writes the records at the end, then the held FINISHED_INIT
// and the records after it, if one is held.
func (j *injector) releaseInit() error {
	if len(j.tail.held) == 0 {
		return nil
	}
	j.end.written = true
	if err := j.writeAtEnd(); err != nil {
		return err
	}
	for _, rec := range j.tail.held {
		if err := j.w.WriteRecord(rec); err != nil {
			return writer.Blame(j.r, err)
		}
	}
	j.tail.held, j.tail.bytes = nil, 0
	return nil
}

// registers tells a KSYMBOL that registers a BPF function: one that may
// be of the program whose BPF_EVENT came before (loading).
func (j *injector) registers(rec *perfdata.Record) bool {
	if rec.Header.Type != perfdata.RecordKSymbol {
		return false
	}
	k, err := perfdata.DecodeKSymbol(rec.Raw, j.r.ByteOrder())
	return err == nil && k.RegistersBPF()
}

// settleLoad handles the kernel's PROG_LOAD BPF_EVENT of loading, once
// the KSYMBOLs that follow it have come.
func (j *injector) settleLoad() error {
	tp := j.pend.loading
	if tp == nil {
		return nil
	}
	j.pend.loading = nil
	return j.load(tp)
}
