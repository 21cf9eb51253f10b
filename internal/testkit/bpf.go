package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// MountBPFFS mounts a private BPF file system for a test's pins and returns
// its path. Unmounting it at cleanup drops every pin in it, and with them
// the programs nothing else holds: nothing is left in /sys/fs/bpf.
func MountBPFFS(t testing.TB) string {
	t.Helper()
	Root(t)
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, ""); err != nil {
		Missing(t, "cannot mount a BPF file system on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmounting the BPF file system %s: %v", dir, err)
		}
	})
	return dir
}

// Loaded is a BPF program a test loaded.
type Loaded struct {
	Loader string // "bpftool" (libbpf) or "cilium" (cilium/ebpf, in the test's process)
	Object string // the fixture's name ("meta" for testdata/bpf/meta.bpf.o)
	Name   string // its function name in the object
	ID     uint32
}

func (l Loaded) String() string {
	return fmt.Sprintf("%s/%s/%s (id %d)", l.Loader, l.Object, l.Name, l.ID)
}

// ProgramID returns the kernel's id of p.
func ProgramID(t testing.TB, p *ebpf.Program) uint32 {
	t.Helper()
	id, _ := ProgramInfo(t, p)
	return id
}

// ProgramInfo returns the kernel's id of p and what else it says of p (its
// tag, name, ...).
func ProgramInfo(t testing.TB, p *ebpf.Program) (uint32, *ebpf.ProgramInfo) {
	t.Helper()
	info, err := p.Info()
	if err != nil {
		t.Fatal(err)
	}
	id, ok := info.ID()
	if !ok {
		t.Fatal("the kernel reports no program id")
	}
	return uint32(id), info
}

// LoadBpftool loads the programs of fixture object with `bpftool prog
// loadall` (libbpf: one BTF for the object, .rodata bound to every program)
// and pins them in bpffs/pin. The returned function unloads them (removes
// the pins); it also runs at cleanup.
func LoadBpftool(t testing.TB, bpffs, object, pin string) ([]Loaded, func()) {
	t.Helper()
	return loadBpftoolPath(t, bpffs, Fixture(object), object, pin)
}

// loadBpftoolPath is LoadBpftool for an object file anywhere.
func loadBpftoolPath(t testing.TB, bpffs, path, object, pin string) ([]Loaded, func()) {
	t.Helper()
	Exclusive(t)
	bpftool := Command(t, "bpftool")
	dir := filepath.Join(bpffs, pin)
	unload := func() { os.RemoveAll(dir) }
	t.Cleanup(unload)
	if out, err := exec.Command(bpftool, "prog", "loadall", path, dir).CombinedOutput(); err != nil {
		t.Fatalf("bpftool prog loadall %s: %v\n%s", path, err, out)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var progs []Loaded
	for _, e := range ents {
		p, err := ebpf.LoadPinnedProgram(filepath.Join(dir, e.Name()), nil)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		progs = append(progs, Loaded{Loader: "bpftool", Object: object, Name: e.Name(), ID: ProgramID(t, p)})
		p.Close()
	}
	if len(progs) == 0 {
		t.Fatalf("bpftool loaded no program from %s", path)
	}
	slices.SortFunc(progs, func(a, b Loaded) int { return int(a.ID) - int(b.ID) })
	return progs, unload
}

// LoadCilium loads the programs of fixture object in the test's process
// with cilium/ebpf (a BTF object of their own for each map). The returned
// function unloads them; it also runs at cleanup.
func LoadCilium(t testing.TB, object string) ([]Loaded, func()) {
	t.Helper()
	Exclusive(t)
	spec, err := ebpf.LoadCollectionSpec(Fixture(object))
	if err != nil {
		t.Fatalf("cilium/ebpf: %s: %v", object, err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		t.Fatalf("cilium/ebpf: loading %s: %v", object, err)
	}
	t.Cleanup(coll.Close)
	var progs []Loaded
	for name, p := range coll.Programs {
		progs = append(progs, Loaded{Loader: "cilium", Object: object, Name: name, ID: ProgramID(t, p)})
	}
	slices.SortFunc(progs, func(a, b Loaded) int { return int(a.ID) - int(b.ID) })
	return progs, coll.Close
}
