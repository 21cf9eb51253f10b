package stable_test

import (
	"log"
	"os"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/stable"
)

// What perf will record of an object's programs once loaded, from the
// file, with neither root nor perf: programs --stable --object's text.
func ExampleObjectFile() {
	progs, err := stable.ObjectFile("../testdata/bpf/versioned100.bpf.o")
	if err != nil {
		log.Fatal(err)
	}
	if err := stable.WritePrograms(os.Stdout, stable.Programs(progs)); err != nil {
		log.Fatal(err)
	}
	// Output:
	// bpfprogt_versio
	//   functions: bpfprogt_versioned
	//   entry:              version = "1.0.0"
	//   entry:                  abi = {1,"x86_64"}
	//   named:                  abi = {"major":1,"minor":0,"arch":"x86_64"}
	//   entry:                  api = 3
}

// The records of two loads of a program with a subprogram, on other hosts
// (other tags): show --stable's text, one group of functions with the same
// entries.
func ExampleFuncs() {
	var fns stable.Funcs
	defer fns.Close()
	entries := []perfdata.BPFMetadataEntry{{Key: "version", Value: `"1.0.0"`}, {Key: "api", Value: "3"}}
	for _, name := range []string{
		"bpf_prog_0123456789abcdef_xdp_main", "bpf_prog_0123456789abcdef_xdp_sub",
		"bpf_prog_fedcba9876543210_xdp_main", "bpf_prog_fedcba9876543210_xdp_sub",
	} {
		if err := fns.Add(perfdata.BPFMetadata{ProgName: name, Entries: entries}); err != nil {
			log.Fatal(err)
		}
	}
	if err := stable.WriteFuncs(os.Stdout, fns.Sorted()); err != nil {
		log.Fatal(err)
	}
	// Output:
	// xdp_main
	// xdp_sub
	//   entry:              version = "1.0.0"
	//   entry:                  api = 3
}
