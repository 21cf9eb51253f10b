package snapshot_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
)

// Take a snapshot, and read it back as a Source. bpfmeta snapshot takes
// one of the running kernel (live.New) into a file; here the programs are
// held in memory and the snapshot too.
func ExampleTake() {
	src := &bpfprog.List{Sys: bpfprog.System{Hostname: "vm", KernelRelease: "6.18.44"},
		Programs: []*bpfprog.Program{{ID: 97, Name: "myprog", Funcs: []bpfprog.Func{{Addr: 0xffffffffc0023054, Len: 40}}}}}
	var b bytes.Buffer
	n, err := snapshot.Take(&b, src)
	if err != nil {
		log.Fatal(err)
	}
	snap, err := snapshot.Read(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		log.Fatal(err)
	}
	defer snap.Close()
	p, err := snap.Lookup(97, src.Programs[0].Tag)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d taken; from %s: program %d %s at %#x; complete: %v\n",
		n, snap.System().Hostname, p.ID, p.Name, p.Funcs[0].Addr, snap.Incomplete == "")
	// Output:
	// 1 taken; from vm: program 97 myprog at 0xffffffffc0023054; complete: true
}
