package btf

import "github.com/cilium/ebpf/btf"

// perf's preset: perf's format_btf_variable() dumps bpf_metadata_
// variables with {.compact = 1, .skip_names = 1, .emit_strings = 1} into a
// buffer of BPF_METADATA_VALUE_LEN bytes.
const valueLen = 256

var perfDumper = Dumper{Compact: true, SkipNames: true, EmitStrings: true}

func perfFormat(t btf.Type, data []byte) (string, error) { return perfDumper.Dump(t, data) }

func perfFormatN(t btf.Type, data []byte, n int) (string, error) {
	d := perfDumper
	d.Truncate = max(n-1, 0)
	if n <= 1 {
		d.Truncate = -1
	}
	return d.Dump(t, data)
}

func perfFormatVar(v btf.VarSecinfo, rodata []byte, n int) (string, error) {
	d := perfDumper
	d.Truncate = max(n-1, 0)
	return d.DumpVar(v, rodata)
}
