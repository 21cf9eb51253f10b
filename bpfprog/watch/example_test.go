package watch_test

import (
	"fmt"
	"log"
	"os"
	"os/exec"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/watch"
)

// Follow the programs loaded while a command runs into a snapshot file,
// as bpfmeta watch does, so that inject can label them after they are
// gone. Needs root, so it has no output to check here.
func ExampleStartSnapshot() {
	k, err := live.New()
	if err != nil {
		log.Fatal(err)
	}
	if err := k.Check(); err != nil {
		log.Fatal(err)
	}
	f, err := os.Create("watch.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	s, err := watch.StartSnapshot(k, f) // from here on, no load is missed
	if err != nil {
		log.Fatal(err)
	}
	if err := exec.Command("bpftool", "prog", "list").Run(); err != nil {
		log.Print(err)
	}
	st, n, err := s.Stop()
	if err != nil {
		log.Fatal(err) // the snapshot holds what was read, and is incomplete
	}
	fmt.Printf("%d programs in the snapshot, %d loaded at the start, %d missed\n", n, st.AtStart, st.Lost+st.Failed)
}
