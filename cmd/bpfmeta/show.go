package main

import (
	"bufio"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/stable"
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

A function's samples are counted as perf report counts them: those perf's
kernel maps hold in it when perf delivers them, in time order, the KSYMBOLs
delivered before them having changed the maps; also in a recording whose
programs perf wrote after their samples (perf record --overwrite, as perf
daemon runs it, or --tail-synthesize), per CPU (--threads) or to a pipe.

Records are printed as soon as their samples are counted (the KSYMBOL that
unregisters their function is delivered, at the FINISHED_ROUND after next),
in the recording's order; those at the end, at the end. Of the
programs loaded during the recording and unloaded, show keeps the functions of
the 65,536 gone last: a record of an older one finds no KSYMBOL, and a warning
says how many were forgotten.

--prog keeps the records of one program: by id (of a program the recording
has a BPF_EVENT of), or by name (of the program or of one of its functions:
the record's, or the KSYMBOL's it belongs to, with or without
bpf_prog_<tag>_), as snapshot --prog and inject --require name programs.

--with-samples keeps the records of functions with samples in the recording (of
one of the candidates, where the record is ambiguous): on a host with many
programs, those of the programs the recording saw run, not every program
loaded (a host's own programs can have hundreds of records).

--stable prints, for golden files, what does not change from one host, boot
or load to the next: each function's name without bpf_prog_<tag>_ (a tag
changes with any change of the code) and its entries, sorted, each function
with the same entries once; no ids, addresses, offsets or samples (with
--json: {"functions": [{"function", "entries": [{"key", "value", "typed"}]}]}).
Functions with the same entries are one group: their names, one a line, then
the entries once, without perf's index (a variable removed changes one line).
A function is named after the KSYMBOL its record belongs to, as above, so
that perf >= 6.17's own records (named from the map's BTF: "" or ".rodata"
for cilium/ebpf's loads) and inject's give one text; a function without a
name reads "(no name)".

--snapshot FILE types the values from the snapshot's programs (bpfmeta
snapshot --prog, of the recording's programs): perf's text of a struct has
neither its fields' names nor its zero fields, and --json's "typed" and
--stable's "named:" line then give them.

Examples:
   bpfmeta show perf.meta.data
   bpfmeta show --prog 97 -i perf.meta.data
   bpfmeta show --with-samples perf.meta.data
   perf record -o - -a -- sleep 1 | bpfmeta inject | bpfmeta show --json`,
		Flags: []cli.Flag{inputFlag(),
			&cli.BoolFlag{Name: flagJSON, Aliases: []string{"j"}, Usage: "print JSON (see docs/json.md, which make install puts in PREFIX/share/doc/bpfmeta)"},
			&cli.StringFlag{Name: flagProg, Usage: "only the records of program `NAME|ID`"},
			&cli.BoolFlag{Name: flagWithSamples, Usage: "only the records of functions with samples in the recording"},
			&cli.BoolFlag{Name: flagStable, Usage: "print what is the same on any host and boot, for golden files: each function's name without its tag and its entries, sorted, once"},
			&cli.StringFlag{Name: flagSnapshot, TakesFile: true, Usage: "type the values from the programs of snapshot `FILE` (bpfmeta snapshot): structs with their fields' names"},
			maxExpansionFlag(), quietFlag(), verboseFlag("say what was read")},
		Action: runShow,
	}
}

// flagWithSamples is show --with-samples.
const flagWithSamples = "with-samples"

// showOpts are show's options.
type showOpts struct {
	readOpts
	json, stable, withSamples bool
	prog                      string // --prog's program
	progGiven                 bool
	snapshot                  string // --snapshot's file, or ""
}

// showOptionsOf reads show's flags: the one place they are read.
func showOptionsOf(c *cli.Context) (showOpts, error) {
	r, err := readOptionsOf(c)
	return showOpts{readOpts: r, json: c.Bool(flagJSON), stable: c.Bool(flagStable), withSamples: c.Bool(flagWithSamples),
		prog: c.String(flagProg), progGiven: c.IsSet(flagProg), snapshot: c.String(flagSnapshot)}, err
}

func runShow(c *cli.Context) error {
	start := time.Now()
	o, err := showOptionsOf(c)
	if err != nil {
		return err
	}
	in, err := openInput(sessionOf(c), o.readOpts, reader.Options{Decompress: true})
	if err != nil {
		return err
	}
	defer in.Close()
	warnUnfinished(o.notes, in)
	// Printed as the records are known, one at a time: what a record says
	// of its functions can be many times the record.
	w := bufio.NewWriter(c.App.Writer)
	types, err := showTypes(o.snapshot)
	if err != nil {
		return err
	}
	var p showPrinter = &textPrinter{w: w}
	switch {
	case o.stable:
		p = &stablePrinter{w: w, json: o.json, fns: stable.Funcs{Typed: types.Typed}}
	case o.json:
		p = &jsonPrinter{doc.NewShowWriter(w), types.OfRecord}
	}
	prog, shown := o.prog, 0
	sum, err := bpftrack.WalkMetadata(in, func(r *bpftrack.MetadataRecord) error {
		if o.progGiven && !r.OfProgram(prog) || o.withSamples && r.Samples == 0 {
			return nil
		}
		shown++
		return p.record(r)
	})
	switch {
	case errors.Is(err, bpftrack.ErrTooManyRecords):
		err = fmt.Errorf("%s: %w; bpfmeta dump lists them one by one", in.Name, err)
	case err != nil && !isWriteError(err):
		err = fmt.Errorf("%s: %w", in.Name, err)
	}
	if err == nil {
		switch {
		case o.progGiven && shown == 0:
			err = fmt.Errorf("%s: no BPF_METADATA record of a program %s (bpfmeta show without --prog lists them)", in.Name, safetext.Quote(prog))
		case sum.Records == 0 && !o.json && !o.stable:
			fmt.Fprintf(w, "%s: no BPF_METADATA records; %s\n", in.Name, noMetadataHint(in.Name, sum.Loads))
		case shown == 0 && o.withSamples && !o.json && !o.stable:
			fmt.Fprintf(w, "%s: %s, none of a function with samples\n", in.Name, plural(sum.Records, "BPF_METADATA record"))
		}
	}
	if err == nil {
		err = p.end()
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err == nil && sum.Forgotten > 0 && !o.quiet {
		fmt.Fprintf(o.notes, "bpfmeta: warning: %s: %s of programs loaded during the recording and gone were forgotten (bpfmeta keeps the last %d): a record that finds no KSYMBOL may be one of theirs\n", in.Name, plural(sum.Forgotten, "function"), bpftrack.MaxHistory)
	}
	if err == nil && sum.EarlyFlushes > 0 && !o.quiet {
		fmt.Fprintf(o.notes, "bpfmeta: warning: %s: %s\n", in.Name, earlyFlushes(sum.EarlyFlushes))
	}
	if err == nil && o.verbose {
		printSummary(o.notes, in, start)
	}
	return err
}

// showPrinter prints show's records as they come.
type showPrinter interface {
	record(*bpftrack.MetadataRecord) error
	end() error // after the last
}

// writeError is an error of show's output, told from the recording's.
type writeError struct{ error }

func (e writeError) Unwrap() error { return e.error }

func isWriteError(err error) bool {
	var we writeError
	return errors.As(err, &we)
}

// jsonPrinter writes show --json's document (doc.Show) a record at a
// time.
type jsonPrinter struct {
	w     *doc.ShowWriter
	typed doc.TypedFunc
}

func (p *jsonPrinter) record(r *bpftrack.MetadataRecord) error {
	return writeErr(p.w.Write(doc.NewRecord(r, p.typed)))
}

func (p *jsonPrinter) end() error { return p.w.Close() }

// showTypes is the index of the typed forms of entries that the programs
// of the snapshot at path (--snapshot) give, or nil (which types nothing).
func showTypes(path string) (*stable.TypedIndex, error) {
	if path == "" {
		return nil, nil
	}
	ix, err := stable.SnapshotTypes(path)
	if err != nil {
		return nil, cliutil.FileError(snapshotName(path), err)
	}
	return ix, nil
}

// textPrinter prints the records as perf script --show-bpf-events does,
// each followed by the function it belongs to.
type textPrinter struct {
	w *bufio.Writer
	n int
}

func (p *textPrinter) end() error { return nil }

func (p *textPrinter) record(r *bpftrack.MetadataRecord) error {
	w := p.w
	if p.n > 0 {
		fmt.Fprintln(w)
	}
	p.n++
	fmt.Fprintf(w, "%s\n", safetext.Clean(r.Metadata.ProgName))
	printRecordEntries(w, "", r.Metadata.Entries)
	if len(r.Funcs) == 0 {
		_, err := fmt.Fprintf(w, "  (no BPF KSYMBOL in the recording it can belong to)\n")
		return writeErr(err)
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
	_, err := fmt.Fprintf(w, ": %s\n", plural(r.Samples, "sample"))
	return writeErr(err)
}

// writeErr wraps an error of the output as one.
func writeErr(err error) error {
	if err != nil {
		return writeError{err}
	}
	return nil
}

// noMetadataHint says, of a recording without BPF_METADATA records, what
// would give it some.
func noMetadataHint(name string, loads int) string {
	if loads == 0 {
		return "it has no BPF programs either (perf record -a sees every program loaded on the machine)"
	}
	// Not "inject adds their metadata" alone: of inject's own output
	// (no loaded program has bpf_metadata_* variables) that is a loop.
	return fmt.Sprintf("it has %s: bpfmeta inject adds the metadata of those that have bpf_metadata_* variables (bpfmeta inject -i %s -o OUT); if inject wrote this file, none of them has any (make demo, in bpfmeta's clone, loads a program that has)", plural(loads, "BPF program"), name)
}

// earlyFlushes says that samples were counted before perf's order was known
// n times (bpftrack's Tracker.EarlyFlushes).
func earlyFlushes(n int) string {
	return fmt.Sprintf("more than %d samples (or the memory budget's share) waited for perf's order, and the older half was counted early %s: the sample counts of programs perf wrote after them may be short of perf report's", bpftrack.MaxQueuedSamples, plural(n, "time"))
}
