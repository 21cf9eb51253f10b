package testkit

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	ciliumbtf "github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Contents of the .rodata of the program LoadAsm loads: no func_info, no
// program BTF, one map with its own BTF.
const (
	AsmProgName   = "bpfprogt_asm"
	AsmVersion    = "v1.2.3-test"
	AsmBuildNum   = 4711
	asmVersionLen = 12
)

// LoadAsm loads a program built in Go with cilium/ebpf: without func_info
// and program BTF, reading a .rodata map whose BTF has two metadata
// variables (bpf_metadata_version = AsmVersion, bpf_metadata_build_num =
// AsmBuildNum). The returned function unloads it; it also runs at cleanup.
func LoadAsm(t testing.TB) ([]Loaded, func()) {
	t.Helper()
	Exclusive(t)
	m := MetadataRodata(t, asmVersionLen, AsmVersion, "build_num", AsmBuildNum)
	t.Cleanup(func() { m.Close() })
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: AsmProgName, Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{asm.LoadMapPtr(asm.R1, m.FD()), asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		t.Fatalf("cilium/ebpf: program %s: %v", AsmProgName, err)
	}
	t.Cleanup(func() { p.Close() })
	unload := func() { p.Close(); m.Close() }
	return []Loaded{{Loader: "cilium", Object: "asm", Name: AsmProgName, ID: ProgramID(t, p)}}, unload
}

// MetadataRodata makes the .rodata map clang and libbpf make for a
// program with two metadata variables, with its BTF: const char
// bpf_metadata_version[versionLen] = version, and const int
// bpf_metadata_<numName> = num. The caller closes it.
func MetadataRodata(t testing.TB, versionLen int, version, numName string, num int) *ebpf.Map {
	t.Helper()
	if len(version) >= versionLen {
		t.Fatalf("version %q is too long for char[%d]", version, versionLen)
	}
	charT := &ciliumbtf.Int{Name: "char", Size: 1, Encoding: ciliumbtf.Signed}
	idx := &ciliumbtf.Int{Name: "__ARRAY_SIZE_TYPE__", Size: 4}
	ver := &ciliumbtf.Var{Name: "bpf_metadata_version", Linkage: ciliumbtf.GlobalVar,
		Type: &ciliumbtf.Array{Index: idx, Type: &ciliumbtf.Const{Type: charT}, Nelems: uint32(versionLen)}}
	n := &ciliumbtf.Var{Name: "bpf_metadata_" + numName, Linkage: ciliumbtf.GlobalVar,
		Type: &ciliumbtf.Const{Type: &ciliumbtf.Int{Name: "int", Size: 4, Encoding: ciliumbtf.Signed}}}
	size := uint32(versionLen + 4)
	ds := &ciliumbtf.Datasec{Name: ".rodata", Size: size, Vars: []ciliumbtf.VarSecinfo{
		{Type: ver, Offset: 0, Size: uint32(versionLen)}, {Type: n, Offset: uint32(versionLen), Size: 4}}}
	value := make([]byte, size)
	copy(value, version)
	value[versionLen], value[versionLen+1] = byte(num), byte(num>>8)
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: ".rodata", Type: ebpf.Array, KeySize: 4,
		ValueSize: size, MaxEntries: 1, Flags: unix.BPF_F_RDONLY_PROG,
		Key: &ciliumbtf.Void{}, Value: ds,
		Contents: []ebpf.MapKV{{Key: uint32(0), Value: value}}})
	if err != nil {
		t.Fatalf("cilium/ebpf: .rodata map: %v", err)
	}
	return m
}

// WaitUnloaded waits until the kernel has freed program id (closing the
// last descriptor frees it a little later).
func WaitUnloaded(t testing.TB, id uint32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
		if err == nil {
			p.Close()
		}
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("program %d still readable after unload: %v", id, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Tag is the BPF tag s (16 hex digits).
func Tag(t testing.TB, s string) perfdata.BPFTag {
	t.Helper()
	tag, err := perfdata.ParseBPFTag(s)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}
