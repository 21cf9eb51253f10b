package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// floodText is perf script text of n samples, each with ten frames of the
// floods' function bpf_prog_0123456789abcdef_f, at the addresses of its
// loads (0xffffffffc0000000 and on, 0x40 apart), and one of another.
func floodText(n int) string {
	const sym = "bpf_prog_0123456789abcdef_f"
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "prog %d [000] 1.%06d: 1 cpu-clock:\n", i%1000, i)
		for j := range 10 {
			fmt.Fprintf(&b, "\t%16x %s+0x4 (%s)\n", 0xffffffffc0000004+uint64((i*10+j)%70000)*0x40, sym, sym)
		}
		b.WriteString("\tffffffff81000000 do_syscall_64+0x4 ([kernel.kallsyms])\n\n")
	}
	return b.String()
}

// TestHostileAnnotate: annotate's labels, the addresses of the loads it
// tells apart and the folded stacks stay under 64 MiB and 10 s of CPU,
// whatever the recording claims (floods of KSYMBOLs and records of one
// name, of loads and unloads), with 1.2 million lines of its functions'
// frames on stdin; it ends in success or in one error line.
func TestHostileAnnotate(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	text := floodText(100_000)
	for _, c := range []struct{ name, rec string }{
		{"65,535 KSYMBOLs of one name and 32,768 records of it", sameNameFlood(t, dir)},
		{"16,384 loads of one program, then 1,000,000 of its BPF_METADATA records", claimFlood(t, dir)},
		{"a KSYMBOL flood", ksymbolFlood(t, dir)},
		{"a BPF_METADATA flood", metadataFlood(t, dir)},
		{"65,535 KSYMBOLs of one function name and 32,767 records of other tags", sameFunctionFlood(t, dir)},
		{"500,000 program loads and unloads", progFlood(t, dir, true)},
		{"1,000,000 loads of one id, compressed", oneIDFlood(t, dir)},
	} {
		for _, folded := range []bool{false, true} {
			args := []string{"annotate", "-i", c.rec}
			name := c.name
			if folded {
				args, name = append(args, "--folded"), name+", --folded"
			}
			t.Run(name, func(t *testing.T) {
				start := time.Now()
				r := runProc(t, bin, procRun{stdin: strings.NewReader(text), stdout: io.Discard}, args...)
				t.Logf("%v, peak %.1f MiB, %v (CPU %v)", r, float64(r.peak)/(1<<20), time.Since(start).Round(time.Millisecond), r.cpu.Round(time.Millisecond))
				if r.peak > peakBound {
					t.Errorf("peak memory %d MiB, want < %d MiB", r.peak>>20, peakBound>>20)
				}
				if r.cpu > hostileCPU {
					t.Errorf("took %v of CPU, want < %v", r.cpu.Round(time.Millisecond), hostileCPU)
				}
				if r.code != exitOK {
					if r.code != exitFailure {
						t.Errorf("%v, want exit 0 or 1", r)
					}
					oneLine(t, name, r.result)
				}
			})
		}
	}
}

// annotate --folded of one sample of 2,000,000 and 6,000,000 frames (105
// and 315 MB of text): refused in one error line as the stack outgrows
// the memory budget, under 64 MiB (on main: 133 MiB and exit 0, and 383
// MiB before the refusal).
func TestHostileAnnotateDeepStack(t *testing.T) {
	bin := buildBinary(t)
	rec := testkit.RepoPath("annotate", "testdata", "busy.meta.data")
	for _, n := range []int{2_000_000, 6_000_000} {
		r := runProc(t, bin, procRun{stdin: &testkit.DeepStack{N: n}, stdout: io.Discard}, "annotate", "--folded", "-i", rec)
		t.Logf("%d frames: %v, peak %.1f MiB, CPU %v", n, r, float64(r.peak)/(1<<20), r.cpu.Round(time.Millisecond))
		if r.peak > peakBound {
			t.Errorf("%d frames: peak memory %d MiB, want < %d MiB", n, r.peak>>20, peakBound>>20)
		}
		if r.code != exitFailure {
			t.Errorf("%d frames: %v, want exit 1", n, r)
		}
		oneLine(t, fmt.Sprint(n, " frames"), r.result, "stdin, line ", "memory budget", "folded stacks")
	}
}
