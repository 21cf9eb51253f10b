package bpfprog

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	ciliumbtf "github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// Tools and fixtures the kernel tests use, relative to this package's
// directory (CI has ../shared at the same place as here).
const (
	fixtureDir = "../testdata/bpf"
	perfModern = "../../shared/tools/perf-modern" // perf 7.2.13
	perfStock  = "/usr/bin/perf"                  // perf 6.1
	bpftool    = "bpftool"
)

// fixtureObjects are the compiled objects in fixtureDir.
var fixtureObjects = []string{"meta", "nometa", "rodata", "manyfunc"}

// requireKernel fails the test unless it can load BPF programs and run the
// tools the comparisons need: these tests never skip.
func requireKernel(t *testing.T, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test loads BPF programs: run it as root (CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("this test needs %s: %v (CI installs bpftool and the modern perf, see shared/tools/setup-modern-perf.sh)", tool, err)
		}
	}
}

// loadedProg is a program a test loaded, and how.
type loadedProg struct {
	Loader string // "cilium" (in-process) or "bpftool" (libbpf)
	Object string // fixture object, or "asm"
	Name   string // the program's function name in the object
	ID     uint32
}

func (l loadedProg) String() string {
	return fmt.Sprintf("%s/%s/%s (id %d)", l.Loader, l.Object, l.Name, l.ID)
}

func progID(t *testing.T, p *ebpf.Program) uint32 {
	t.Helper()
	info, err := p.Info()
	if err != nil {
		t.Fatal(err)
	}
	id, ok := info.ID()
	if !ok {
		t.Fatal("kernel reports no program id")
	}
	return uint32(id)
}

// loadCilium loads a fixture object in this process with cilium/ebpf. The
// returned function unloads it (it also runs at cleanup).
func loadCilium(t *testing.T, object string) ([]loadedProg, func()) {
	t.Helper()
	spec, err := ebpf.LoadCollectionSpec(filepath.Join(fixtureDir, object+".bpf.o"))
	if err != nil {
		t.Fatalf("cilium/ebpf: %s: %v", object, err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		t.Fatalf("cilium/ebpf: loading %s: %v", object, err)
	}
	t.Cleanup(coll.Close)
	var progs []loadedProg
	for name, p := range coll.Programs {
		progs = append(progs, loadedProg{Loader: "cilium", Object: object, Name: name, ID: progID(t, p)})
	}
	return progs, coll.Close
}

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

// mountBPFFS mounts a private bpffs for bpftool's pins (so that nothing is
// left in /sys/fs/bpf); unmounting it at cleanup drops every pin in it.
func mountBPFFS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, ""); err != nil {
		t.Fatalf("mounting a bpffs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting bpffs %s: %v", dir, err)
		}
	})
	return dir
}

// loadBpftool loads a fixture object with bpftool (libbpf: one BTF for the
// object, .rodata bound to every program) and pins the programs under
// bpffs/pin. The returned function unpins (unloads) them; it also runs at
// cleanup.
func loadBpftool(t *testing.T, bpffs, object, pin string) ([]loadedProg, func()) {
	t.Helper()
	dir := filepath.Join(bpffs, pin)
	unload := func() { os.RemoveAll(dir) }
	t.Cleanup(unload)
	out, err := exec.Command(bpftool, "prog", "loadall", filepath.Join(fixtureDir, object+".bpf.o"), dir).CombinedOutput()
	if err != nil {
		t.Fatalf("bpftool prog loadall %s: %v\n%s", object, err, out)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var progs []loadedProg
	for _, e := range ents {
		p, err := ebpf.LoadPinnedProgram(filepath.Join(dir, e.Name()), nil)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		progs = append(progs, loadedProg{Loader: "bpftool", Object: object, Name: e.Name(), ID: progID(t, p)})
		p.Close()
	}
	if len(progs) == 0 {
		t.Fatalf("bpftool loaded no program from %s", object)
	}
	return progs, unload
}

// loadAll loads every fixture with both loaders, and the Go-built program.
// The pins of this set are named after prefix.
func loadAll(t *testing.T, bpffs, prefix string) []loadedProg {
	t.Helper()
	var all []loadedProg
	for _, obj := range fixtureObjects {
		c, _ := loadCilium(t, obj)
		b, _ := loadBpftool(t, bpffs, obj, prefix+"-"+obj)
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

// perfRecording is a running `perf record -a` whose workload waits for a
// file, so that a test can load programs while it records.
type perfRecording struct {
	perf, out, ready, done string
	cmd                    *exec.Cmd
	log                    *strings.Builder
}

// startPerf starts `perf record -B -a -o DIR/NAME.data` with a workload that
// tells (a file) when recording is on and waits until stopPerf.
func startPerf(t *testing.T, perf, dir, name string) *perfRecording {
	t.Helper()
	r := &perfRecording{
		perf:  perf,
		out:   filepath.Join(dir, name+".data"),
		ready: filepath.Join(dir, name+".ready"),
		done:  filepath.Join(dir, name+".done"),
		log:   &strings.Builder{},
	}
	// perf record -a enables its events, and starts the side-band thread
	// that reads programs loaded while recording, before it starts the
	// workload.
	script := fmt.Sprintf("touch %q; while [ ! -e %q ]; do sleep 0.05; done", r.ready, r.done)
	// -B: no build-id collection after recording. perf 6.1 aborts in it
	// (util/build-id.c:1010, stack smashing) when it samples perf 7.2's
	// libraries, and build ids play no part here.
	r.cmd = exec.Command(perf, "record", "-B", "-a", "-o", r.out, "--", "sh", "-c", script)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("%s record: %v", perf, err)
	}
	t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			os.WriteFile(r.done, nil, 0o644)
			r.cmd.Wait()
		}
	})
	return r
}

// waitReady waits until perf records.
func (r *perfRecording) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(r.ready); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s record did not start its workload within a minute:\n%s", r.perf, r.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the workload and waits for perf to write the file.
func (r *perfRecording) stop(t *testing.T) []perfRecord {
	t.Helper()
	if err := os.WriteFile(r.done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("%s record: %v\n%s", r.perf, err, r.log)
	}
	return readPerfRecords(t, r.out)
}

// recordBefore records `perf record -a -- sleep 0.5` (programs loaded
// before it starts are synthesized) with each perf, concurrently.
func recordBefore(t *testing.T, dir string, perfs ...string) [][]perfRecord {
	t.Helper()
	recs := make([]*perfRecording, len(perfs))
	for i, perf := range perfs {
		recs[i] = startPerf(t, perf, dir, fmt.Sprintf("before%d", i))
	}
	for _, r := range recs {
		r.waitReady(t)
	}
	time.Sleep(500 * time.Millisecond)
	out := make([][]perfRecord, len(perfs))
	for i, r := range recs {
		out[i] = r.stop(t)
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
