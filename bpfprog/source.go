package bpfprog

import (
	"fmt"
	"iter"
	"time"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Source is where programs are looked up: the running kernel
// (bpfprog/live), a snapshot file (bpfprog/snapshot), or a List.
//
// A tag identifies a program's instructions, not the contents of its maps:
// the same object rebuilt with another bpf_metadata_version keeps its tag. An
// id is unique within one boot only. So a Source answers for the machine and
// boot that System describes, and a caller must check that a recording was
// made there before trusting a match.
type Source interface {
	// Lookup returns the program with the given id if its whole-program tag
	// (the BPF_EVENT tag) is tag. Otherwise the error wraps ErrNotFound (no
	// program with that id) or is a *TagMismatchError (ErrTagMismatch: the
	// id belongs to another program).
	Lookup(id uint32, tag perfdata.BPFTag) (*Program, error)
	// System describes the machine and boot the programs belong to.
	System() System
}

// Lister is a Source that can also list its programs, in ascending id
// order: the running kernel, a snapshot file and a List are. inject uses it for the programs loaded
// during a recording that has no record of them.
type Lister interface {
	Source
	All() iter.Seq2[*Program, error]
}

// A LoadLister is a Lister that lists the programs loaded within a span of
// time without reading the others: a snapshot, whose index keeps every
// program's load time. inject looks for the programs loaded during a
// recording this way when a source can, so that it reads those, not every
// program a long watch journal holds.
type LoadLister interface {
	Lister
	// LoadedBetween yields, in ascending id order, the programs whose
	// LoadTime is within [from, to] (LoadClock.Span); a program with an
	// error is one whose metadata the source cannot tell, an error alone
	// ends the list.
	LoadedBetween(from, to time.Duration) iter.Seq2[*Program, error]
}

// A Describer is a Source that says, in its user's words, what it is and
// why it lacks a program: inject's summary and warnings name a source only
// through it, so that a new kind of source needs nothing in the command
// line but the flag that opens it.
type Describer interface {
	Source
	// Describe names the source: "the running kernel", "the snapshot".
	Describe() string
	// WhyNot says why the source has no program for a load of a
	// recording, or another: err is the error the lookup returned (it
	// wraps ErrNotFound or ErrTagMismatch) or the one that says the
	// program's functions are not the recording's; unloaded reports
	// whether the recording saw the program unloaded.
	WhyNot(err error, unloaded bool) string
	// Hint says how the metadata of a program the source lacks can be
	// had another time.
	Hint() string
}

// A Noter is a Source with something to say before it is used (a
// snapshot whose writer did not finish). Each note is a predicate of the
// name the caller gives the source: "is an incomplete snapshot: ...".
type Noter interface {
	Source
	Notes() []string
}

// A Reporter is a Source with something to say once it was used (how many
// programs came from where, which it no longer had): sentences a summary
// prints after its own.
type Reporter interface {
	Source
	Report() []string
}

// A Load is what a recording says of one load of a program, for a source
// that keeps loads of several boots or machines (a journal), whose id and
// tag alone do not tell them apart.
type Load struct {
	ID  uint32
	Tag perfdata.BPFTag
	// Addrs are the addresses of the program's functions, from the
	// recording's KSYMBOLs, main function first.
	Addrs []uint64
	// Host is the recording's HEADER_HOSTNAME; "" if it has none.
	Host string
	// Time is when the record that names the load was written, on the
	// recording's Clock; 0 if it has no time (perf's synthesized records).
	Time  uint64
	Clock RecordingClock
}

// A Finder is a Source that keeps the loads of several boots or machines
// (a journal with a tree of hosts), not only of the one System describes.
type Finder interface {
	Source
	// Find finds a program by the whole of a recording's load, not only
	// by id and tag: it returns the one program that is that load, or an
	// error wrapping ErrNotFound (none, or more than one that could be:
	// it does not guess) or ErrTagMismatch. inject asks a Finder through
	// Find instead of Lookup.
	Find(l Load) (*Program, error)
	// HasHost reports whether the source has the programs of the machine
	// named hostname: a recording of another machine than System's is no
	// mistake when it has.
	HasHost(hostname string) bool
}

// System identifies a machine and one boot of it.
type System struct {
	KernelRelease string `json:"kernel_release"` // uname -r, as perf's HEADER_OSRELEASE
	// BootID is /proc/sys/kernel/random/boot_id: it changes on every boot.
	BootID   string `json:"boot_id"`
	Hostname string `json:"hostname"` // as perf's HEADER_HOSTNAME
	// BootTime is when the machine booted (now minus CLOCK_BOOTTIME), so
	// that a program's LoadTime can be shown as a date, and placed in a
	// recording whose clock is tied to the time of day (ClockOf).
	BootTime time.Time `json:"boot_time"`
	// PerfClockOffset is CLOCK_BOOTTIME minus perf's clock (the clock of a
	// recording's timestamps) when the system was read, so that a
	// program's LoadTime can be placed in a recording of the same boot
	// made without perf record -k (ClockOf); 0 when it could not be
	// measured (perfevent.PerfClockOffset).
	PerfClockOffset time.Duration `json:"perf_clock_offset_ns,omitempty"`
}

// LoadedAt is when p was loaded, on the clock of the system it was read on.
func (s System) LoadedAt(p *Program) time.Time {
	return s.BootTime.Add(p.LoadTime)
}

// CheckTag is the error a Source returns for program id when the tag it
// was asked for (want) is not the program's (got): a *TagMismatchError; nil
// when they agree.
func CheckTag(id uint32, want, got perfdata.BPFTag) error {
	if want != got {
		return &TagMismatchError{ID: id, Want: want, Got: got}
	}
	return nil
}

// NotFound is the error a Source returns when it has no program id.
func NotFound(id uint32) error {
	return fmt.Errorf("program %d: %w", id, ErrNotFound)
}
