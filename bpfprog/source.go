package bpfprog

import (
	"fmt"
	"iter"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/perfevent"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Source is where programs are looked up: the running kernel (Live) or a
// Snapshot.
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
// order: Live and Snapshot are. inject uses it for the programs loaded
// during a recording that has no record of them.
type Lister interface {
	Source
	All() iter.Seq2[*Program, error]
}

// System identifies a machine and one boot of it.
type System struct {
	KernelRelease string `json:"kernel_release"` // uname -r, as perf's HEADER_OSRELEASE
	// BootID is /proc/sys/kernel/random/boot_id: it changes on every boot.
	BootID   string `json:"boot_id"`
	Hostname string `json:"hostname"` // as perf's HEADER_HOSTNAME
	// BootTime is when the machine booted (now minus CLOCK_BOOTTIME), so
	// that a program's LoadTime can be shown as a date.
	BootTime time.Time `json:"boot_time"`
	// PerfClockOffset is CLOCK_BOOTTIME minus perf's clock (the clock of a
	// recording's timestamps) when the system was read, so that a
	// program's LoadTime can be placed in a recording of the same boot;
	// 0 when it could not be measured (perfevent.PerfClockOffset).
	PerfClockOffset time.Duration `json:"perf_clock_offset_ns,omitempty"`
}

// LoadedAtPerfTime is when p was loaded on perf's clock, and whether that is
// known.
func (s System) LoadedAtPerfTime(p *Program) (uint64, bool) {
	t := p.LoadTime - s.PerfClockOffset
	if s.PerfClockOffset == 0 || p.LoadTime == 0 || t < 0 {
		return 0, false
	}
	return uint64(t), true
}

// bootIDPath holds the random id the kernel picks at every boot.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// CurrentSystem describes the running machine.
func CurrentSystem() (System, error) {
	var s System
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return s, fmt.Errorf("uname: %w", err)
	}
	s.KernelRelease = unix.ByteSliceToString(u.Release[:])
	b, err := os.ReadFile(bootIDPath)
	if err != nil {
		return s, fmt.Errorf("boot id: %w", err)
	}
	s.BootID = strings.TrimSpace(string(b))
	if s.Hostname, err = os.Hostname(); err != nil {
		return s, fmt.Errorf("hostname: %w", err)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return s, fmt.Errorf("CLOCK_BOOTTIME: %w", err)
	}
	s.BootTime = time.Now().Add(-time.Duration(ts.Nano())).UTC()
	// best effort: without it, only programs of the recording get metadata
	s.PerfClockOffset, _ = perfevent.PerfClockOffset()
	return s, nil
}

// LoadedAt is when p was loaded, on the clock of the system it was read on.
func (s System) LoadedAt(p *Program) time.Time {
	return s.BootTime.Add(p.LoadTime)
}

// checkTag turns a tag mismatch into a *TagMismatchError.
func checkTag(id uint32, want, got perfdata.BPFTag) error {
	if want != got {
		return &TagMismatchError{ID: id, Want: want, Got: got}
	}
	return nil
}

func notFound(id uint32) error {
	return fmt.Errorf("program %d: %w", id, ErrNotFound)
}
