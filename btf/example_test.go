package btf_test

import (
	"fmt"

	ciliumbtf "github.com/cilium/ebpf/btf"

	"github.com/bpfmeta/bpfmeta/btf"
)

// A map value printed as bpftool and libbpf print it, then as perf records
// it in a BPF_METADATA record.
func ExampleDumper() {
	i32 := &ciliumbtf.Int{Name: "int", Size: 4, Encoding: ciliumbtf.Signed}
	char := &ciliumbtf.Int{Name: "char", Size: 1, Encoding: ciliumbtf.Signed}
	conf := &ciliumbtf.Struct{Name: "conf", Size: 12, Members: []ciliumbtf.Member{
		{Name: "rate", Type: i32, Offset: 0},
		{Name: "name", Type: &ciliumbtf.Array{Index: i32, Type: char, Nelems: 8}, Offset: 32},
	}}
	value := []byte{100, 0, 0, 0, 'e', 't', 'h', '0', 0, 0, 0, 0}

	d := btf.Dumper{Compact: true}
	s, _ := d.Dump(conf, value)
	fmt.Println(s)

	perf := btf.Dumper{Compact: true, SkipNames: true, EmitStrings: true}
	s, _ = perf.Dump(conf, value)
	fmt.Println(s)

	lines := btf.Dumper{Indent: "  "}
	s, _ = lines.Dump(conf, value)
	fmt.Println(s)
	// Output:
	// (struct conf){.rate = (int)100,.name = (char[8])['e','t','h','0',],}
	// {100,"eth0"}
	// (struct conf){
	//   .rate = (int)100,
	//   .name = (char[8])[
	//     'e',
	//     't',
	//     'h',
	//     '0',
	//   ],
	// }
}
