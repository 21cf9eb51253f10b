package bpfmetatest_test

import (
	"fmt"
	"log"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/bpfmeta/bpfmeta/bpfmetatest"
)

// What Object compares with the golden: what perf will record of the
// object's programs once loaded, from the file, without root or perf. In
// a test: bpfmetatest.Object(t, "testdata/prog.golden", "prog.bpf.o").
func ExampleObjectText() {
	text, err := bpfmetatest.ObjectText("../testdata/bpf/versioned100.bpf.o")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(text))
	// Output:
	// bpfprogt_versio
	//   functions: bpfprogt_versioned
	//   entry:              version = "1.0.0"
	//   entry:                  abi = {1,"x86_64"}
	//   named:                  abi = {"major":1,"minor":0,"arch":"x86_64"}
	//   entry:                  api = 3
}

// A test of the metadata of the programs as loaded: it skips without root
// or kernel support, and fails when the verifier rejects a program.
func ExampleCollection() {
	_ = func(t *testing.T) {
		coll, err := ebpf.LoadCollection("prog.bpf.o")
		bpfmetatest.SkipIfNotSupported(t, err)
		defer coll.Close()
		bpfmetatest.Collection(t, "testdata/prog-loaded.golden", coll)
	}
}

// A test of a recording's metadata (perf >= 6.17's records, or those
// inject adds from the snapshot): it fails, also under -update, when
// xdp_main has no metadata in it.
func ExampleRecording() {
	_ = func(t *testing.T) {
		bpfmetatest.Recording(t, "testdata/prog.golden", "testdata/prog.data", "testdata/prog.snapshot.jsonl", "xdp_main")
	}
}
