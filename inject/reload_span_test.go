package inject_test

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// twoLoads lists, besides a listSource's programs, a later load of one of
// their ids (a journal with two loads of an id in the recording's span).
type twoLoads struct {
	listSource
	again *bpfprog.Program
}

func (s twoLoads) All() iter.Seq2[*bpfprog.Program, error] {
	return func(yield func(*bpfprog.Program, error) bool) {
		for p, err := range s.listSource.All() {
			if !yield(p, err) {
				return
			}
			if err == nil && p.ID == s.again.ID && !yield(s.again, nil) {
				return
			}
		}
	}
}

// Two loads of one id in the recording's span that it has no record of
// get the id's records once, for the first, as perf's tree of
// bpf_prog_info keeps one per id (perf_env__insert_bpf_prog_info()):
// "an id gets its records once" (issue 46 item 6).
func TestUnrecordedIDTwice(t *testing.T) {
	const offset = 1000 * time.Nanosecond
	a := prog(1, 0x10, 0xffff1000, 0, true) // loaded before: synthesized
	a.LoadTime = 100 + offset
	b := prog(7, 0x70, 0xffff7000, 0, true) // loaded during, not recorded
	b.LoadTime = 6000 + offset
	b2 := prog(7, 0x71, 0xffff7800, 0, true) // its id again, later
	b2.LoadTime = 7000 + offset
	src := twoLoads{listSource{fakeSource{1: a, 7: b}, offset}, b2}

	in := newStream()
	in.synth(a)
	in.SampleAt(0x1000, 5000)
	in.SampleAt(0x1000, 9000)
	in.rec(perfdata.RecordFinishedRound, nil)
	got, sum := run(t, in.Bytes(), src, inject.Options{})
	if n := bytes.Count(got, []byte(b.Funcs[0].PerfName)); n != 1 {
		t.Errorf("the first load's records %d times, want once", n)
	}
	if bytes.Contains(got, []byte(b2.Funcs[0].PerfName)) {
		t.Error("records for the second load of the id")
	}
	n := 0
	for _, p := range sum.Programs {
		if p.Unrecorded && p.ID == 7 && p.Outcome == inject.Injected {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d unrecorded programs of id 7 injected, want 1: %+v", n, sum.Programs)
	}
}

// undecided lists a listSource's programs, one of them with an error: the
// source lists it but cannot tell its metadata (a journal with two values
// of its load, none read when it was loaded).
type undecided struct {
	listSource
	id  uint32
	err error
}

func (s undecided) All() iter.Seq2[*bpfprog.Program, error] {
	return func(yield func(*bpfprog.Program, error) bool) {
		for p, err := range s.listSource.All() {
			if err == nil && p.ID == s.id {
				err = s.err
			}
			if !yield(p, err) {
				return
			}
		}
	}
}

// A program the recording has no record of that the source lists with an
// error gets no records, and is counted as failed with the error, not
// skipped in silence nor given the metadata listed (issue 46 item 2).
func TestUnrecordedUndecided(t *testing.T) {
	const offset = 1000 * time.Nanosecond
	a := prog(1, 0x10, 0xffff1000, 0, true) // loaded before: synthesized
	a.LoadTime = 100 + offset
	b := prog(7, 0x70, 0xffff7000, 0, true) // loaded during, not recorded
	b.LoadTime = 6000 + offset
	why := errors.New("program 7: two records of its load have different metadata")
	src := undecided{listSource{fakeSource{1: a, 7: b}, offset}, 7, why}

	in := newStream()
	in.synth(a)
	in.SampleAt(0x1000, 5000)
	in.SampleAt(0x1000, 9000)
	in.rec(perfdata.RecordFinishedRound, nil)
	got, sum := run(t, in.Bytes(), src, inject.Options{})
	if bytes.Contains(got, []byte(b.Funcs[0].PerfName)) {
		t.Error("records for a program whose metadata the source cannot tell")
	}
	var found bool
	for _, p := range sum.Programs {
		if p.Unrecorded && p.ID == 7 {
			found = true
			if p.Outcome != inject.Failed || !errors.Is(p.Err, why) {
				t.Errorf("program 7: %v, %v; want failed with the source's error", p.Outcome, p.Err)
			}
		}
	}
	if !found {
		t.Errorf("program 7 not in the summary: %+v", sum.Programs)
	}
}

// limitedList lists a listSource's programs, then ends with err.
type limitedList struct {
	listSource
	err error
}

func (s limitedList) All() iter.Seq2[*bpfprog.Program, error] {
	return func(yield func(*bpfprog.Program, error) bool) {
		for p, err := range s.listSource.All() {
			if !yield(p, err) {
				return
			}
		}
		yield(nil, s.err)
	}
}

// A source that cannot list the programs loaded during the recording
// within a bound of bpfmeta's (a journal too large to index) is said in
// the summary as such, not dropped (issue 46 item 3).
func TestUnrecordedLimited(t *testing.T) {
	const offset = 1000 * time.Nanosecond
	a := prog(1, 0x10, 0xffff1000, 0, true)
	a.LoadTime = 100 + offset
	limit := fmt.Errorf("/var/lib/bpfmeta/h: the journal is too large to index: %w", bpfprog.ErrLimit)
	src := limitedList{listSource{fakeSource{1: a}, offset}, limit}

	in := newStream()
	in.synth(a)
	in.SampleAt(0x1000, 5000)
	in.SampleAt(0x1000, 9000)
	in.rec(perfdata.RecordFinishedRound, nil)
	_, sum := run(t, in.Bytes(), src, inject.Options{})
	if !sum.UnrecordedLimited || !strings.Contains(sum.UnrecordedSkipped, "too large to index") {
		t.Errorf("limited %v, skipped %q", sum.UnrecordedLimited, sum.UnrecordedSkipped)
	}
}
