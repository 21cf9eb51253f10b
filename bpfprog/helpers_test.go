package bpfprog

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	ciliumbtf "github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// fixtureObjects are the compiled objects in testdata/bpf the tests load.
var fixtureObjects = []string{"meta", "nometa", "rodata", "manyfunc", "rich", "rich19"}

// loadedProg is a program a test loaded, and how.
type loadedProg = testkit.Loaded

func progID(t *testing.T, p *ebpf.Program) uint32 { return testkit.ProgramID(t, p) }

// Contents of the .rodata of the pure-Go program: no func_info, no
// program BTF, one map with its own BTF.
const (
	asmProgName  = "bpfprogt_asm"
	asmVersion   = "v1.2.3-test"
	asmBuildNum  = 4711
	asmValueSize = 16
)

// loadAsm loads a program built in Go with cilium/ebpf: without func_info
// and program BTF, reading a .rodata map whose BTF has two metadata
// variables.
func loadAsm(t *testing.T) ([]loadedProg, func()) {
	t.Helper()
	charT := &ciliumbtf.Int{Name: "char", Size: 1, Encoding: ciliumbtf.Signed}
	idx := &ciliumbtf.Int{Name: "__ARRAY_SIZE_TYPE__", Size: 4}
	ver := &ciliumbtf.Var{Name: "bpf_metadata_version", Linkage: ciliumbtf.GlobalVar,
		Type: &ciliumbtf.Array{Index: idx, Type: &ciliumbtf.Const{Type: charT}, Nelems: 12}}
	num := &ciliumbtf.Var{Name: "bpf_metadata_build_num", Linkage: ciliumbtf.GlobalVar,
		Type: &ciliumbtf.Const{Type: &ciliumbtf.Int{Name: "int", Size: 4, Encoding: ciliumbtf.Signed}}}
	ds := &ciliumbtf.Datasec{Name: ".rodata", Size: asmValueSize, Vars: []ciliumbtf.VarSecinfo{
		{Type: ver, Offset: 0, Size: 12}, {Type: num, Offset: 12, Size: 4}}}
	value := make([]byte, asmValueSize)
	copy(value, asmVersion)
	value[12], value[13] = asmBuildNum&0xff, asmBuildNum>>8
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: ".rodata", Type: ebpf.Array, KeySize: 4,
		ValueSize: asmValueSize, MaxEntries: 1, Flags: unix.BPF_F_RDONLY_PROG,
		Key: &ciliumbtf.Void{}, Value: ds,
		Contents: []ebpf.MapKV{{Key: uint32(0), Value: value}}})
	if err != nil {
		t.Fatalf("cilium/ebpf: .rodata map: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: asmProgName, Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{asm.LoadMapPtr(asm.R1, m.FD()), asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		t.Fatalf("cilium/ebpf: program %s: %v", asmProgName, err)
	}
	t.Cleanup(func() { p.Close() })
	unload := func() { p.Close(); m.Close() }
	return []loadedProg{{Loader: "cilium", Object: "asm", Name: asmProgName, ID: progID(t, p)}}, unload
}

// loadAll loads every fixture with both loaders, and the Go-built program.
// The pins of this set are named after prefix.
func loadAll(t *testing.T, bpffs, prefix string) []loadedProg {
	t.Helper()
	var all []loadedProg
	for _, obj := range fixtureObjects {
		c, _ := testkit.LoadCilium(t, obj)
		b, _ := testkit.LoadBpftool(t, bpffs, obj, prefix+"-"+obj)
		all = append(all, c...)
		all = append(all, b...)
	}
	a, _ := loadAsm(t)
	all = append(all, a...)
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

// readLoaded reads the loaded programs from the kernel, in id order.
func readLoaded(t *testing.T, live *Live, loaded []loadedProg) []*Program {
	t.Helper()
	progs := make([]*Program, len(loaded))
	for i, l := range loaded {
		p, err := live.ReadProgram(l.ID)
		if err != nil {
			t.Fatalf("%v: %v", l, err)
		}
		progs[i] = p
	}
	return progs
}

// startPerf starts `perf record -a -o DIR/NAME.data` with a workload that
// waits until the recording is stopped, so that a test can load programs
// while it records.
func startPerf(t *testing.T, perf, dir, name string) *testkit.PerfRun {
	t.Helper()
	return testkit.StartPerf(t, perf, filepath.Join(dir, name+".data"), testkit.PerfOptions{SystemWide: true})
}

// stopPerf ends the recording and reads its BPF records.
func stopPerf(t *testing.T, r *testkit.PerfRun) []perfRecord {
	t.Helper()
	r.Stop(t)
	return readPerfRecords(t, r.Out)
}

// recordBefore records `perf record -a -- sleep 0.5` (programs loaded
// before it starts are synthesized) with each perf, concurrently.
func recordBefore(t *testing.T, dir string, perfs ...string) [][]perfRecord {
	t.Helper()
	recs := make([]*testkit.PerfRun, len(perfs))
	for i, perf := range perfs {
		recs[i] = startPerf(t, perf, dir, fmt.Sprintf("before%d", i))
	}
	for _, r := range recs {
		r.WaitReady(t)
	}
	time.Sleep(500 * time.Millisecond)
	out := make([][]perfRecord, len(perfs))
	for i, r := range recs {
		out[i] = stopPerf(t, r)
	}
	return out
}

// findBPFEvent returns the index of the PROG_LOAD BPF_EVENT for id.
func findBPFEvent(recs []perfRecord, id uint32) (int, error) {
	idx := -1
	for i, r := range recs {
		if e := r.BPFEvent; e != nil && e.Type == bpfEventProgLoad && e.ID == id {
			if idx >= 0 {
				return -1, fmt.Errorf("two PROG_LOAD BPF_EVENTs for program %d (at %#x and %#x)", id, recs[idx].Offset, r.Offset)
			}
			idx = i
		}
	}
	if idx < 0 {
		return -1, fmt.Errorf("no PROG_LOAD BPF_EVENT for program %d", id)
	}
	return idx, nil
}

// findMetadataRun finds, at or after start, len(names) consecutive
// BPF_METADATA records with these prog_names and entry keys; -1 if none.
func findMetadataRun(recs []perfRecord, start int, names, entryKeys []string) int {
	for i := start; i+len(names) <= len(recs); i++ {
		ok := true
		for j, name := range names {
			m := recs[i+j].Metadata
			if m == nil || m.ProgName != name || !slices.Equal(keys(m.Entries), entryKeys) {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

// waitGone waits until the kernel has freed program id.
func waitGone(t *testing.T, live *Live, id uint32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := live.ReadProgram(id)
		if errors.Is(err, ErrNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("program %d still readable after unload: %v", id, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
