package main

import (
	"fmt"
	"io"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// printEntry prints one metadata entry as perf's
// perf_event__fprintf_bpf_metadata() does ("  entry %d: %20s = %s"), after
// prefix, with what came from the input escaped.
func printEntry(w io.Writer, prefix string, i int, key, value string) {
	fmt.Fprintf(w, "%s  entry %d: %20s = %s\n", prefix, i, safetext.Clean(key), safetext.Clean(value))
}

func printRecordEntries(w io.Writer, prefix string, es []perfdata.BPFMetadataEntry) {
	for i, e := range es {
		printEntry(w, prefix, i, e.Key, e.Value)
	}
}

func printProgramEntries(w io.Writer, prefix string, es []bpfprog.Entry) {
	for i, e := range es {
		printEntry(w, prefix, i, e.Key, e.Value)
	}
}

// plural is "1 sample", "2 samples".
func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
