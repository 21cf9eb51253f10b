package journal

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
)

// journalTwice writes one load (id 10, loaded at 5 s) twice, by two
// writers begun at started[0] and started[1] (CLOCK_BOOTTIME), with
// version v1 and v2, in that order of segments.
func journalTwice(t *testing.T, started [2]time.Duration, versions [2]string) (*Journal, *bpfprog.Program) {
	t.Helper()
	dir, p := writeTwice(t, started, versions)
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return j, p
}

// writeTwice is journalTwice's directory, not opened.
func writeTwice(t testing.TB, started [2]time.Duration, versions [2]string) (string, *bpfprog.Program) {
	t.Helper()
	dir := t.TempDir()
	var p *bpfprog.Program
	for i := range 2 {
		now := boot0.Add(started[i])
		w := mustCreate(t, dir, system("alpha", "boot-a"), Options{Now: func() time.Time { return now }})
		p = program(10, 1, 5*time.Second)
		p.Metadata.Entries[0].Value = fmt.Sprintf("%q", versions[i])
		if err := w.Load(p); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	return dir, p
}

// One load journaled twice with different metadata (a writer started
// again after a bpftool map update of its .data) is resolved by time:
// the value in force when perf read the program, whichever order the
// records are in (issue 46 item 2); where time cannot tell, it is
// ambiguous, never the first one read.
func TestSameLoadTwoValues(t *testing.T) {
	const want, never = "resolved", ""
	for _, c := range []struct {
		name     string
		started  [2]time.Duration // when each writer began
		versions [2]string
		at       time.Duration // the PROG_LOAD's time on the recording's clock (boottime - 1 s); 0: synthesized
		want     string        // the version found, "" ambiguous
	}{
		// a writer ran at the load: what it read is what perf read
		{"read at its load", [2]time.Duration{4 * time.Second, 100 * time.Second}, [2]string{"v1", "v2"}, 4*time.Second + time.Millisecond, "v1"},
		{"read at its load, the other order", [2]time.Duration{100 * time.Second, 4 * time.Second}, [2]string{"v2", "v1"}, 4*time.Second + time.Millisecond, "v1"},
		// no writer at the load: by when each record was read; read
		// only after it, the value then is not known
		{"both read after", [2]time.Duration{200 * time.Second, 400 * time.Second}, [2]string{"v1", "v2"}, 4 * time.Second, never},
		{"both read after, the other order", [2]time.Duration{400 * time.Second, 200 * time.Second}, [2]string{"v2", "v1"}, 4 * time.Second, never},
		{"both read before", [2]time.Duration{200 * time.Second, 400 * time.Second}, [2]string{"v1", "v2"}, 600 * time.Second, "v2"},
		{"both read before, the other order", [2]time.Duration{400 * time.Second, 200 * time.Second}, [2]string{"v2", "v1"}, 600 * time.Second, "v2"},
		{"read between", [2]time.Duration{200 * time.Second, 400 * time.Second}, [2]string{"v1", "v2"}, 300 * time.Second, never},
		{"read between, the other order", [2]time.Duration{400 * time.Second, 200 * time.Second}, [2]string{"v2", "v1"}, 300 * time.Second, never},
		{"read within the clocks' slack", [2]time.Duration{200 * time.Second, 230 * time.Second}, [2]string{"v1", "v2"}, 210 * time.Second, never},
		// a program perf found loaded: its records have no time
		{"synthesized", [2]time.Duration{4 * time.Second, 100 * time.Second}, [2]string{"v1", "v2"}, 0, never},
		{"synthesized, the other order", [2]time.Duration{100 * time.Second, 4 * time.Second}, [2]string{"v2", "v1"}, 0, never},
		{"synthesized, one value", [2]time.Duration{4 * time.Second, 100 * time.Second}, [2]string{"v1", "v1"}, 0, "v1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, p := journalTwice(t, c.started, c.versions)
			got, err := j.Find(loadOf(p, "alpha", uint64(c.at)), "")
			switch {
			case c.want == never:
				if !errors.Is(err, ErrAmbiguous) || !errors.Is(err, bpfprog.ErrNotFound) {
					t.Errorf("got %v, %v; want ErrAmbiguous", got, err)
				}
			case err != nil:
				t.Errorf("%v; want %s", err, c.want)
			case got.Metadata.Entries[0].Value != fmt.Sprintf("%q", c.want):
				t.Errorf("version %s, want %q", got.Metadata.Entries[0].Value, c.want)
			}
		})
	}
}

// The programs of a span (a recording's that it has no record of) are as
// perf's side-band thread read them at their load: a load journaled with
// two values comes with the one a writer made at the load, and with
// ErrAmbiguous when none was made then (issue 46 item 2).
func TestSpanTwoValues(t *testing.T) {
	for _, c := range []struct {
		name     string
		started  [2]time.Duration
		versions [2]string
		want     string // "": ambiguous
	}{
		{"read at its load", [2]time.Duration{4 * time.Second, 100 * time.Second}, [2]string{"v1", "v2"}, "v1"},
		{"read at its load, the other order", [2]time.Duration{100 * time.Second, 4 * time.Second}, [2]string{"v2", "v1"}, "v1"},
		{"both read after", [2]time.Duration{200 * time.Second, 400 * time.Second}, [2]string{"v1", "v2"}, ""},
		{"both read after, one value", [2]time.Duration{200 * time.Second, 400 * time.Second}, [2]string{"v1", "v1"}, "v1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, _ := journalTwice(t, c.started, c.versions)
			n := 0
			for p, err := range j.LoadedBetween("alpha", "boot-a", 0, 10*time.Second) {
				n++
				switch {
				case p == nil || p.ID != 10:
					t.Fatalf("%+v, %v", p, err)
				case c.want == "":
					if !errors.Is(err, ErrAmbiguous) {
						t.Errorf("version %s, %v; want ErrAmbiguous", p.Metadata.Entries[0].Value, err)
					}
				case err != nil || p.Metadata.Entries[0].Value != fmt.Sprintf("%q", c.want):
					t.Errorf("version %s, %v; want %q", p.Metadata.Entries[0].Value, err, c.want)
				}
			}
			if n != 1 {
				t.Errorf("%d programs, want 1", n)
			}
		})
	}
}
