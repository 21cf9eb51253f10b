package inject_test

// Helpers of the tests on real recordings (golden_test.go, oracle_test.go,
// pipe_test.go, corpus_test.go): running inject on a file through the
// writer the CLI uses, reading recordings back, telling inserted records
// from the input's, and the kernel and perf side of the live tests.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// casesDir holds the recordings of the golden tests (record.sh made them).
const casesDir = "testdata"

// recording is a whole (small) recording as the reader reads it
// (decompressing), with what these tests ask of one.
type recording struct{ *rectest.Recording }

// readRecording reads path with the reader, decompressing.
func readRecording(t *testing.T, path string) *recording {
	t.Helper()
	return &recording{rectest.Read(t, path, reader.Options{Decompress: true})}
}

// metadata decodes a BPF_METADATA record of r.
func (r *recording) metadata(t *testing.T, x rectest.Record) perfdata.BPFMetadata {
	t.Helper()
	m, err := perfdata.DecodeBPFMetadata(x.Raw, r.Order)
	if err != nil {
		t.Fatalf("%s: BPF_METADATA at %#x: %v", r.Path, x.Offset, err)
	}
	return m
}

// ksymNames indexes the names of the BPF KSYMBOLs registered in r (top
// level or compressed) by address.
func (r *recording) ksymNames() ksymIndex {
	names := ksymIndex{}
	for _, x := range r.Records {
		if x.Type != perfdata.RecordKSymbol {
			continue
		}
		k, err := perfdata.DecodeKSymbol(x.Raw, r.Order)
		if err == nil && k.Type == perfdata.KSymbolTypeBPF && !k.Unregister() {
			names[k.Addr] = append(names[k.Addr], k.Name)
		}
	}
	return names
}

// ksymIndex holds the names of the BPF KSYMBOLs registered at each address.
type ksymIndex map[uint64][]string

// of returns the name of f's KSYMBOL: of those registered at its address,
// the one that is a name of f's (perf's or the kernel's). An address is
// reused by later loads, and another process's program loaded and unloaded
// there during the recording may come later in a pipe (whose side-band
// records are in the order of the CPUs' buffers, not of time). "" when
// there is none.
func (x ksymIndex) of(f bpfprog.Func) string {
	for _, n := range x[f.Addr] {
		if n == f.KernelName || n == f.PerfName {
			return n
		}
	}
	return ""
}

// injectFile runs inject.Write over the recording at in, writing through the
// writer the CLI uses (writer.New: the input's layout for a file, pipe
// format for a stream; writer.NewDir for a directory recording), into a new
// file or directory in dir.
func injectFile(t *testing.T, in, dir string, src bpfprog.Source, opts inject.Options) (string, *inject.Summary, error) {
	t.Helper()
	var sum *inject.Summary
	out, err := rectest.Through(t, in, dir, reader.Options{Decompress: true}, writer.Options{}, func(r *reader.Reader, w *writer.Writer) (err error) {
		sum, err = inject.Write(w, r, src, opts)
		return err
	})
	return out, sum, err
}

// mustInject is injectFile for inputs that must inject cleanly.
func mustInject(t *testing.T, in, dir string, src bpfprog.Source, opts inject.Options) (string, *inject.Summary) {
	t.Helper()
	out, sum, err := injectFile(t, in, dir, src, opts)
	if err != nil {
		t.Fatalf("inject %s: %v", filepath.Base(in), err)
	}
	return out, sum
}

// insertedRecords returns the indexes in out.Top() of the records that are
// not the input's: out must be in's top-level records in order, with
// BPF_METADATA records added.
func insertedRecords(t *testing.T, in, out *recording) map[int]bool {
	t.Helper()
	it, ot := in.Top(), out.Top()
	ins := map[int]bool{}
	i := 0
	for j, x := range ot {
		if i < len(it) && it[i].Type == x.Type && bytes.Equal(it[i].Raw, x.Raw) {
			i++
			continue
		}
		if x.Type != perfdata.RecordBPFMetadata {
			t.Fatalf("%s: the %v record at %#x is neither the input's next record (%d of %d) nor an added BPF_METADATA", out.Path, x.Type, x.Offset, i, len(it))
		}
		ins[j] = true
	}
	if i != len(it) {
		t.Fatalf("%s: input records from the %d-th (%v at %#x) on are missing from the output", out.Path, i, it[i].Type, it[i].Offset)
	}
	return ins
}

// strip rewrites the recording at path without the top-level records whose
// indexes are in drop, through the writer for its format, and returns it.
func strip(t *testing.T, path string, drop map[int]bool) []byte {
	t.Helper()
	i, wr := 0, (*writer.Writer)(nil)
	out := rectest.Rewrite(t, path, writer.Options{}, func(w *writer.Writer, rec *perfdata.Record) error {
		wr = w
		if !rec.Compressed() {
			i++
			if drop[i-1] {
				return nil
			}
		}
		return w.WriteRecord(rec)
	})
	if wr != nil {
		if _, n := wr.TrailingDropped(); n > 0 {
			t.Fatalf("%s: %d trailing bytes in a file", path, n)
		}
	}
	return testkit.ReadFile(t, out)
}

// requireLive ends the test unless it can load BPF programs and record
// with both perfs, and returns them, perf 6.1 (writes no BPF_METADATA) and
// the modern perf (the oracle), with a private BPF file system for the
// test's pins (testkit.MountBPFFS).
func requireLive(t *testing.T) (perfStock, perfModern, bpffs string) {
	t.Helper()
	testkit.BPF(t)
	testkit.Command(t, "bpftool")
	return testkit.PerfStock(t), testkit.PerfModern(t), testkit.MountBPFFS(t)
}

// loadCommand is the shell command that loads the fixture objects with
// bpftool (libbpf), pinning their programs under pin/<object>.
func loadCommand(t *testing.T, pin string, objects ...string) string {
	t.Helper()
	cmds := []string{fmt.Sprintf("mkdir -p '%s'", pin)}
	for _, o := range objects {
		cmds = append(cmds, fmt.Sprintf("%s prog loadall '%s' '%s'", testkit.Command(t, "bpftool"), testkit.Fixture(o), filepath.Join(pin, o)))
	}
	return strings.Join(cmds, " && ")
}

// loadFixtures loads the objects now and returns their programs' ids.
func loadFixtures(t *testing.T, pin string, objects ...string) []uint32 {
	t.Helper()
	t.Cleanup(func() { os.RemoveAll(pin) })
	if out, err := exec.Command("sh", "-c", loadCommand(t, pin, objects...)).CombinedOutput(); err != nil {
		t.Fatalf("loading %v: %v\n%s", objects, err, out)
	}
	return pinnedIDs(t, pin)
}

// pinnedIDs returns the ids of the programs pinned under dir, ascending.
func pinnedIDs(t *testing.T, dir string) []uint32 {
	t.Helper()
	var ids []uint32
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		p, err := ebpf.LoadPinnedProgram(path, nil)
		if err != nil {
			return err
		}
		defer p.Close()
		info, err := p.Info()
		if err != nil {
			return err
		}
		id, ok := info.ID()
		if !ok {
			return fmt.Errorf("%s: no program id", path)
		}
		ids = append(ids, uint32(id))
		return nil
	})
	if err != nil {
		t.Fatalf("programs pinned under %s: %v", dir, err)
	}
	if len(ids) == 0 {
		t.Fatalf("no programs pinned under %s", dir)
	}
	slices.Sort(ids)
	return ids
}

// startRecord starts perf recording workload into out, in mode (the modes
// of record.sh).
func startRecord(t *testing.T, perf string, mode testkit.RecordMode, out, workload string) *testkit.PerfRun {
	t.Helper()
	return testkit.StartPerf(t, perf, out, testkit.PerfOptions{Mode: mode, Workload: workload, Args: []string{"-F", "999"}})
}

// recordWhileLoading records with perf into out (what opts ask) while this
// test, another process than perf's, loads objects pinned under pin: 200 ms
// after perf is ready and 200 ms before it stops, so the loads fall inside
// the recording. It returns the ids loaded.
func recordWhileLoading(t *testing.T, perf, out string, opts testkit.PerfOptions, pin string, objects ...string) []uint32 {
	t.Helper()
	r := testkit.StartPerf(t, perf, out, opts)
	r.WaitReady(t)
	time.Sleep(200 * time.Millisecond)
	ids := loadFixtures(t, pin, objects...)
	time.Sleep(200 * time.Millisecond)
	r.Stop(t)
	return ids
}
