package snapshot_test

import (
	"fmt"
	"log"

	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
)

// Read a snapshot (bpfmeta snapshot or watch wrote it) and print each
// program's metadata as perf records it, or why there is none.
// live.New reads the running kernel's programs the same way (as root).
func ExampleOpen() {
	snap, err := snapshot.Open("testdata/example.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	defer snap.Close()
	for p, err := range snap.All() {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("program %d %s (%s):", p.ID, p.Name, p.Tag)
		m, err := p.BPFMetadata()
		if err != nil {
			fmt.Println(" no metadata:", err)
			continue
		}
		for _, e := range m.Entries {
			fmt.Printf(" %s = %s", e.Key, e.Value)
		}
		fmt.Println()
	}
	// Output:
	// program 97 bpfprogt_multi_ (e21be2de8fc54252): version = "3.14159" build = 42
	// program 119 bpfprogt_nometa (a823616fe0b41d16): no metadata: program 119: BPF program has no metadata
}
