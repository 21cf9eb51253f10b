// Package bpfsys is the few bpf(2) queries bpfmeta needs that cilium/ebpf does not expose.
//
// It wraps the few bpf(2) queries bpfmeta needs that cilium/ebpf v0.22.0
// does not expose: the per-function tags (bpf_prog_info.prog_tags), the raw
// func_info records (BTF type ids, so that they can be resolved against a
// BTF object other than the program's, as perf does) and a map's
// btf_value_type_id.
//
// It is not a general bpf(2) library: file descriptors come from cilium/ebpf
// (Program.FD, Map.FD), and only BPF_OBJ_GET_INFO_BY_FD is issued. The
// structures mirror the uapi <linux/bpf.h> layout, whose u64 fields are
// all at multiples of 8, on 64-bit and 32-bit Linux alike.
package bpfsys

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Tag is a BPF program's or function's tag as the kernel reports it
// (BPF_TAG_SIZE bytes): perfdata.BPFTag's bytes, kept apart so that this
// package, below the library, imports none of it.
type Tag [8]byte

// objNameLen is BPF_OBJ_NAME_LEN.
const objNameLen = 16

// funcInfoRecSize is sizeof(struct bpf_func_info) {u32 insn_off; u32 type_id},
// the only record size the kernel accepts when func_info is requested.
const funcInfoRecSize = 8

// pointer is an __aligned_u64 user pointer (the kernel's u64_to_user_ptr
// reads all 8 bytes). Holding it as unsafe.Pointer (not uintptr) keeps the
// buffer alive and visible to the garbage collector while the kernel writes
// into it. The type is declared per word size and byte order
// (pointer64.go, pointer32le.go, pointer32be.go): on a 32-bit platform the
// pointer fills the u64's low half and the high half stays zero.
//
// Compile-time check that pointer is 8 bytes on every platform: the index
// is out of range (a build error) otherwise.
var _ = [1]struct{}{}[unsafe.Sizeof(pointer{})-8]

func ptr[T any](s []T) pointer {
	if len(s) == 0 {
		return pointer{}
	}
	return toPointer(unsafe.Pointer(&s[0]))
}

// progInfo is struct bpf_prog_info as of Linux 6.18.
type progInfo struct {
	Type                 uint32
	ID                   uint32
	Tag                  Tag
	JitedProgLen         uint32
	XlatedProgLen        uint32
	JitedProgInsns       pointer
	XlatedProgInsns      pointer
	LoadTime             uint64
	CreatedByUID         uint32
	NrMapIDs             uint32
	MapIDs               pointer
	Name                 [objNameLen]byte
	Ifindex              uint32
	GPLCompatible        uint32 // bitfield: bit 0
	NetnsDev             uint64
	NetnsIno             uint64
	NrJitedKsyms         uint32
	NrJitedFuncLens      uint32
	JitedKsyms           pointer
	JitedFuncLens        pointer
	BTFID                uint32
	FuncInfoRecSize      uint32
	FuncInfo             pointer
	NrFuncInfo           uint32
	NrLineInfo           uint32
	LineInfo             pointer
	JitedLineInfo        pointer
	NrJitedLineInfo      uint32
	LineInfoRecSize      uint32
	JitedLineInfoRecSize uint32
	NrProgTags           uint32
	ProgTags             pointer
	RunTimeNs            uint64
	RunCnt               uint64
	RecursionMisses      uint64
	VerifiedInsns        uint32
	AttachBTFObjID       uint32
	AttachBTFID          uint32
	_                    uint32
}

// progInfoMinLen is offsetof(struct bpf_prog_info, prog_tags) + 8: a kernel
// that returns less knows no per-function tags (perf's "kernel is too old").
const progInfoMinLen = uint32(unsafe.Offsetof(progInfo{}.ProgTags) + 8)

// mapInfo is struct bpf_map_info as of Linux 6.18.
type mapInfo struct {
	Type                  uint32
	ID                    uint32
	KeySize               uint32
	ValueSize             uint32
	MaxEntries            uint32
	MapFlags              uint32
	Name                  [objNameLen]byte
	Ifindex               uint32
	BTFVmlinuxValueTypeID uint32
	NetnsDev              uint64
	NetnsIno              uint64
	BTFID                 uint32
	BTFKeyTypeID          uint32
	BTFValueTypeID        uint32
	_                     uint32
	MapExtra              uint64
}

// objGetInfoByFdAttr is the BPF_OBJ_GET_INFO_BY_FD member of union bpf_attr.
type objGetInfoByFdAttr struct {
	BPFFd   uint32
	InfoLen uint32
	Info    pointer
}

// errTooOld is returned when the kernel's bpf_prog_info has no prog_tags.
var errTooOld = errors.New("kernel reports no per-function tags (bpf_prog_info.prog_tags, Linux >= 5.0)")

// objInfo issues BPF_OBJ_GET_INFO_BY_FD and returns the info_len the kernel
// wrote back (the size of the prefix of the structure it knows).
func objInfo(fd int, info unsafe.Pointer, size uintptr) (uint32, error) {
	attr := objGetInfoByFdAttr{BPFFd: uint32(fd), InfoLen: uint32(size), Info: toPointer(info)}
	_, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_OBJ_GET_INFO_BY_FD,
		uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(info)
	if errno != 0 {
		return 0, errno
	}
	return attr.InfoLen, nil
}

// FuncInfo is one struct bpf_func_info record: the first instruction of a
// function and the BTF type id of its FUNC in the program's BTF.
type FuncInfo struct {
	InsnOff uint32
	TypeID  uint32
}

// ProgInfo is the part of struct bpf_prog_info that perf's
// perf_event__synthesize_one_bpf_prog() and bpf_metadata_create() use.
type ProgInfo struct {
	Type         uint32
	ID           uint32
	Tag          Tag    // whole-program tag (the BPF_EVENT tag)
	LoadTime     uint64 // ns since boot
	CreatedByUID uint32
	Name         string // bpf_prog_info.name: at most 15 bytes
	BTFID        uint32
	MapIDs       []uint32
	// Per JITed function, in kernel order. JitedKsyms is nil when the
	// kernel hides addresses from this caller (kernel.kptr_restrict, or
	// bpf_dump_raw_ok() false); the counts are still reported.
	NrJitedKsyms  uint32
	JitedKsyms    []uint64
	JitedFuncLens []uint32
	ProgTags      []Tag
	// FuncInfoRecSize is the kernel's func_info_rec_size (0 without func_info).
	FuncInfoRecSize uint32
	FuncInfos       []FuncInfo
}

// GetProgInfo reads the program info of the BPF program fd (it must be a
// program: the kernel answers for whatever object fd is) with the arrays
// perf reads (map_ids, jited_ksyms, jited_func_lens, func_info, prog_tags) in
// two BPF_OBJ_GET_INFO_BY_FD calls, as libbpf's bpf_program__get_prog_info_linear()
// and perf's get_bpf_prog_info_linear() do: the first for the counts, the
// second for the arrays. Only map_ids can grow between the calls (a
// BPF_PROG_BIND_MAP); the first count is kept then.
func GetProgInfo(fd int) (*ProgInfo, error) {
	var first progInfo
	n, err := objInfo(fd, unsafe.Pointer(&first), unsafe.Sizeof(first))
	if err != nil {
		return nil, fmt.Errorf("BPF_OBJ_GET_INFO_BY_FD (program, fd %d): %w", fd, err)
	}
	if n < progInfoMinLen {
		return nil, fmt.Errorf("BPF_OBJ_GET_INFO_BY_FD (program, fd %d): info_len %d: %w", fd, n, errTooOld)
	}

	p := &ProgInfo{
		Type:         first.Type,
		ID:           first.ID,
		Tag:          first.Tag,
		LoadTime:     first.LoadTime,
		CreatedByUID: first.CreatedByUID,
		Name:         unix.ByteSliceToString(first.Name[:]),
		BTFID:        first.BTFID,
		NrJitedKsyms: first.NrJitedKsyms,
	}
	if first.FuncInfoRecSize != 0 && first.FuncInfoRecSize != funcInfoRecSize {
		return nil, fmt.Errorf("program %d: func_info_rec_size %d, want %d", first.ID, first.FuncInfoRecSize, funcInfoRecSize)
	}

	mapIDs := make([]uint32, first.NrMapIDs)
	ksyms := make([]uint64, first.NrJitedKsyms)
	lens := make([]uint32, first.NrJitedFuncLens)
	tags := make([]Tag, first.NrProgTags)
	finfo := make([]FuncInfo, first.NrFuncInfo)
	second := progInfo{
		NrMapIDs:        first.NrMapIDs,
		MapIDs:          ptr(mapIDs),
		NrJitedKsyms:    first.NrJitedKsyms,
		JitedKsyms:      ptr(ksyms),
		NrJitedFuncLens: first.NrJitedFuncLens,
		JitedFuncLens:   ptr(lens),
		NrProgTags:      first.NrProgTags,
		ProgTags:        ptr(tags),
		NrFuncInfo:      first.NrFuncInfo,
		FuncInfo:        ptr(finfo),
	}
	if first.NrFuncInfo > 0 {
		second.FuncInfoRecSize = funcInfoRecSize
	}
	if _, err := objInfo(fd, unsafe.Pointer(&second), unsafe.Sizeof(second)); err != nil {
		return nil, fmt.Errorf("BPF_OBJ_GET_INFO_BY_FD (program %d arrays): %w", first.ID, err)
	}
	runtime.KeepAlive(mapIDs)
	runtime.KeepAlive(ksyms)
	runtime.KeepAlive(lens)
	runtime.KeepAlive(tags)
	runtime.KeepAlive(finfo)

	if second.ID != first.ID || second.NrJitedKsyms != first.NrJitedKsyms ||
		second.NrProgTags != first.NrProgTags || second.NrFuncInfo != first.NrFuncInfo {
		return nil, fmt.Errorf("program %d: bpf_prog_info changed between two reads", first.ID)
	}
	p.MapIDs = mapIDs
	if first.NrJitedKsyms > 0 && second.JitedKsyms.p != nil {
		p.JitedKsyms = ksyms
	}
	p.JitedFuncLens = lens
	p.ProgTags = tags
	p.FuncInfos = finfo
	p.FuncInfoRecSize = first.FuncInfoRecSize
	return p, nil
}

// MapInfo is struct bpf_map_info, with the BTF fields cilium/ebpf's MapInfo
// leaves out.
type MapInfo struct {
	Type           uint32
	ID             uint32
	KeySize        uint32
	ValueSize      uint32
	MaxEntries     uint32
	Flags          uint32
	Name           string // at most 15 bytes
	BTFID          uint32
	BTFKeyTypeID   uint32
	BTFValueTypeID uint32
}

// GetMapInfo reads the map info of the BPF map fd (it must be a map).
func GetMapInfo(fd int) (*MapInfo, error) {
	var mi mapInfo
	if _, err := objInfo(fd, unsafe.Pointer(&mi), unsafe.Sizeof(mi)); err != nil {
		return nil, fmt.Errorf("BPF_OBJ_GET_INFO_BY_FD (map, fd %d): %w", fd, err)
	}
	return &MapInfo{
		Type:           mi.Type,
		ID:             mi.ID,
		KeySize:        mi.KeySize,
		ValueSize:      mi.ValueSize,
		MaxEntries:     mi.MaxEntries,
		Flags:          mi.MapFlags,
		Name:           unix.ByteSliceToString(mi.Name[:]),
		BTFID:          mi.BTFID,
		BTFKeyTypeID:   mi.BTFKeyTypeID,
		BTFValueTypeID: mi.BTFValueTypeID,
	}, nil
}

// btfInfo is struct bpf_btf_info.
type btfInfo struct {
	BTF       pointer
	BTFSize   uint32
	ID        uint32
	Name      pointer
	NameLen   uint32
	KernelBTF uint32
}

// maxRawBTF bounds the raw BTF read of one object: vmlinux's is about 6 MiB,
// a program's a few KiB.
const maxRawBTF = 64 << 20

// GetBTF reads the raw BTF of the BTF object fd (it must be one), in two
// BPF_OBJ_GET_INFO_BY_FD calls as libbpf's btf_get_from_fd() does: the
// first for the size, the second for the bytes. cilium/ebpf reads it the
// same way but keeps only the types it parses.
func GetBTF(fd int) ([]byte, error) {
	var info btfInfo
	if _, err := objInfo(fd, unsafe.Pointer(&info), unsafe.Sizeof(info)); err != nil {
		return nil, fmt.Errorf("BPF_OBJ_GET_INFO_BY_FD (BTF, fd %d): %w", fd, err)
	}
	if info.BTFSize == 0 || info.BTFSize > maxRawBTF {
		return nil, fmt.Errorf("BTF object %d has %d bytes of BTF", info.ID, info.BTFSize)
	}
	raw := make([]byte, info.BTFSize)
	info = btfInfo{BTF: ptr(raw), BTFSize: uint32(len(raw))}
	if _, err := objInfo(fd, unsafe.Pointer(&info), unsafe.Sizeof(info)); err != nil {
		return nil, fmt.Errorf("BPF_OBJ_GET_INFO_BY_FD (BTF, fd %d): %w", fd, err)
	}
	if int(info.BTFSize) != len(raw) {
		return nil, fmt.Errorf("BTF object %d changed size while read (%d, then %d bytes)", info.ID, len(raw), info.BTFSize)
	}
	return raw, nil
}
