package journal

import (
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Source is the running kernel as a bpfprog.Source, with a journal for
// the programs it no longer has: a recording's program is taken from the
// kernel while it is the same load (the same id, tag and function
// addresses), and from the journal (Journal.Find) when it is gone. It
// lists (All) what the kernel lists, and says (Report) how many programs
// came from the journal and which had fallen out of it.
type Source struct {
	kernel bpfprog.Lister
	j      *Journal // nil: the kernel alone
	// boot is the kernel's boot id once the kernel had one of the
	// recording's loads: the journal's must then be of that boot.
	boot string
	// foreign: the journal gave a program of another boot than the
	// kernel's: the recording is not of this boot, and the kernel's
	// programs are not listed for it.
	foreign bool
	// fromJournal counts the programs the journal gave whose metadata
	// perf writes; withoutMetadata those it gave that have none (or none
	// known exactly).
	fromJournal, withoutMetadata int

	fellOut  []uint32 // the first maxFellOutListed
	nFellOut int
	// maybeDamaged counts the programs not found that a damaged record
	// of the journal may have been.
	maybeDamaged int
	// maybeLost counts the programs not found whose load the journal
	// service could not journal (a Lost record of the journal).
	maybeLost int
}

// maxFellOutListed is how many programs that fell out of the journal
// Report names; the count is exact.
const maxFellOutListed = 20

// WithKernel is the kernel k, and the journal j for the programs k no
// longer has (nil: none).
func WithKernel(k bpfprog.Lister, j *Journal) *Source { return &Source{kernel: k, j: j} }

// System is the kernel's.
func (s *Source) System() bpfprog.System { return s.kernel.System() }

// Lookup is the kernel's: without the load's addresses and host, the
// journal cannot tell its loads apart (Find).
func (s *Source) Lookup(id uint32, tag perfdata.BPFTag) (*bpfprog.Program, error) {
	return s.kernel.Lookup(id, tag)
}

// All lists the kernel's programs, unless the journal showed that the
// recording is of another boot.
func (s *Source) All() iter.Seq2[*bpfprog.Program, error] {
	if s.foreign {
		return func(func(*bpfprog.Program, error) bool) {}
	}
	return s.kernel.All()
}

// LoadedBetween yields, in ascending id order, the programs loaded within
// [from, to] (CLOCK_BOOTTIME) in the kernel's boot: those the kernel has,
// and those of the journal of its host and boot that it no longer has
// (perf's side-band thread saw them all while it recorded); a program of
// the journal whose metadata it cannot tell comes with its error. Nothing when
// the journal showed that the recording is of another boot.
func (s *Source) LoadedBetween(from, to time.Duration) iter.Seq2[*bpfprog.Program, error] {
	kernel := func(yield func(*bpfprog.Program, error) bool) {
		for p, err := range s.All() {
			if err != nil || p.LoadTime >= from && p.LoadTime <= to {
				if !yield(p, err) {
					return
				}
			}
		}
	}
	if s.j == nil || s.foreign {
		return kernel
	}
	sys := s.kernel.System()
	return func(yield func(*bpfprog.Program, error) bool) {
		next, stop := iter.Pull2(iter.Seq2[*bpfprog.Program, error](kernel))
		defer stop()
		kp, kerr, kok := next()
		for jp, jerr := range s.j.LoadedBetween(sys.Hostname, sys.BootID, from, to) {
			if jp == nil {
				yield(nil, jerr)
				return
			}
			// the kernel's first, in id order; its program of an id is
			// the journal's (ids are not reused within a boot)
			id := jp.ID
			for kok && (kerr != nil || kp.ID <= id) {
				if kerr == nil && kp.ID == id {
					jp = nil
				}
				if !yield(kp, kerr) {
					return
				}
				kp, kerr, kok = next()
			}
			if jp != nil {
				if !yield(jp, jerr) {
					return
				}
			}
		}
		for ; kok; kp, kerr, kok = next() {
			if !yield(kp, kerr) {
				return
			}
		}
	}
}

// Find returns the kernel's program if it is the load l, else the
// journal's (Journal.Find), else the kernel's error, or its program of
// l's id and tag that is another load (whose addresses the caller finds
// are not the recording's).
func (s *Source) Find(l bpfprog.Load) (*bpfprog.Program, error) {
	kp, kerr := s.kernel.Lookup(l.ID, l.Tag)
	if kerr == nil && sameAddrs(kp, l.Addrs) {
		s.boot = s.kernel.System().BootID
		return kp, nil
	}
	if s.j == nil {
		return kp, kerr
	}
	jp, boot, jerr := s.j.find(l, s.boot)
	switch {
	case jerr == nil:
		// what Report counts is what inject writes records of
		if _, err := jp.BPFMetadata(); err == nil {
			s.fromJournal++
		} else {
			s.withoutMetadata++
		}
		if boot != s.kernel.System().BootID {
			s.foreign = true
		}
		return jp, nil
	case errors.Is(jerr, ErrDropped):
		if s.nFellOut++; len(s.fellOut) < maxFellOutListed {
			s.fellOut = append(s.fellOut, l.ID)
		}
		return nil, jerr
	case errors.Is(jerr, ErrDamaged):
		s.maybeDamaged++
		return nil, jerr
	case errors.Is(jerr, ErrLost):
		s.maybeLost++
		return nil, jerr
	case errors.Is(jerr, ErrAmbiguous), !errors.Is(jerr, bpfprog.ErrNotFound):
		return nil, jerr
	case kerr == nil:
		return kp, nil // another load of the id: the caller says so
	}
	return nil, fmt.Errorf("%w; %v", kerr, jerr)
}

// HasHost reports whether the journal has host's programs.
func (s *Source) HasHost(host string) bool { return s.j != nil && s.j.Host(host) != nil }

// Describe names the source in messages.
func (s *Source) Describe() string { return "the running kernel" }

// WhyNot says why neither the kernel nor the journal had the program.
func (s *Source) WhyNot(err error, unloaded bool) string {
	switch {
	case errors.Is(err, ErrDropped):
		return "unloaded, and fell out of the journal: its size limit dropped its load"
	case errors.Is(err, ErrAmbiguous):
		return "unloaded, and the journal cannot tell which of its records it is: " + reason(err)
	case errors.Is(err, ErrLost):
		return "unloaded, and not in the journal: " + reason(err)
	case errors.Is(err, ErrDamaged):
		return "unloaded, and not in the journal; a damaged record of it could have been it (see the journal's damaged records above)"
	case errors.Is(err, ErrLimit):
		return "unloaded, and the journal could not be read: " + reason(err)
	case !errors.Is(err, bpfprog.ErrNotFound):
		return "its id is another program's now (it was unloaded, and the id reused), and the journal has not this load"
	case s.j == nil && unloaded:
		return "unloaded during the recording, before inject could read it, and no journal keeps it (bpfmeta-watch.service, or bpfmeta watch -o snap.jsonl -- perf record ...)"
	case s.j == nil:
		return "no longer loaded"
	case unloaded:
		return "unloaded during the recording, and not in the journal"
	}
	return "no longer loaded, and not in the journal"
}

// Hint says how to keep the metadata of programs that are unloaded.
func (s *Source) Hint() string {
	if s.j == nil {
		return "the metadata of a program unloaded before inject is kept by the journal service (systemctl enable --now bpfmeta-watch.service), or by a snapshot: bpfmeta watch -o snap.jsonl -- perf record ..., then inject --snapshot snap.jsonl"
	}
	return "a program not in the journal was loaded and unloaded while the journal service was not running (or its journal is of another host: --journal DIR); bpfmeta programs --journal DIR lists what it has"
}

// Report says how many programs came from the journal, and which fell out
// of it.
func (s *Source) Report() []string {
	var out []string
	if s.fromJournal > 0 || s.withoutMetadata > 0 {
		line := fmt.Sprintf("the metadata of %d unloaded %s came from the journal %s", s.fromJournal, plural(s.fromJournal, "program", "programs"), s.j.Path)
		if s.withoutMetadata > 0 {
			line += fmt.Sprintf(" (%d more found in it have no metadata perf writes)", s.withoutMetadata)
		}
		out = append(out, line)
	}
	for _, name := range s.hosts() {
		n, where := s.j.Host(name).Damaged()
		if n == 0 {
			continue
		}
		line := fmt.Sprintf("the journal %s has %d damaged %s, skipped: %s", s.j.Path, n, plural(n, "record", "records"), strings.Join(where, "; "))
		if n > len(where) {
			line += "; ..."
		}
		if s.maybeDamaged > 0 {
			line += fmt.Sprintf(" (%d of the programs not found could have been among them)", s.maybeDamaged)
		}
		out = append(out, line)
	}
	if s.maybeLost > 0 {
		out = append(out, fmt.Sprintf("%d %s not found in the journal %s may be among the loads its service could not journal (bpfmeta programs --journal lists them)", s.maybeLost, plural(s.maybeLost, "program", "programs"), s.j.Path))
	}
	if s.nFellOut > 0 {
		ids := make([]string, len(s.fellOut))
		for i, id := range s.fellOut {
			ids[i] = fmt.Sprint(id)
		}
		more := ""
		if s.nFellOut > len(ids) {
			more = ", ..."
		}
		out = append(out, fmt.Sprintf("%d %s fell out of the journal %s (dropped by its size limit, --max-size): id %s%s",
			s.nFellOut, plural(s.nFellOut, "program", "programs"), s.j.Path, strings.Join(ids, " "), more))
	}
	return out
}

// hosts are the journal's hosts, none without one.
func (s *Source) hosts() []string {
	if s.j == nil {
		return nil
	}
	return s.j.Hosts()
}

// reason is the text of a lookup's error after what it wraps (Find's
// errors join bpfprog.ErrNotFound and the reason, a line each), without
// the program it is about ("program N: "), which the caller names.
func reason(err error) string {
	s := err.Error()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if _, after, ok := strings.Cut(s, ": "); ok && strings.HasPrefix(s, "program ") {
		return after
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
