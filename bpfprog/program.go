// Package bpfprog is the model of a BPF program and its metadata, as perf records them.
//
// It models loaded BPF programs the way perf sees them: per JITed function
// its tag, address, length and names, and the bpf_metadata_* entries that
// perf record >= 6.17 writes into PERF_RECORD_BPF_METADATA; the Source
// interface programs are looked up through; and the JSON form of a program,
// function and entry that every document of bpfmeta shares (snapshot,
// programs --json, show --json), with its one rule for kernel addresses
// (Addr).
//
// Programs come from a Source: the running kernel (package bpfprog/live), a
// snapshot file (package bpfprog/snapshot), the kernel with the journal of
// the programs it no longer has (package bpfprog/journal), or a List held
// in memory. A
// Source is asked for one program at a time, by the id and tag of a
// PERF_RECORD_BPF_EVENT, and says whether that id is unknown (ErrNotFound) or
// belongs to a program with another tag (ErrTagMismatch), so that a caller
// never labels a recording's program with another program's metadata.
//
// Three names exist for function i of a program, and they differ:
//
//   - Func.PerfName: the KSYMBOL name perf synthesizes for programs that were
//     loaded before perf record started (perf's synthesize_bpf_prog_name() with
//     the program's BTF): "bpf_prog_" + hex(prog_tags[i]) + "_" + BTF name.
//   - Func.KernelName: the name in /proc/kallsyms and in the KSYMBOLs the
//     kernel emits for programs loaded during a recording. For the main
//     function (i == 0) of a program with subprograms the kernel uses the
//     whole-program tag, not prog_tags[0].
//   - Metadata.ProgNames[i]: the prog_name perf's bpf_metadata_create() writes
//     into BPF_METADATA. perf resolves the function's BTF type id in the
//     metadata MAP's BTF, which is the program's BTF for libbpf loaders but a
//     separate BTF object for cilium/ebpf loaders; then the name is whatever
//     type has that id there ("bpf_prog_<tag>_" for an anonymous type,
//     "bpf_prog_<tag>_int", ...), or "bpf_prog_<tag>" when the map's BTF has
//     no type with that id. These are the names perf 7.2 writes; perf 6.17's
//     code does not check the id and may crash or read garbage instead.
//
// The package reads no kernel and no file (bpfprog/live and
// bpfprog/snapshot do), and does not read or write perf.data; package
// inject decides which records to add, and package btf formats the values.
package bpfprog

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cilium/ebpf"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Program is one loaded BPF program.
type Program struct {
	ID  uint32
	Tag perfdata.BPFTag // whole-program tag: the tag in PERF_RECORD_BPF_EVENT
	// Name is bpf_prog_info.name as the kernel keeps it: at most 15 bytes.
	Name string
	Type ebpf.ProgramType
	// LoadTime is bpf_prog_info.load_time: CLOCK_BOOTTIME when it was
	// loaded. LoadedAt is the same moment as a date, on the clock of the
	// machine it was read on.
	LoadTime     time.Duration
	LoadedAt     time.Time
	CreatedByUID uint32
	BTFID        uint32 // the program's BTF object; 0 without BTF
	MapIDs       []uint32
	// Funcs are the program's functions in kernel order (bpf_prog_info.prog_tags
	// order): the main function first, then the subprograms.
	Funcs []Func
	// Metadata is what perf record writes into BPF_METADATA for this program,
	// nil if perf writes none. It is incomplete when MetadataErr is set.
	Metadata *Metadata
	// MetadataErr says why Metadata is not exactly what perf writes (a value
	// that could not be formatted, a BTF object that could not be read). Use
	// BPFMetadata to get metadata only when it is exact.
	MetadataErr error
	// TooLarge is set when perf writes no metadata for the program because
	// its metadata has too many variables (Metadata is then nil).
	TooLarge *TooLargeError
}

// Func is one JITed function of a program.
type Func struct {
	Tag perfdata.BPFTag // bpf_prog_info.prog_tags[i]
	// BTFName is the name of the function's BTF FUNC (func_info[i] in the
	// program's BTF); empty for programs loaded without func_info.
	BTFName string
	// Addr and Len are bpf_prog_info.jited_ksyms[i] and jited_func_lens[i]:
	// the KSYMBOL addr and len. Addr is 0 when the kernel hides addresses
	// from the reader (kernel.kptr_restrict, no CAP_SYSLOG).
	Addr uint64
	Len  uint32
	// PerfName is the KSYMBOL name perf synthesizes for a program that was
	// loaded before the recording started.
	PerfName string
	// KernelName is the name in /proc/kallsyms and in the kernel's KSYMBOLs
	// for a program loaded during a recording.
	KernelName string
}

// Hidden reports that the kernel hid the function's address (and its
// length) from the reader: Addr is 0, which no JITed function has. The
// one rule of the commands' "hidden", JSON's null and live.CheckAddresses.
func (f Func) Hidden() bool { return f.Addr == 0 }

// Metadata is the content of the BPF_METADATA records perf writes for a
// program: one record per function, all with the same entries.
type Metadata struct {
	MapID   uint32 // the .rodata map the entries come from
	MapName string // bpf_map_info.name (".rodata", "<obj>.rodata")
	// BTFID is the map's BTF object. It is Program.BTFID for programs
	// loaded by libbpf, a separate object for programs loaded by cilium/ebpf.
	BTFID uint32
	// ProgNames holds the prog_name of each BPF_METADATA record, one per
	// function, in the order of Program.Funcs.
	ProgNames []string
	// Entries in DATASEC variable order.
	Entries []Entry
}

// Entry is one metadata variable as perf records it.
type Entry struct {
	// Key is the variable name without "bpf_metadata_", at most 63 bytes
	// (perf's snprintf into key[64]: perfdata.BPFMetadataKey).
	Key string `json:"key"`
	// Value is the value as libbpf's btf_dump__dump_type_data() prints it
	// for perf, at most 255 bytes: what the record holds.
	Value string `json:"value"`
	// Typed is the value as JSON (strings, numbers, enumerators by name,
	// objects and arrays), where its type allows: for programs, not perf.
	// An Entry is its own JSON form, in every document (a program's
	// metadata, a record of show --json).
	Typed json.RawMessage `json:"typed,omitempty"`
}

// Errors a Source returns. Use errors.Is: the returned errors wrap these with
// the program id.
var (
	// ErrNotFound: no program with that id (never loaded, unloaded, or not
	// in the snapshot).
	ErrNotFound = errors.New("no such BPF program")
	// ErrTagMismatch: a program with that id exists but has another tag: the
	// id was reused, or the recording was made in another boot than the source.
	// The error is a *TagMismatchError.
	ErrTagMismatch = errors.New("BPF program tag differs")
	// ErrLimit: the source could not say, because what it holds is over a
	// bound of bpfmeta's (a journal's index, the memory budget): not an
	// answer, and a program it leaves without metadata is an error.
	ErrLimit = errors.New("over a limit of bpfmeta's")
	// ErrNoMetadata: perf writes no BPF_METADATA for the program: it has no
	// .rodata map with bpf_metadata_ variables, or (TooLargeError) too many.
	ErrNoMetadata = errors.New("BPF program has no metadata")
)

// TagMismatchError is returned when the program with ID has tag Got, not Want.
type TagMismatchError struct {
	ID        uint32
	Want, Got perfdata.BPFTag
}

func (e *TagMismatchError) Error() string {
	return fmt.Sprintf("program %d has tag %s, not %s (id reused, or a recording from another boot)", e.ID, e.Got, e.Want)
}

// Is reports whether target is ErrTagMismatch.
func (e *TagMismatchError) Is(target error) bool { return target == ErrTagMismatch }

// TooLargeError says that perf writes no metadata for a program because
// its metadata map has more variables than a record holds.
type TooLargeError struct {
	MapID     uint32 `json:"map_id"`
	Variables int    `json:"variables"`
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("its metadata map %d has %d bpf_metadata_ variables; perf writes BPF_METADATA for at most %d", e.MapID, e.Variables, perfdata.MaxBPFMetadataEntries)
}

// Is reports whether target is ErrNoMetadata: perf writes none.
func (e *TooLargeError) Is(target error) bool { return target == ErrNoMetadata }

// MetadataError says why a program's metadata is not known exactly.
type MetadataError struct {
	ProgID uint32
	MapID  uint32 // 0 if not about one map
	Key    string // the entry, if about one
	Err    error
}

func (e *MetadataError) Error() string {
	s := fmt.Sprintf("program %d: metadata", e.ProgID)
	if e.MapID != 0 {
		s += fmt.Sprintf(" (map %d)", e.MapID)
	}
	if e.Key != "" {
		s += fmt.Sprintf(" entry %q", e.Key)
	}
	return s + ": " + e.Err.Error()
}

func (e *MetadataError) Unwrap() error { return e.Err }

// BPFMetadata returns the program's metadata if it is exactly what perf
// records: an error wrapping ErrNoMetadata if perf records none, MetadataErr
// if it is not known exactly.
func (p *Program) BPFMetadata() (*Metadata, error) {
	switch {
	case p.MetadataErr != nil:
		return nil, p.MetadataErr
	case p.TooLarge != nil:
		return nil, fmt.Errorf("program %d: %w", p.ID, p.TooLarge)
	case p.Metadata == nil:
		return nil, fmt.Errorf("program %d: %w", p.ID, ErrNoMetadata)
	}
	return p.Metadata, nil
}

// HasMetadata reports whether the program has metadata exactly as perf
// records it (BPFMetadata: known exactly, not too large): what "with
// metadata" counts in bpfmeta programs -v and watch's summary alike.
func (p *Program) HasMetadata() bool {
	_, err := p.BPFMetadata()
	return err == nil
}

// Check rejects a program no Source may hand out, whatever a file claims:
// one whose metadata perf could not have recorded (more entries than a
// record holds, a key or value longer than perf's, a prog_name count that
// is not its function count).
func (p *Program) Check() error {
	if md := p.Metadata; md != nil && len(md.ProgNames) != len(p.Funcs) {
		return fmt.Errorf("program %d: %d metadata prog_names for %d functions", p.ID, len(md.ProgNames), len(p.Funcs))
	}
	if md := p.Metadata; md != nil {
		for _, e := range md.Entries {
			if len(e.Key) >= perfdata.BPFMetadataKeyLen || len(e.Value) >= perfdata.BPFMetadataValueLen {
				return fmt.Errorf("program %d: an entry longer than perf records (key %d bytes, value %d)", p.ID, len(e.Key), len(e.Value))
			}
		}
		if len(md.Entries) > perfdata.MaxBPFMetadataEntries {
			return fmt.Errorf("program %d: %d metadata entries, perf records at most %d", p.ID, len(md.Entries), perfdata.MaxBPFMetadataEntries)
		}
	}
	return nil
}

// programTypes are libbpf's names of the program types (prog_type_name[]),
// which bpftool prints, by enum bpf_prog_type.
var programTypes = []string{
	"unspec", "socket_filter", "kprobe", "sched_cls", "sched_act", "tracepoint", "xdp",
	"perf_event", "cgroup_skb", "cgroup_sock", "lwt_in", "lwt_out", "lwt_xmit", "sock_ops",
	"sk_skb", "cgroup_device", "sk_msg", "raw_tracepoint", "cgroup_sock_addr",
	"lwt_seg6local", "lirc_mode2", "sk_reuseport", "flow_dissector", "cgroup_sysctl",
	"raw_tracepoint_writable", "cgroup_sockopt", "tracing", "struct_ops", "ext", "lsm",
	"sk_lookup", "syscall", "netfilter",
}

// TypeName is the program type as bpftool names it ("socket_filter"), or
// its number for a type libbpf does not know.
func TypeName(t ebpf.ProgramType) string {
	if int(t) < len(programTypes) {
		return programTypes[t]
	}
	return strconv.FormatUint(uint64(t), 10)
}

func parseTypeName(s string) (ebpf.ProgramType, error) {
	for i, n := range programTypes {
		if n == s {
			return ebpf.ProgramType(i), nil
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, errors.New("not a program type libbpf names, nor a number")
	}
	return ebpf.ProgramType(n), nil
}

// Named reports whether prog names p (perfdata.ProgNamed, the rule of
// every --prog and --require): its id in decimal, its name
// (bpf_prog_info.name), or the name of one of its functions (the BTF name,
// or the KSYMBOL name perf or the kernel gives it, with or without
// bpf_prog_<tag>_).
func (p *Program) Named(prog string) bool {
	names := []string{p.Name}
	for _, f := range p.Funcs {
		names = append(names, f.BTFName, f.PerfName, f.KernelName)
	}
	return perfdata.ProgNamed(prog, p.ID, names...)
}
