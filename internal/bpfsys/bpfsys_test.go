package bpfsys

import (
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestLayout pins the structures to the uapi <linux/bpf.h> layout (sizes and
// offsets as gcc reports them for Linux 6.18 on x86-64).
func TestLayout(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(bpf_prog_info)", unsafe.Sizeof(progInfo{}), 232},
		{"offsetof(bpf_prog_info, jited_ksyms)", unsafe.Offsetof(progInfo{}.JitedKsyms), 112},
		{"offsetof(bpf_prog_info, btf_id)", unsafe.Offsetof(progInfo{}.BTFID), 128},
		{"offsetof(bpf_prog_info, func_info)", unsafe.Offsetof(progInfo{}.FuncInfo), 136},
		{"offsetof(bpf_prog_info, prog_tags)", unsafe.Offsetof(progInfo{}.ProgTags), 184},
		{"sizeof(bpf_map_info)", unsafe.Sizeof(mapInfo{}), 88},
		{"offsetof(bpf_map_info, btf_value_type_id)", unsafe.Offsetof(mapInfo{}.BTFValueTypeID), 72},
		{"sizeof(bpf_attr.info)", unsafe.Sizeof(objGetInfoByFdAttr{}), 16},
		{"sizeof(bpf_func_info)", unsafe.Sizeof(FuncInfo{}), funcInfoRecSize},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

// TestAgainstCilium reads a loaded program and its map and compares the
// fields cilium/ebpf also reports.
func TestAgainstCilium(t *testing.T) {
	testkit.BPF(t)
	spec, err := ebpf.LoadCollectionSpec(testkit.Fixture("meta"))
	if err != nil {
		t.Fatal(err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		t.Fatalf("loading meta.bpf.o: %v", err)
	}
	defer coll.Close()
	nfuncs := map[string]int{"bpfprogt_multi_function_main": 3, "bpfprogt_second": 2, "bpfprogt_single_function": 1}
	for name, prog := range coll.Programs {
		want, err := prog.Info()
		if err != nil {
			t.Fatal(err)
		}
		got, err := GetProgInfo(prog.FD())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		id, _ := want.ID()
		btfID, _ := want.BTFID()
		mapIDs, _ := want.MapIDs()
		ksyms, _ := want.JitedKsymAddrs()
		lens, _ := want.JitedFuncLens()
		if got.ID != uint32(id) || hex.EncodeToString(got.Tag[:]) != want.Tag || got.BTFID != uint32(btfID) ||
			got.Type != uint32(want.Type) || !strings.HasPrefix(name, got.Name) || len(got.Name) != min(len(name), 15) {
			t.Errorf("%s: got %+v, cilium/ebpf %+v", name, got, want)
		}
		n := nfuncs[name]
		if len(got.ProgTags) != n || len(got.FuncInfos) != n || int(got.NrJitedKsyms) != n ||
			got.FuncInfoRecSize != funcInfoRecSize {
			t.Errorf("%s: %d tags, %d func_info (rec size %d), %d ksyms; want %d functions",
				name, len(got.ProgTags), len(got.FuncInfos), got.FuncInfoRecSize, got.NrJitedKsyms, n)
		}
		if (len(got.ProgTags) == 1) != (got.ProgTags[0] == got.Tag) {
			t.Errorf("%s: prog_tags[0] %x, tag %x", name, got.ProgTags[0], got.Tag)
		}
		if len(ksyms) == 0 && unsafe.Sizeof(uintptr(0)) == 4 && len(got.JitedKsyms) == n {
			// cilium/ebpf's JitedKsymAddrs returns []uintptr, which cannot
			// hold a 64-bit kernel's addresses in a 32-bit process (the
			// kernel fills none in then): bpfsys's are u64, as the
			// kernel's, and are compared with cilium's on 64-bit only.
			ksyms = make([]uintptr, n)
			for i := range ksyms {
				if got.JitedKsyms[i] == 0 {
					t.Errorf("%s func %d: address 0", name, i)
				}
			}
		}
		if len(ksyms) != len(got.JitedKsyms) || len(lens) != len(got.JitedFuncLens) {
			t.Fatalf("%s: ksyms %x lens %v, cilium/ebpf %x %v", name, got.JitedKsyms, got.JitedFuncLens, ksyms, lens)
		}
		for i := range ksyms {
			if ksyms[i] != 0 && uint64(ksyms[i]) != got.JitedKsyms[i] || lens[i] != got.JitedFuncLens[i] {
				t.Errorf("%s func %d: %x+%d, cilium/ebpf %x+%d", name, i, got.JitedKsyms[i], got.JitedFuncLens[i], ksyms[i], lens[i])
			}
		}
		if len(mapIDs) != len(got.MapIDs) {
			t.Fatalf("%s: maps %v, cilium/ebpf %v", name, got.MapIDs, mapIDs)
		}
		for i := range mapIDs {
			if uint32(mapIDs[i]) != got.MapIDs[i] {
				t.Errorf("%s: maps %v, cilium/ebpf %v", name, got.MapIDs, mapIDs)
			}
		}
	}

	m := coll.Maps[".rodata"]
	want, err := m.Info()
	if err != nil {
		t.Fatal(err)
	}
	got, err := GetMapInfo(m.FD())
	if err != nil {
		t.Fatal(err)
	}
	id, _ := want.ID()
	btfID, _ := want.BTFID()
	if got.ID != uint32(id) || got.Type != uint32(want.Type) || got.KeySize != want.KeySize || got.ValueSize != want.ValueSize ||
		got.MaxEntries != want.MaxEntries || got.Name != want.Name || got.BTFID != uint32(btfID) || got.BTFValueTypeID == 0 {
		t.Errorf("map: got %+v, cilium/ebpf %+v", got, want)
	}
	h, err := btf.NewHandleFromID(btfID)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s, err := h.Spec(nil)
	if err != nil {
		t.Fatal(err)
	}
	if vt, err := s.TypeByID(btf.TypeID(got.BTFValueTypeID)); err != nil || vt.TypeName() != ".rodata" {
		t.Errorf("btf_value_type_id %d: %v %v, want the .rodata DATASEC", got.BTFValueTypeID, vt, err)
	}
}

// TestNotBPF passes a file that is no BPF object.
func TestNotBPF(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := GetProgInfo(int(f.Fd())); !errors.Is(err, unix.EINVAL) {
		t.Errorf("GetProgInfo(%s): %v, want EINVAL", os.DevNull, err)
	}
	if _, err := GetMapInfo(int(f.Fd())); !errors.Is(err, unix.EINVAL) {
		t.Errorf("GetMapInfo(%s): %v, want EINVAL", os.DevNull, err)
	}
}
