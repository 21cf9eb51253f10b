package watch_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/bpfprog/watch"
)

// Snapshot every BPF program loaded while a command runs, as bpfmeta watch
// -o watch.jsonl -- perf record ... does: programs the command loads and
// unloads before the recording is injected are in the snapshot, which
// inject reads as a Source (snapshot.Open). Needs root, so it has no
// output to check here.
func ExampleStartSnapshot() {
	k, err := live.Open()
	if err != nil {
		log.Fatal(err) // not root, or addresses hidden
	}
	f, err := os.OpenFile("watch.jsonl", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	// From here on no program load is missed: start the command.
	w, err := watch.StartSnapshot(k, f)
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command("perf", "record", "-o", "watched.data", "--", "sleep", "1")
	cmdErr := cmd.Run()
	st, written, err := w.Stop()
	if err != nil {
		log.Fatal(err) // a *watch.IncompleteError: the snapshot holds the programs written before, and inject says it is incomplete
	}
	if cmdErr != nil {
		log.Fatal(cmdErr)
	}
	fmt.Printf("%d programs in the snapshot: %d loaded at the start, %d while watching (%d since unloaded); %d missed\n",
		written, st.AtStart, st.Loaded, st.Unloaded, st.Lost+st.Failed)

	snap, err := snapshot.Open("watch.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	defer snap.Close()
	fmt.Println("complete:", snap.Incomplete == "")
}

// Follow program loads for a while and print each program as soon as it
// has been read, with the metadata perf would write for it: the Watcher
// behind StartSnapshot. Needs root.
func ExampleNew() {
	k, err := live.New()
	if err != nil {
		log.Fatal(err)
	}
	w, err := watch.New(k, watch.Options{Emit: func(p *bpfprog.Program) error {
		fmt.Printf("program %d %s:", p.ID, p.Name)
		if md, err := p.BPFMetadata(); err == nil {
			for _, e := range md.Entries {
				fmt.Printf(" %s = %s", e.Key, e.Value)
			}
		}
		fmt.Println()
		return nil
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	// New has emitted the programs loaded now; Run emits those loaded
	// until ctx is done.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
	st := w.Stats()
	fmt.Printf("%d loaded while watching, %d missed\n", st.Loaded, st.Lost+st.Failed)
}
