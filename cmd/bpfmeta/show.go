package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/reader"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the BPF metadata a recording carries, and the functions and samples it belongs to",
		ArgsUsage: inputArgs,
		Description: `Prints every PERF_RECORD_BPF_METADATA record of a recording (file or pipe,
compressed or not), as perf script --show-bpf-events prints it: the program's
name, then its entries. Under each, the BPF function (KSYMBOL) it belongs to,
its program, and the number of samples in it. Needs no modern perf.

A record names a function; it belongs to a KSYMBOL of the recording as perf's
placement of the record says: right after a program's BPF_EVENT, to that
program's (perf found it loaded when recording started); elsewhere (perf
writes them at the end), to a program loaded during the recording, never one
loaded before, though their names can be the same; a record right after
another of the same program, to its next function. "others" lists further
KSYMBOLs of the name (the same function in several loads of a program). perf
names the main function of a program loaded during a recording with another tag
than the kernel's KSYMBOL: such a record matches by the function name after the
tag. perf takes the names from the BTF of the metadata's map, which for a
program reusing another object's map, or loaded by cilium/ebpf, is not the
program's: such a record matches by the tag. When it cannot be told
(functions of several names match, or more records have the name than
KSYMBOLs do: perf 7.2 writes records for loads by other processes too), it
says "ambiguous" and lists the candidates.

--prog keeps the records of one program: by id (of a program the recording
has a BPF_EVENT of), or by name (the function's, or the whole
bpf_prog_<tag>_<name> of the record).

Examples:
   bpfmeta show perf.meta.data
   bpfmeta show --prog 97 -i perf.meta.data
   perf record -o - -a -- sleep 1 | bpfmeta inject | bpfmeta show --json`,
		Flags: []cli.Flag{inputFlag(),
			&cli.BoolFlag{Name: "json", Aliases: []string{"j"}, Usage: "print JSON (see the README's JSON section)"},
			&cli.StringFlag{Name: "prog", Usage: "only the records of program `NAME|ID`"},
			quietFlag(), verboseFlag("say what was read")},
		Action: runShow,
	}
}

func runShow(c *cli.Context) error {
	start := time.Now()
	in, err := openInput(c, reader.Options{Decompress: true})
	if err != nil {
		return err
	}
	defer in.Close()
	warnUnfinished(notes(c), in)
	md, err := bpftrack.ReadMetadata(in)
	switch {
	case errors.Is(err, bpftrack.ErrTooManyRecords):
		return fmt.Errorf("%s: %w; bpfmeta dump lists them one by one", in.Name, err)
	case err != nil:
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	found := md.Records
	if c.IsSet("prog") {
		if found = md.OfProgram(c.String("prog")); len(found) == 0 {
			return fmt.Errorf("%s: no BPF_METADATA record of a program %s (bpfmeta show without --prog lists them)", in.Name, safetext.Quote(c.String("prog")))
		}
	}
	// Printed one record at a time: what a record says of its functions
	// can be many times the record.
	w := bufio.NewWriter(c.App.Writer)
	if c.Bool("json") {
		err = printShowJSON(w, found)
	} else if len(found) == 0 {
		fmt.Fprintf(w, "%s: no BPF_METADATA records; %s\n", in.Name, noMetadataHint(in.Name, md.Loads))
	} else {
		printMetadata(w, found)
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err == nil && verbose(c) {
		printSummary(notes(c), in, start)
	}
	return err
}

// printShowJSON writes show --json's document (showJSON, as printJSON
// writes it) a record at a time.
func printShowJSON(w io.Writer, found []bpftrack.MetadataRecord) error {
	head, err := json.MarshalIndent(showJSON{Header: bpfprog.NewHeader(bpfprog.KindShow), Records: []bpftrack.MetadataRecord{}}, "", "  ")
	if err != nil {
		return err
	}
	// head ends in `"records": []` and `}`: the records go between the brackets.
	open, ok := bytes.CutSuffix(head, []byte("[]\n}"))
	if !ok || len(found) == 0 {
		_, err := w.Write(append(head, '\n'))
		return err
	}
	w.Write(open)
	w.Write([]byte("[\n"))
	for i := range found {
		b, err := json.MarshalIndent(&found[i], "    ", "  ")
		if err != nil {
			return err
		}
		w.Write([]byte("    "))
		w.Write(safetext.JSON(b))
		if i < len(found)-1 {
			w.Write([]byte(","))
		}
		w.Write([]byte("\n"))
	}
	_, err = w.Write([]byte("  ]\n}\n"))
	return err
}

// showJSON is show --json's document.
type showJSON struct {
	bpfprog.Header
	Records []bpftrack.MetadataRecord `json:"records"`
}

// printMetadata prints the records as perf script --show-bpf-events does,
// each followed by the function it belongs to.
func printMetadata(w io.Writer, found []bpftrack.MetadataRecord) {
	for i := range found {
		r := &found[i]
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", safetext.Clean(r.Metadata.ProgName))
		printRecordEntries(w, "", r.Metadata.Entries)
		if len(r.Funcs) == 0 {
			fmt.Fprintf(w, "  (no BPF KSYMBOL in the recording it can belong to)\n")
			continue
		}
		k := r.Funcs[0]
		prog := ""
		if p := r.Program(); p != nil {
			prog = fmt.Sprintf(", program %d", p.ID)
		}
		how := ""
		switch r.Matched {
		case bpftrack.MatchFunction:
			how = fmt.Sprintf(" %s (by function name)", safetext.Clean(k.Name))
		case bpftrack.MatchTag:
			how = fmt.Sprintf(" %s (by tag: perf named the record from the BTF of its map)", safetext.Clean(k.Name))
		case bpftrack.MatchAmbiguous:
			how = fmt.Sprintf(" %s (ambiguous: one of these, or a load the recording has no KSYMBOL of)", safetext.Clean(k.Name))
		}
		fmt.Fprintf(w, "  ksymbol%s addr %#x len %d%s", how, k.Addr, k.Len, prog)
		for _, o := range r.Funcs[1:] {
			fmt.Fprintf(w, ", or addr %#x len %d", o.Addr, o.Len)
		}
		if r.MoreFuncs > 0 {
			fmt.Fprintf(w, ", or %d more of the name", r.MoreFuncs)
		}
		fmt.Fprintf(w, ": %s\n", plural(r.Samples, "sample"))
	}
}

// noMetadataHint says, of a recording without BPF_METADATA records, what
// would give it some.
func noMetadataHint(name string, loads int) string {
	if loads == 0 {
		return "it has no BPF programs either (perf record -a sees every program loaded on the machine)"
	}
	return fmt.Sprintf("it has %s: bpfmeta inject adds their metadata (bpfmeta inject -i %s -o OUT)", plural(loads, "BPF program"), name)
}
