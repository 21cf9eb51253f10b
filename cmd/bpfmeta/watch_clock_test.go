package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestWatchClocks: bpfmeta watch -- perf record -k CLOCK of one command
// (sleep 1.2) while another process loads the meta fixture at 0.3 s and
// unloads it at 0.6 s; the recording has no record of the loads and the
// programs are gone when inject runs, so only the watch's snapshot has
// them. inject --snapshot must place their load times on the recording's
// clock and write the records perf 7.2 writes natively for the same
// recording, byte for byte, and show must print them.
func TestWatchClocks(t *testing.T) {
	watchNeeds(t)
	bpftool := testkit.Command(t, "bpftool")
	perfStock, perfModern := testkit.PerfStock(t), testkit.PerfModern(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	bpffs := testkit.MountBPFFS(t)
	obj, version := uniqueMetaFixture(t, dir)
	// loaded before: the recordings' proof of being of the snapshot's boot
	before := filepath.Join(bpffs, "before")
	if out, err := exec.Command(bpftool, "prog", "loadall", testkit.Fixture("nometa"), before).CombinedOutput(); err != nil {
		t.Fatalf("bpftool: %v\n%s", err, out)
	}
	t.Cleanup(func() { os.RemoveAll(before) })

	// record runs args (ending in perf record ... -o OUT) with the workload,
	// and loads and unloads obj 0.3 s after the workload started.
	record := func(name string, args ...string) {
		t.Helper()
		ready := filepath.Join(dir, name+".ready")
		args = append(args, "--", "sh", "-c", fmt.Sprintf("touch %q; sleep 1.2", ready))
		p := startBpfmeta(t, args[0], args[1:]...)
		waitFor(t, name+" to start its workload", func() bool { _, err := os.Stat(ready); return err == nil })
		time.Sleep(300 * time.Millisecond)
		pin := filepath.Join(bpffs, name)
		if out, err := exec.Command(bpftool, "prog", "loadall", obj, pin).CombinedOutput(); err != nil {
			t.Fatalf("bpftool: %v\n%s", err, out)
		}
		time.Sleep(300 * time.Millisecond)
		if err := os.RemoveAll(pin); err != nil {
			t.Fatal(err)
		}
		if status := p.wait(t); status != 0 {
			t.Fatalf("%q: exit %d\n%s", args, status, p.stderr)
		}
	}
	for _, clock := range []string{"CLOCK_REALTIME", "CLOCK_TAI", "CLOCK_MONOTONIC"} {
		t.Run(clock, func(t *testing.T) {
			snap, rec := filepath.Join(dir, clock+".jsonl"), filepath.Join(dir, clock+".data")
			record(clock+"-stock", bin, "watch", "-o", snap, "--", perfStock, "record", "-B", "-N", "-k", clock, "-o", rec)
			modernRec := filepath.Join(dir, clock+"-modern.data")
			record(clock+"-modern", perfModern, "record", "-B", "-N", "-k", clock, "-o", modernRec)

			out := filepath.Join(dir, clock+".meta.data")
			status, _, stderr := runBpfmeta(t, bin, "inject", "-v", "--snapshot", snap, "-i", rec, "-o", out)
			if status != 0 {
				t.Fatalf("bpfmeta inject --snapshot: exit %d\n%s", status, stderr)
			}
			body := func(path string) []string {
				var out []string
				for _, m := range readWatchRecording(t, path).mine(version) {
					out = append(out, string(m.body))
				}
				slices.Sort(out)
				return out
			}
			got, want := body(out), body(modernRec)
			if len(want) != 6 {
				t.Fatalf("perf 7.2 wrote %d BPF_METADATA records for the test's programs, want one per function of the fixture: 6", len(want))
			}
			if !slices.Equal(got, want) {
				t.Errorf("inject --snapshot wrote %d records for the programs loaded during the recording, perf 7.2 %d; they differ\n%s", len(got), len(want), stderr)
			}
			status, stdout, stderr := runBpfmeta(t, bin, "show", out)
			if status != 0 || strings.Count(stdout, version) != len(want) {
				t.Errorf("bpfmeta show: exit %d, %d records of version %s, want %d\n%s", status, strings.Count(stdout, version), version, len(want), stderr)
			}
		})
	}
}
