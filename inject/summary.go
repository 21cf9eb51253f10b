package inject

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/bpfmeta/bpfmeta/bpftrack"
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

func (o Outcome) String() string {
	switch o {
	case Injected:
		return "injected"
	case AlreadyPresent:
		return "already present"
	case NoMetadata:
		return "no metadata"
	case Duplicate:
		return "an id loaded before"
	case TooLarge:
		return "too many variables"
	case NotFound:
		return "not found"
	case Mismatch:
		return "mismatch"
	case Failed:
		return "failed"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Resolved reports whether the outcome is a definite answer: the
// metadata perf would have written is in the output, or perf writes none.
func (o Outcome) Resolved() bool { return o <= TooLarge }

// Program is what inject did for one BPF program loaded in the recording.
type Program struct {
	ID      uint32
	Tag     perfdata.BPFTag
	Name    string // the name of its first KSYMBOL in the recording, if any
	Outcome Outcome
	Records int   // BPF_METADATA records written for it
	Err     error // why, for TooLarge, NotFound, Mismatch and Failed
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
	// for the programs whose metadata is not in the output (Outcome not
	// Injected or AlreadyPresent); 0 for the others.
	Samples int

	tracked *bpftrack.Program
	// present are the names of the recording's records that stand for
	// this program's.
	present []string
	// listed: in Summary.Programs (else counted in Summary.Unlisted once
	// settled); atEnd: has records to write at the end.
	listed, atEnd bool
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
	Programs []*Program
	// Unlisted counts the programs past the first MaxListed.
	Unlisted Tally
	Injected int // BPF_METADATA records written
	Kept     int // BPF_METADATA records the recording already had
	// UnrecordedSkipped says why the programs loaded during the recording
	// that it has no record of were not looked for ("" if they were).
	UnrecordedSkipped string
}

// Tally counts programs by what became of them.
type Tally struct {
	Programs int
	Outcomes [Failed + 1]int // by Outcome
	// Unrecorded counts the Unrecorded programs; UnrecordedInjected those
	// of them that got records.
	Unrecorded, UnrecordedInjected int
	// WithSamples, Transient and Others count the programs Missing
	// returns, by group.
	WithSamples, Transient, Others int
}

func (t *Tally) add(p *Program) {
	t.Programs++
	if int(p.Outcome) < len(t.Outcomes) {
		t.Outcomes[p.Outcome]++
	}
	if p.Unrecorded {
		t.Unrecorded++
		if p.Outcome == Injected {
			t.UnrecordedInjected++
		}
	}
	switch p.missing() {
	case withSamples:
		t.WithSamples++
	case transient:
		t.Transient++
	case other:
		t.Others++
	}
}

// Tally counts every program of the recording, listed or not.
func (s *Summary) Tally() Tally {
	t := s.Unlisted
	for _, p := range s.Programs {
		t.add(p)
	}
	return t
}

// Unresolved returns the listed programs whose metadata could not be
// determined.
func (s *Summary) Unresolved() []*Program {
	var u []*Program
	for _, p := range s.Programs {
		if !p.Outcome.Resolved() {
			u = append(u, p)
		}
	}
	return u
}

// missingGroup is the group Missing puts a program in.
type missingGroup int

const (
	notMissing missingGroup = iota
	withSamples
	transient
	other
)

func (p *Program) missing() missingGroup {
	switch {
	case p.Outcome.Resolved() && p.Outcome != TooLarge:
		return notMissing
	case p.Samples > 0:
		return withSamples
	case p.Unloaded && p.Outcome == NotFound:
		return transient
	}
	return other
}

// Missing returns the listed programs whose metadata perf would have
// written and the output does not have (or, TooLarge, that perf writes
// none for because it has too many variables), in id order, in three
// groups: withSamples, those with samples in the recording (what --strict
// fails for); transient, those loaded and unloaded during the recording
// without a sample that the source does not know (libbpf's probe programs,
// loaded and unloaded at once by every libbpf loader); and others. Tally
// counts them all.
func (s *Summary) Missing() (withSamples, transient, others []*Program) {
	groups := [...]*[]*Program{nil, &withSamples, &transient, &others}
	for _, p := range s.Programs {
		if g := groups[p.missing()]; g != nil {
			*g = append(*g, p)
		}
	}
	for _, ps := range [][]*Program{withSamples, transient, others} {
		slices.SortStableFunc(ps, func(a, b *Program) int { return cmp.Compare(a.ID, b.ID) })
	}
	return withSamples, transient, others
}

// hasMetadata: the output has the program's metadata, or perf writes none.
func (p *Program) hasMetadata() bool {
	switch p.Outcome {
	case Injected, AlreadyPresent, NoMetadata, Duplicate:
		return true
	}
	return false
}

// setOutcome sets p's outcome, keeping the count of loaded programs whose
// samples are counted.
func (p *Program) setOutcome(o Outcome, err error, j *injector) {
	before := p.hasMetadata()
	p.Outcome, p.Err = o, err
	if _, loaded := j.byTP[p.tracked]; loaded && before != p.hasMetadata() {
		if before {
			j.missing++
		} else {
			j.missing--
		}
	}
	if p.hasMetadata() {
		p.Samples = 0
	}
}
