package live

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/internal/perfevent"
)

// bootIDPath holds the random id the kernel picks at every boot.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// CurrentSystem describes the running machine.
func CurrentSystem() (bpfprog.System, error) {
	var s bpfprog.System
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
