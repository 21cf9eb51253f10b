package inject

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/enum"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Outcome is what became of one program of the recording.
type Outcome int

const (
	// Injected: BPF_METADATA records were added.
	Injected Outcome = iota
	// AlreadyPresent: the recording has this program's records already.
	AlreadyPresent
	// NoMetadata: the program has no bpf_metadata_ variables; perf writes
	// nothing for it either.
	NoMetadata
	// Duplicate: an earlier PROG_LOAD of the recording has the program's
	// id; perf writes the records of an id once, for the first.
	Duplicate
	// TooLarge: the program's metadata has more variables than perf writes
	// a record for (perfdata.MaxBPFMetadataEntries); perf writes nothing.
	TooLarge
	// NotFound: the source has no program with this id: it was unloaded
	// before the source was read, or the source is from another boot.
	NotFound
	// Mismatch: the source's program with this id is another program
	// (other tag, or its functions are not the recording's KSYMBOLs).
	Mismatch
	// Failed: the program's metadata could not be read exactly.
	Failed
)

var outcomeNames = []string{
	Injected:       "injected",
	AlreadyPresent: "already present",
	NoMetadata:     "no metadata",
	Duplicate:      "an id loaded before",
	TooLarge:       "too many variables",
	NotFound:       "not found",
	Mismatch:       "mismatch",
	Failed:         "failed",
}

func (o Outcome) String() string { return enum.String(outcomeNames, o, "Outcome") }

// The facts an outcome tells, each said here once (TestOutcomeFacts has
// their table): GotMetadata ⊂ complete ⊂ Resolved; matched is apart.

// GotMetadata reports whether the output has the program's BPF_METADATA
// records: inject added them (Injected, some of them perhaps there
// already) or the recording had them (AlreadyPresent). It is what a
// program named by bpfmeta inject --require must have (Summary.Unmet).
func (o Outcome) GotMetadata() bool { return o == Injected || o == AlreadyPresent }

// complete reports whether the output lacks nothing of the metadata perf
// would have written for the program: it got its records, it has no
// bpf_metadata_ variables (NoMetadata), or perf writes none for a later
// load of an id (Duplicate). A program whose outcome is not complete is
// Missing one way or another, and its samples are counted.
func (o Outcome) complete() bool { return o.GotMetadata() || o == NoMetadata || o == Duplicate }

// Resolved reports whether the outcome is a definite answer: the
// metadata perf would have written is in the output, or perf writes none
// (complete, or TooLarge: perf writes nothing for a program of too many
// variables, though the program is still Missing its metadata).
func (o Outcome) Resolved() bool { return o.complete() || o == TooLarge }

// matched reports whether the source was found to have the recording's
// program (the same id, tag and addresses) and its metadata read: with
// variables (Injected), without (NoMetadata) or with too many (TooLarge).
// It is asked of the outcome of a lookup (injector.records), before a
// record of the recording can turn one into another.
func (o Outcome) matched() bool { return o == Injected || o == NoMetadata || o == TooLarge }

// Program is what became of one BPF program of the recording: what a
// caller reads of it. It is a value, made when Run returns; what inject
// keeps of a program while it runs is its own.
type Program struct {
	ID      uint32
	Tag     perfdata.BPFTag
	Name    string // the name of its first KSYMBOL in the recording, if any
	Outcome Outcome
	// Missing says whether the output lacks metadata perf would have
	// written for the program, and in which group.
	Missing Missing
	Records int // BPF_METADATA records written for it
	// Err says why, for TooLarge, NotFound, Mismatch and Failed: its text
	// names the program (Why gives it without), and it is there for
	// errors.Is and errors.As (bpfprog.ErrNotFound, bpfprog.ErrTagMismatch,
	// *bpfprog.TooLargeError, *bpfprog.MetadataError). It is nil for the
	// other outcomes.
	Err error
	// Synthesized: perf found the program loaded at the start of the
	// recording (its records follow its BPF_EVENT); otherwise it was loaded
	// during the recording (its records are at the end).
	Synthesized bool
	// Unloaded: the recording saw the program unloaded (PROG_UNLOAD).
	Unloaded bool
	// Unrecorded: the recording has no record of the program; the source
	// says it was loaded while the recording was made (its records are at
	// the end, as perf's side-band thread has them written).
	Unrecorded bool
	// Samples counts the recording's samples in the program's functions,
	// for the programs Missing their metadata (Missing not NotMissing); 0
	// for the others.
	Samples int
	// SamplesShort: Samples may be short of perf report's count. No
	// program lacked metadata when it loaded, and inject had passed
	// SAMPLEs that perf had not delivered yet (its round and the one
	// before) without counting them: perf may count some in it.
	SamplesShort bool
}

// Why says why the program has its outcome, in words that do not name the
// program (a list of programs names each): Err's text, or the outcome's
// name if there is no more to say.
func (p Program) Why() string {
	if p.Err == nil {
		return p.Outcome.String()
	}
	return reasonOf(p.ID, p.Err)
}

// WhyIn says why the program has its outcome as Why does, but for a
// program src does not have, or has another of (NotFound, Mismatch), in
// src's own words (bpfprog.Describer: "no longer loaded", "not in the
// snapshot"): the reason the summary and --require give alike.
func (p Program) WhyIn(src bpfprog.Source) string {
	if d, ok := src.(bpfprog.Describer); ok && (p.Outcome == NotFound || p.Outcome == Mismatch) {
		return d.WhyNot(p.Err, p.Unloaded)
	}
	return p.Why()
}

// Missing is whether the output lacks the metadata perf would have written
// for a program (or, TooLarge, that perf writes none for because it has
// too many variables), and in which group.
type Missing int

const (
	// NotMissing: the output has the program's metadata, or perf writes
	// none (Resolved outcomes but TooLarge).
	NotMissing Missing = iota
	// MissingWithSamples: the recording has samples in the program (what
	// bpfmeta inject --strict fails for).
	MissingWithSamples
	// MissingTransient: loaded and unloaded during the recording without
	// a sample, and the source does not know it: libbpf's probe programs,
	// loaded and unloaded at once by every libbpf loader.
	MissingTransient
	// MissingOther: every other program whose metadata is missing.
	MissingOther
)

var missingNames = []string{
	NotMissing:         "not missing",
	MissingWithSamples: "missing, with samples",
	MissingTransient:   "missing, loaded and unloaded without a sample",
	MissingOther:       "missing",
}

func (m Missing) String() string { return enum.String(missingNames, m, "Missing") }

// program is what inject keeps of a program while it runs: the summary's
// entry, and its working state.
type program struct {
	Program

	tracked *bpftrack.Program
	// present are the names of the recording's records that stand for
	// this program's.
	present []string
	// listed: in Summary.Programs (else counted in Summary.Unlisted once
	// settled); atEnd: has records to write at the end.
	listed, atEnd bool
	// awaiting counts the functions whose KSYMBOLs the program awaits
	// (awaitFuncs), -1 if one came with another name; its records at the
	// end start at j.end.records[firstAtEnd].
	awaiting, firstAtEnd int
	then                 Outcome
	thenErr              error
}

// entry is p's entry in the summary as it stands.
func (p *program) entry() Program {
	e := p.Program
	e.Samples = p.samples()
	e.SamplesShort = p.SamplesShort && !p.Outcome.complete()
	e.Missing = p.missing()
	return e
}

// MaxListed bounds the programs a Summary lists: a recording that loads
// more (a loader's probe programs, loaded and unloaded again and again, or
// a file made to look so) has the others counted in Summary.Unlisted, so
// that inject's memory follows the programs loaded at one time, not the
// length of the recording. An unlisted program's records are written all
// the same; only a BPF_METADATA record the recording has at its end cannot
// be told to be one of an unlisted program's.
const MaxListed = 1 << 14

// Summary is what an injection did.
type Summary struct {
	// Programs has one entry per PROG_LOAD BPF_EVENT, in recording order,
	// then one per Unrecorded program, in id order: the first MaxListed.
	Programs []Program
	// Unlisted counts the programs past the first MaxListed.
	Unlisted Tally
	Injected int // BPF_METADATA records written
	Kept     int // BPF_METADATA records the recording already had
	// UnrecordedSkipped says why the programs loaded during the recording
	// that it has no record of were not looked for ("" if they were).
	UnrecordedSkipped string
	// ClockUnplaced: they were not looked for because the clock perf
	// record -k chose for the recording cannot be tied to the source's
	// load times (bpfprog.ErrClockUnplaced), though they may be there.
	ClockUnplaced bool
	// UnrecordedLimited: the source could not list them within a bound of
	// bpfmeta's (bpfprog.ErrLimit: a journal too large to index).
	UnrecordedLimited bool
	// EarlyFlushes counts the times the samples waiting for perf's order
	// were too many (bpftrack's Tracker.EarlyFlushes): the programs'
	// sample counts may be short.
	EarlyFlushes int

	src bpfprog.Source // what Run looked programs up in: the words of Unmet's reasons (WhyIn)
}

// Unmet says, for each of names that no program of s got metadata for
// (Outcome.GotMetadata), why, beginning with the name: no program of that
// name, or what became of the programs of that name (in the source's
// words, Program.WhyIn). A program is
// named as every --prog and --require names one (perfdata.ProgNamed): by
// id, or by its name with or without bpf_prog_<tag>_. bpfmeta inject
// --require fails on what it returns.
func (s *Summary) Unmet(names ...string) []string {
	var unmet []string
	for _, name := range names {
		var whys []string
		got := false
		for _, p := range s.Programs {
			if !perfdata.ProgNamed(name, p.ID, p.Name) {
				continue
			}
			if p.Outcome.GotMetadata() {
				got = true
				break
			}
			whys = append(whys, fmt.Sprintf("program %d: %s", p.ID, p.WhyIn(s.src)))
		}
		switch {
		case got:
		case len(whys) > 0:
			unmet = append(unmet, name+": no metadata ("+strings.Join(whys, "; ")+")")
		case s.Unlisted.Programs > 0:
			unmet = append(unmet, fmt.Sprintf("%s: not among the first %d programs of the recording (%d more are not listed)", name, len(s.Programs), s.Unlisted.Programs))
		default:
			unmet = append(unmet, name+": the recording has no program of this name")
		}
	}
	return unmet
}

// Tally counts programs by what became of them.
type Tally struct {
	// Programs counts the programs: a later load of an id the recording
	// loaded before (Duplicate, perf records an id once) is counted in
	// Outcomes[Duplicate] only, so that a recording of 6,000,000 loads of
	// one id has 1 program.
	Programs int
	Outcomes [Failed + 1]int // by Outcome
	// Unrecorded counts the Unrecorded programs; UnrecordedInjected those
	// of them that got records.
	Unrecorded, UnrecordedInjected int
	// Missing counts the programs by Missing (Missing[NotMissing] too).
	Missing [MissingOther + 1]int
}

func (t *Tally) add(p *Program) {
	if p.Outcome != Duplicate {
		t.Programs++
	}
	if int(p.Outcome) < len(t.Outcomes) {
		t.Outcomes[p.Outcome]++
	}
	if p.Unrecorded {
		t.Unrecorded++
		if p.Outcome == Injected {
			t.UnrecordedInjected++
		}
	}
	if int(p.Missing) < len(t.Missing) {
		t.Missing[p.Missing]++
	}
}

// Tally counts every program of the recording, listed or not.
func (s *Summary) Tally() Tally {
	t := s.Unlisted
	for i := range s.Programs {
		t.add(&s.Programs[i])
	}
	return t
}

// Unresolved returns the listed programs whose metadata could not be
// determined.
func (s *Summary) Unresolved() []Program {
	var u []Program
	for _, p := range s.Programs {
		if !p.Outcome.Resolved() {
			u = append(u, p)
		}
	}
	return u
}

// Missing returns the listed programs in the groups given, in id order;
// programs of one id in the order of the groups given, then in the
// summary's. Tally counts the unlisted ones too.
func (s *Summary) Missing(groups ...Missing) []Program {
	var out []Program
	for _, g := range groups {
		for _, p := range s.Programs {
			if p.Missing == g && g != NotMissing {
				out = append(out, p)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Program) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// UnrecordedUnlooked reports that the programs loaded elsewhere during
// the recording were not looked for for a reason the user did not choose
// (ClockUnplaced, UnrecordedLimited), which a caller warns of; the others
// (--recorded-only, a recording of another boot) are notes.
func (s *Summary) UnrecordedUnlooked() bool { return s.ClockUnplaced || s.UnrecordedLimited }

// Limited returns the listed programs that lack the metadata perf would
// have written because the source is over a limit of bpfmeta's
// (bpfprog.ErrLimit: a journal too large to index within its bounds or the
// memory budget), in the summary's order. That is not an answer, as "not
// found" is: whatever -v says, a caller names them, and those with samples
// are errors (bpfmeta inject fails on them).
func (s *Summary) Limited() []Program {
	var out []Program
	for _, p := range s.Programs {
		if p.Missing != NotMissing && errors.Is(p.Err, bpfprog.ErrLimit) {
			out = append(out, p)
		}
	}
	return out
}

// missing is the group of Missing p is in.
func (p *program) missing() Missing {
	switch {
	case p.Outcome.complete():
		return NotMissing
	case p.samples() > 0:
		return MissingWithSamples
	case p.Unloaded && p.Outcome == NotFound:
		return MissingTransient
	}
	return MissingOther
}

// setOutcome sets p's outcome and the error that says why (nil for
// Injected, AlreadyPresent, NoMetadata and Duplicate), keeping the count of
// loaded programs whose samples are counted.
func (p *program) setOutcome(o Outcome, err error, j *injector) {
	before := p.Outcome.complete()
	p.Outcome, p.Err = o, err
	if _, loaded := j.progs.byTP[p.tracked]; loaded && before != p.Outcome.complete() {
		if before {
			j.progs.missing++
		} else {
			j.progs.missing--
		}
	}
}

// samples counts the samples in p's functions, as perf report counts them
// (bpftrack's Func.Samples), if the output has no metadata for p; 0
// otherwise.
func (p *program) samples() int {
	if p.Outcome.complete() || p.tracked == nil {
		return 0
	}
	n := 0
	for _, f := range p.tracked.Funcs {
		n += f.Samples
	}
	return n
}

// reasonOf is the text of err, an error about program id, without the
// program's id: the summary names the program in its own words. Errors
// about a program begin with "program <id>: ": bpfprog's (those of
// Source.Lookup and Program.BPFMetadata, and bpfprog.MetadataError) and
// inject's own.
func reasonOf(id uint32, err error) string {
	return strings.TrimPrefix(err.Error(), fmt.Sprintf("program %d: ", id))
}

// unlisted counts p, settled, in Summary.Unlisted.
func (j *injector) unlisted(p *program) {
	e := p.entry()
	j.sum.Unlisted.add(&e)
}
