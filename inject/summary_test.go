package inject_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
)

// TestSummaryMissing: Missing lists the programs of the groups asked for
// by id, a program of one id in the order of the groups, then of the
// summary; Tally counts them by group, unlisted ones too.
func TestSummaryMissing(t *testing.T) {
	sum := &inject.Summary{
		Programs: []inject.Program{
			{ID: 5, Outcome: inject.NotFound, Missing: inject.MissingOther, Name: "a"},
			{ID: 3, Outcome: inject.Failed, Missing: inject.MissingWithSamples},
			{ID: 5, Outcome: inject.NotFound, Missing: inject.MissingWithSamples},
			{ID: 1, Outcome: inject.NotFound, Missing: inject.MissingTransient},
			{ID: 2, Outcome: inject.Injected},
			{ID: 5, Outcome: inject.Mismatch, Missing: inject.MissingOther, Name: "b"},
		},
		Unlisted: inject.Tally{Programs: 1, Missing: [inject.MissingOther + 1]int{inject.MissingTransient: 1}},
	}
	ids := func(ps []inject.Program) string {
		s := ""
		for _, p := range ps {
			s += fmt.Sprintf(" %d%s/%v", p.ID, p.Name, p.Missing)
		}
		return s
	}
	for _, tc := range []struct {
		groups []inject.Missing
		want   string
	}{
		{[]inject.Missing{inject.MissingWithSamples, inject.MissingOther}, " 3/missing, with samples 5/missing, with samples 5a/missing 5b/missing"},
		{[]inject.Missing{inject.MissingOther, inject.MissingWithSamples}, " 3/missing, with samples 5a/missing 5b/missing 5/missing, with samples"},
		{[]inject.Missing{inject.MissingTransient}, " 1/missing, loaded and unloaded without a sample"},
		{[]inject.Missing{inject.NotMissing}, ""},
		{nil, ""},
	} {
		if got := ids(sum.Missing(tc.groups...)); got != tc.want {
			t.Errorf("Missing(%v) =%s, want%s", tc.groups, got, tc.want)
		}
	}
	tl := sum.Tally()
	if want := [...]int{1, 2, 2, 2}; tl.Missing != want || tl.Programs != 7 {
		t.Errorf("tally %+v, want %d programs, missing %v", tl, 7, want)
	}
}

// TestSummaryLimited: Limited lists the programs missing because the
// source is over a limit of bpfmeta's (bpfprog.ErrLimit, wrapped), and no
// other: not those with another error, nor a program that got metadata
// whose error says a limit.
func TestSummaryLimited(t *testing.T) {
	limit := fmt.Errorf("journal /j: too large to index: %w", bpfprog.ErrLimit)
	sum := &inject.Summary{Programs: []inject.Program{
		{ID: 1, Outcome: inject.NotFound, Missing: inject.MissingWithSamples, Err: limit, Samples: 3},
		{ID: 2, Outcome: inject.NotFound, Missing: inject.MissingOther, Err: errors.New("not in the journal")},
		{ID: 3, Outcome: inject.NotFound, Missing: inject.MissingTransient, Err: limit},
		{ID: 4, Outcome: inject.Injected, Err: limit},
		{ID: 5, Outcome: inject.Failed, Missing: inject.MissingOther, Err: bpfprog.ErrLimit},
	}}
	var got []uint32
	for _, p := range sum.Limited() {
		got = append(got, p.ID)
	}
	if want := []uint32{1, 3, 5}; !slices.Equal(got, want) {
		t.Errorf("Limited: ids %v, want %v", got, want)
	}
}

// TestUnrecordedUnlooked: the programs loaded elsewhere not looked for are
// a warning when the user did not choose it: the clock unplaced, a limit.
func TestUnrecordedUnlooked(t *testing.T) {
	for _, c := range []struct {
		sum  inject.Summary
		want bool
	}{
		{inject.Summary{}, false},
		{inject.Summary{UnrecordedSkipped: "--recorded-only"}, false},
		{inject.Summary{UnrecordedSkipped: "clock", ClockUnplaced: true}, true},
		{inject.Summary{UnrecordedSkipped: "limit", UnrecordedLimited: true}, true},
	} {
		if got := c.sum.UnrecordedUnlooked(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.sum, got, c.want)
		}
	}
}

// describer is a source that words why it lacks a program.
type describer struct{ *bpfprog.List }

func (describer) Describe() string { return "the test source" }
func (describer) WhyNot(err error, unloaded bool) string {
	if unloaded {
		return "gone from the test source"
	}
	return "not in the test source"
}
func (describer) Hint() string { return "" }

// TestWhyIn: a program the source lacks, or has another of, is told in
// the source's words; any other outcome, and any source that does not
// word it, by Why.
func TestWhyIn(t *testing.T) {
	src := describer{&bpfprog.List{}}
	notFound := inject.Program{ID: 3, Outcome: inject.NotFound, Err: fmt.Errorf("program 3: %w", bpfprog.ErrNotFound)}
	for _, c := range []struct {
		p    inject.Program
		src  bpfprog.Source
		want string
	}{
		{notFound, src, "not in the test source"},
		{inject.Program{ID: 3, Outcome: inject.Mismatch, Unloaded: true, Err: errors.New("program 3: tag")}, src, "gone from the test source"},
		{inject.Program{ID: 3, Outcome: inject.Failed, Err: errors.New("program 3: EPERM")}, src, "EPERM"},
		{notFound, &bpfprog.List{}, "no such BPF program"},
	} {
		if got := c.p.WhyIn(c.src); got != c.want {
			t.Errorf("%v in %T: %q, want %q", c.p.Outcome, c.src, got, c.want)
		}
	}
}
