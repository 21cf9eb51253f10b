// Command demo loads the BPF program `make demo` profiles.
//
// It loads the BPF program `make demo` profiles: a socket filter with the
// kind of bpf_metadata_* variables a BPF project ships (bpf/demo.bpf.c,
// compiled into bpf/demo.bpf.o and embedded here, so that the demo needs
// neither clang nor bpftool). It prints one line per JITed function, then
// "ready", keeps the program loaded until it gets SIGINT or SIGTERM, and
// unloads it.
//
// It is part of the demo, not of bpfmeta: it runs as root, from scripts/demo.sh.
package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cilium/ebpf"
)

//go:embed bpf/demo.bpf.o
var object []byte

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(object))
	if err != nil {
		return err
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		return fmt.Errorf("loading the demo program (as root?): %w", err)
	}
	defer coll.Close()
	for name, p := range coll.Programs {
		info, err := p.Info()
		if err != nil {
			return err
		}
		id, _ := info.ID()
		fmt.Printf("loaded BPF program %d (%s, tag %s)\n", id, name, info.Tag)
	}
	fmt.Println("ready")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	return nil
}
