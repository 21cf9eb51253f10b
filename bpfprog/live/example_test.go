package live_test

import (
	"fmt"
	"log"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
)

// List the loaded programs with the metadata perf record would write for
// them (bpfmeta programs). Needs root, so it has no output to check here.
func ExampleKernel_Programs() {
	k, err := live.Open()
	if err != nil {
		log.Fatal(err) // not root, or addresses hidden
	}
	progs, err := k.Programs() // all of them, or an error
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range progs {
		fmt.Printf("%d %s: %d functions", p.ID, p.Name, len(p.Funcs))
		if md, err := p.BPFMetadata(); err == nil {
			for _, e := range md.Entries {
				fmt.Printf(" %s = %s", e.Key, e.Value)
			}
		}
		fmt.Println()
	}
}
