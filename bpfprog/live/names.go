package live

import "github.com/bpfmeta/bpfmeta/perfdata"

// funcInfoRecSize is sizeof(struct bpf_func_info).
const funcInfoRecSize = 8

// nameInfo is what perf's synthesize_bpf_prog_name() reads from
// struct bpf_prog_info.
type nameInfo struct {
	progTags        []perfdata.BPFTag // prog_tags
	name            string            // name
	nrJitedKsyms    int               // nr_jited_ksyms
	funcInfoRecSize uint32            // func_info_rec_size
	funcTypeIDs     []uint32          // func_info[i].type_id, nr_func_info of them
}

// typeNamer resolves a BTF type id to the type's name in one BTF object, as
// btf__type_by_id() + btf__name_by_offset() do. ok is false when the object
// has no type with that id (btf__type_by_id() returns NULL). Id 0 is void,
// whose name is "".
type typeNamer func(id uint32) (name string, ok bool, err error)

// synthesizeProgName is perf's synthesize_bpf_prog_name(info, btf, i) as perf
// 7.2 has it (tools/perf/util/bpf-event.c; read from the perf 7.2.13 binary,
// which checks what the 6.17 source does not): "bpf_prog_" + hex(prog_tags[i]),
// then
//
//   - with a BTF object, func_info_rec_size >= sizeof(bpf_func_info) and
//     i < nr_func_info: "_" + the name of type func_info[i].type_id in that
//     BTF, or nothing at all if the BTF has no such type;
//   - else, for the only function of a program (i == 0, nr_jited_ksyms == 1):
//     "_" + info->name, or nothing if the name is empty;
//   - else "_F".
//
// btf is nil for "no BTF object".
func synthesizeProgName(info *nameInfo, btf typeNamer, i int) (string, error) {
	tag := info.progTags[i]
	switch {
	case btf != nil && info.funcInfoRecSize >= funcInfoRecSize && i < len(info.funcTypeIDs):
		short, ok, err := btf(info.funcTypeIDs[i])
		if err != nil {
			return "", err
		}
		if !ok {
			return perfdata.BPFProgName(tag, ""), nil
		}
		// an anonymous type still gets the "_": "bpf_prog_<tag>_"
		return perfdata.CutBPFProgName(perfdata.BPFProgName(tag, "") + "_" + short), nil
	case i == 0 && info.nrJitedKsyms == 1:
		return perfdata.BPFProgName(tag, info.name), nil
	}
	return perfdata.BPFProgName(tag, "F"), nil
}

// kernelKsymName is the name the kernel gives function i in kallsyms and in
// its KSYMBOL records (kernel/bpf/core.c bpf_prog_ksym_set_name): the main
// function (i == 0) is the program itself and carries the whole-program tag,
// subprograms (func[i], i >= 1) their own tag; then "_" + the BTF func name
// when the program has func_info, else "_" + aux->name, which is the program's
// name for the main function (nothing if empty) and "F" for subprograms
// (verifier.c jit_subprogs: func[i]->aux->name[0] = 'F').
func kernelKsymName(progTag, funcTag perfdata.BPFTag, i int, btfName string, haveFuncInfo bool, progName string) string {
	tag := funcTag
	if i == 0 {
		tag = progTag
	}
	switch {
	case haveFuncInfo:
		return perfdata.CutBPFProgName(perfdata.BPFProgName(tag, "") + "_" + btfName)
	case i > 0:
		return perfdata.BPFProgName(tag, "F")
	}
	return perfdata.BPFProgName(tag, progName)
}
