package stable

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	ciliumbtf "github.com/cilium/ebpf/btf"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/btf"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// ObjectFile is ObjectPrograms of the BPF object file at path (clang's
// prog.bpf.o), with the kinds of its enums from its .BTF section: what
// perf will record for each of its programs once loaded, with neither
// root nor perf.
func ObjectFile(path string) ([]*bpfprog.Program, error) {
	spec, err := ebpf.LoadCollectionSpec(path)
	if err != nil {
		return nil, err
	}
	enums, err := objectEnums(path, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	progs, err := ObjectPrograms(spec, enums)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return progs, nil
}

// objectEnums reads which enums of the object's .BTF were ENUM64 (package
// btf's EnumKinds: libbpf prints them otherwise), nil without BTF.
func objectEnums(path string, spec *ebpf.CollectionSpec) (*btf.EnumKinds, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sec := f.Section(".BTF")
	if sec == nil || spec.Types == nil {
		return nil, nil
	}
	raw, err := io.ReadAll(io.LimitReader(sec.Open(), int64(min(sec.Size, 1<<30))))
	if err != nil {
		return nil, err
	}
	return btf.ReadEnumKinds(raw, spec.Types)
}

// ObjectPrograms is what perf will record for each program of spec once
// loaded, in the form programs --stable reads (Programs): its name as the
// kernel keeps it (15 bytes), its functions' names (main function first,
// then the subprograms as the object lays them out, as func_info orders
// them), and the entries of the map perf takes, computed from its BTF and
// contents as the kernel and perf will (live.MetadataEntries, the rule the
// running kernel's programs are read by). perf takes the first map of the
// program's maps that bpf_metadata_read_map_data() accepts: an array of one
// 4-byte key whose name has ".rodata" and whose value is a DATASEC with
// bpf_metadata_ variables, of at most perfdata.MaxBPFMetadataEntries. The
// kernel lists a program's maps in the order its instructions load them
// (resolve_pseudo_ldimm64()); libbpf then binds .rodata to every program
// (BPF_PROG_BIND_MAP), cilium/ebpf does not, so a program that never reads
// .rodata has this metadata when libbpf loads it and none when cilium/ebpf
// does. enums, if not nil, says which enums the raw BTF had as ENUM64.
func ObjectPrograms(spec *ebpf.CollectionSpec, enums *btf.EnumKinds) ([]*bpfprog.Program, error) {
	var progs []*bpfprog.Program
	for _, name := range slices.Sorted(maps.Keys(spec.Programs)) {
		ps := spec.Programs[name]
		p := &bpfprog.Program{Name: ps.Name}
		if len(p.Name) > objNameLen {
			p.Name = p.Name[:objNameLen]
		}
		for i := range ps.Instructions {
			if fn := ciliumbtf.FuncMetadata(&ps.Instructions[i]); fn != nil {
				p.Funcs = append(p.Funcs, bpfprog.Func{BTFName: fn.Name})
			}
		}
		if len(p.Funcs) == 0 {
			return nil, fmt.Errorf("program %s has no BTF of its functions (func_info): the names perf gives them depend on the load", name)
		}
		md, err := objectMetadata(spec, ps, enums)
		if err != nil {
			return nil, fmt.Errorf("program %s: %w", name, err)
		}
		p.Metadata = md
		progs = append(progs, p)
	}
	return progs, nil
}

// objNameLen is what the kernel keeps of a program's name:
// BPF_OBJ_NAME_LEN (16) bytes with the NUL.
const objNameLen = 15

// objectMetadata is perf's bpf_metadata_create() for a program of spec:
// the entries of the first of its maps perf accepts, or nil.
func objectMetadata(spec *ebpf.CollectionSpec, ps *ebpf.ProgramSpec, enums *btf.EnumKinds) (*bpfprog.Metadata, error) {
	var used []string
	for _, ins := range ps.Instructions {
		if ref := ins.Reference(); ins.IsLoadFromMap() && ref != "" && !slices.Contains(used, ref) {
			used = append(used, ref)
		}
	}
	if _, ok := spec.Maps[".rodata"]; ok && !slices.Contains(used, ".rodata") {
		used = append(used, ".rodata") // libbpf's BPF_PROG_BIND_MAP
	}
	for _, name := range used {
		ms := spec.Maps[name]
		if ms == nil || ms.Type != ebpf.Array || ms.KeySize != 4 || ms.MaxEntries != 1 || !strings.Contains(name, ".rodata") {
			continue
		}
		ds, ok := ms.Value.(*ciliumbtf.Datasec)
		if !ok {
			continue
		}
		if n := live.MetadataVars(ds); n == 0 || n > perfdata.MaxBPFMetadataEntries {
			continue
		}
		value := make([]byte, ms.ValueSize)
		if len(ms.Contents) > 0 {
			b, ok := ms.Contents[0].Value.([]byte)
			if !ok {
				return nil, fmt.Errorf("map %s: contents of %T, not bytes", name, ms.Contents[0].Value)
			}
			copy(value, b)
		}
		if err := setVariables(value, spec, name); err != nil {
			return nil, fmt.Errorf("map %s: %w", name, err)
		}
		entries, err := live.MetadataEntries(ds, value, enums)
		var me *bpfprog.MetadataError
		if errors.As(err, &me) {
			return nil, fmt.Errorf("map %s: entry %q: %w", name, me.Key, me.Err)
		}
		return &bpfprog.Metadata{MapName: name, Entries: entries}, err
	}
	return nil, nil
}

// setVariables writes into value, the contents of map section, the values
// of spec's variables in it, which a test may have set
// (ebpf.VariableSpec.Set), as cilium/ebpf's MapSpec.updateDataSection()
// does before the load.
func setVariables(value []byte, spec *ebpf.CollectionSpec, section string) error {
	for name, v := range spec.Variables {
		if v.SectionName != section || v.Value == nil {
			continue
		}
		if end := uint64(v.Offset) + uint64(len(v.Value)); end > uint64(len(value)) {
			return fmt.Errorf("variable %s (offset %d, %d bytes) exceeds the map's %d bytes", name, v.Offset, len(v.Value), len(value))
		}
		copy(value[v.Offset:], v.Value)
	}
	return nil
}
