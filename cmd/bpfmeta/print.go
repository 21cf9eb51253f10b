package main

import (
	"fmt"
	"io"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// printRecordEntries prints a record's entries as perf does
// (doc.WriteEntry), after prefix.
func printRecordEntries(w io.Writer, prefix string, es []perfdata.BPFMetadataEntry) {
	for i, e := range es {
		doc.WriteEntry(w, prefix, i, e.Key, e.Value)
	}
}

// printProgramEntries prints a program's entries as perf prints its
// records' (doc.WriteEntry), after prefix.
func printProgramEntries(w io.Writer, prefix string, es []bpfprog.Entry) {
	for i, e := range es {
		doc.WriteEntry(w, prefix, i, e.Key, e.Value)
	}
}

// plural is "1 sample", "2 samples".
func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
