package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/sources"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/stable"
)

func programsCommand() *cli.Command {
	return &cli.Command{
		Name:      "programs",
		Usage:     "list the loaded BPF programs, with the names and metadata perf records for them",
		ArgsUsage: "[ID|NAME...]",
		Description: `Lists the BPF programs loaded now (or only those the arguments name) with, per JITed
function, its address, length, tag and the two names a recording can have for it:
  perf    the name perf record gives it when the program was loaded before perf started
  kernel  the name in /proc/kallsyms, and in a recording when the program was loaded
          while perf recorded (the main function of a program with subprograms has
          another tag there)
and the PERF_RECORD_BPF_METADATA records perf record >= 6.17 writes for the
program: one per function, with the name it gives the record and the program's
bpf_metadata_* variables as perf formats them. Needs root. When a program
cannot be read, nothing is printed: a partial list is never taken for all.
Addresses and lengths the kernel hides (kernel.kptr_restrict, no CAP_SYSLOG)
are printed as hidden (null in JSON), with a warning.

An argument names a program by id, or by name: the program's, or one of its
functions' (BTF name, or perf's or the kernel's bpf_prog_<tag>_<name>, whole or
without bpf_prog_<tag>_), as show --prog takes it. A name no program has is an
error (exit 1).

--json prints the programs in the JSON every bpfmeta output shares
(docs/json.md): the values as perf writes them ("value") and, where their
type allows, as JSON ("typed": strings, numbers, enumerators by name,
objects, arrays).

--stable prints, for golden files, what is the same for every load of the
same object on any host and boot: each program's name, its functions' names
(BTF, else perf's without bpf_prog_<tag>_) and its metadata entries, sorted,
each distinct program once; no ids, tags, addresses, maps or times (with
--json: {"programs": [{"name", "functions", "entries": [{"key", "value",
"typed"}]}]}).

--object FILE prints that text for the programs of a BPF object file (clang's
prog.bpf.o) instead of loaded ones, computed from its .rodata and BTF as the
kernel and perf will once libbpf loads it, with neither root nor perf: a
golden made from the object is the golden of its loaded programs (--stable is
implied; no ids).

With --journal DIR it lists what the journal of bpfmeta watch --journal holds
instead of the loaded programs: per host (DIR/HOST/), oldest first, when each
segment was begun (boot, kernel, and what the size limit had dropped), every
load (id, tag, name, functions, metadata) and unload with its time, the loads
dropped by the size limit, and where a segment stops before its end (a
record cut by a SIGKILL or a crash). Given ids or names, only those programs'
records (the unloads of the loads a name selects too).

Examples:
   bpfmeta programs
   bpfmeta programs 97 98
   bpfmeta programs --journal /var/lib/bpfmeta my_prog
   bpfmeta programs --journal /var/lib/bpfmeta
   bpfmeta programs --stable --object prog.bpf.o > testdata/prog.golden
   bpfmeta programs --json | jq '.programs[] | select(.metadata) | .metadata.entries'`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: flagJSON, Aliases: []string{"j"}, Usage: "print JSON (see docs/json.md, which make install puts in PREFIX/share/doc/bpfmeta)"},
			&cli.StringFlag{Name: flagJournal, TakesFile: true, Usage: "list the loads and unloads the journal in `DIR` holds (bpfmeta watch --journal)"},
			&cli.BoolFlag{Name: flagStable, Usage: "print what is the same for every load on any host and boot, for golden files: names, functions and entries, sorted, once"},
			&cli.StringFlag{Name: flagObject, TakesFile: true, Usage: "print --stable's text of the programs of the BPF object `FILE` (prog.bpf.o) as perf will record them once loaded, without root"},
			quietFlag(), verboseFlag("say how many programs were listed, and how many have metadata")},
		Action: runPrograms,
	}
}

// flagObject is programs --object.
const flagObject = "object"

// programsOpts are programs' options.
type programsOpts struct {
	verbosity
	sel          *bpfprog.Selection // the programs the arguments name
	json, stable bool
	journal      string // --journal's directory
	journalGiven bool
	object       string // --object's file
	objectGiven  bool
}

// programsOptionsOf reads programs' flags and arguments: the one place
// they are read. --journal with --json, and --object with arguments, are
// usage errors.
func programsOptionsOf(c *cli.Context) (programsOpts, error) {
	v, err := verbosityOptionsOf(c)
	if err != nil {
		return programsOpts{}, err
	}
	o := programsOpts{verbosity: v, sel: bpfprog.Select(c.Args().Slice()), json: c.Bool(flagJSON), stable: c.Bool(flagStable),
		journal: c.String(flagJournal), journalGiven: c.IsSet(flagJournal), object: c.String(flagObject), objectGiven: c.IsSet(flagObject)}
	switch {
	case o.journalGiven && o.json:
		return o, cliutil.Usagef("programs --journal has no --json: the journal's records are listed as text")
	case !o.journalGiven && o.objectGiven && !o.sel.All():
		return o, cliutil.Usagef("programs --object takes no program ids or names: it prints every program of the object")
	}
	return o, nil
}

func runPrograms(c *cli.Context) error {
	o, err := programsOptionsOf(c)
	if err != nil {
		return err
	}
	sel := o.sel
	if o.journalGiven {
		return listJournal(c.App.Writer, o)
	}
	if o.objectGiven {
		return printObject(c.App.Writer, o)
	}
	k, err := live.New()
	if err != nil {
		return err
	}
	// all or nothing: a listing with a program missing is not printed
	ids := sel.IDs
	if len(sel.Names) > 0 {
		ids = nil // every program, for their names
	}
	progs, err := k.Programs(ids...)
	if err != nil {
		return err
	}
	if len(sel.Names) > 0 {
		progs = slices.DeleteFunc(progs, func(p *bpfprog.Program) bool { return !sel.Program(p) })
		if err := missingNames(sel, "is loaded"); err != nil {
			return err
		}
		if err := missingIDs(sel); err != nil {
			return err
		}
	}
	for _, p := range progs {
		if o.stable {
			break // it prints no address
		}
		if err := live.CheckAddresses(p); err != nil {
			// as the kernel shows them (0), they would look real
			fmt.Fprintf(o.notes, "bpfmeta: warning: %v: their addresses and lengths are printed as hidden (null in JSON)\n", err)
			break
		}
	}
	w := bufio.NewWriter(c.App.Writer)
	switch {
	case o.stable:
		err = printStablePrograms(w, progs, o.json)
	case o.json:
		err = doc.Encode(w, doc.NewPrograms(k.System(), progs))
	default:
		for _, p := range progs {
			printProgram(w, p)
		}
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if o.verbose {
		withMeta := 0
		for _, p := range progs {
			if p.HasMetadata() {
				withMeta++
			}
		}
		fmt.Fprintf(o.notes, "bpfmeta: %s listed, %d with metadata\n", plural(len(progs), "program"), withMeta)
	}
	return nil
}

// printProgram writes one program; the metadata lines are perf's
// (perf_event__fprintf_bpf_metadata: " prog %s", then doc.WriteEntry's).
func printProgram(w io.Writer, p *bpfprog.Program) {
	var b strings.Builder
	fmt.Fprintf(&b, "%d: %s  name %s  tag %s  btf_id %d  maps %v  loaded_at %s  uid %d\n",
		p.ID, bpfprog.TypeName(p.Type), safetext.Clean(p.Name), p.Tag, p.BTFID, p.MapIDs,
		p.LoadedAt.Local().Format(time.DateTime), p.CreatedByUID)
	for i, f := range p.Funcs {
		addr, n := "hidden", "hidden"
		if !f.Hidden() {
			addr, n = strconv.FormatUint(f.Addr, 16), strconv.FormatUint(uint64(f.Len), 10)
		}
		fmt.Fprintf(&b, "\tfunc %d: addr %s  len %s  tag %s", i, addr, n, f.Tag)
		if f.BTFName != "" {
			fmt.Fprintf(&b, "  btf %s", safetext.Clean(f.BTFName))
		}
		fmt.Fprintf(&b, "\n\t\tperf   %s\n\t\tkernel %s\n", safetext.Clean(f.PerfName), safetext.Clean(f.KernelName))
	}
	switch md := p.Metadata; {
	case p.TooLarge != nil:
		fmt.Fprintf(&b, "\tno BPF_METADATA: %v\n", p.TooLarge)
	case md == nil && p.MetadataErr == nil:
		b.WriteString("\tno metadata\n")
	case md == nil:
		fmt.Fprintf(&b, "\tmetadata unknown: %s\n", safetext.Clean(p.MetadataErr.Error()))
	default:
		fmt.Fprintf(&b, "\tPERF_RECORD_BPF_METADATA x%d (map %d %s, btf_id %d):\n", len(md.ProgNames), md.MapID, safetext.Clean(md.MapName), md.BTFID)
		if p.MetadataErr != nil {
			fmt.Fprintf(&b, "\t(not exact: %s)\n", safetext.Clean(p.MetadataErr.Error()))
		}
		for _, name := range md.ProgNames {
			fmt.Fprintf(&b, "\t prog %s\n", safetext.Clean(name))
		}
		printProgramEntries(&b, "\t", md.Entries)
	}
	io.WriteString(w, b.String())
}

// listJournal is programs --journal: the journal's records, a line each
// (a load's functions and metadata as printProgram prints them), to out.
func listJournal(out io.Writer, o programsOpts) error {
	sel := o.sel
	j, err := journal.Open(o.journal)
	if err != nil {
		return sources.JournalError(err)
	}
	defer sources.CloseJournal(j, warner(o.notes))
	w := bufio.NewWriter(out)
	loads, unloads, damaged, lost := 0, 0, 0, 0
	for _, name := range j.Hosts() {
		var seq uint64
		for e, err := range j.Host(name).Records() {
			if err != nil {
				w.Flush()
				return sources.JournalError(err)
			}
			host, when := safetext.Quote(name), func(t time.Time) string { return t.Local().Format(time.DateTime) }
			if e.Seq != seq {
				seq = e.Seq
				fmt.Fprintf(w, "%s  %s  segment %d  boot %s  kernel %s  (%d older loads dropped by the size limit)\n",
					host, when(e.Started), e.Seq, safetext.Clean(e.System.BootID), safetext.Quote(e.System.KernelRelease), e.DroppedLoads)
			}
			if !e.Selected(sel) {
				continue
			}
			switch {
			case e.Torn != "":
				fmt.Fprintf(w, "%s  segment %d stops before its end: %s (ignored)\n", host, e.Seq, safetext.Clean(e.Torn))
			case e.Damaged != "":
				damaged++
				fmt.Fprintf(w, "%s  segment %d: %s (%d bytes skipped: the record is lost, those after it are read)\n", host, e.Seq, safetext.Clean(e.Damaged), e.Size)
			case e.Program != nil:
				loads++
				fmt.Fprintf(w, "%s  %s  load    ", host, when(e.Program.LoadedAt))
				printProgram(w, e.Program)
			case e.Unload != nil:
				unloads++
				fmt.Fprintf(w, "%s  %s  unload  %d  tag %s\n", host, when(e.Unload.At), e.Unload.ID, e.Unload.Tag)
			case e.Lost != nil:
				lost++
				printLost(w, host, when(e.Lost.At), e.Lost)
			case e.Dropped != nil:
				fmt.Fprintf(w, "%s  %s  dropped segment %d by the size limit: %s of boot %s\n", host, when(e.Dropped.At), e.Dropped.Seq, plural(len(e.Dropped.Loads), "load"), safetext.Clean(e.Dropped.BootID))
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if damaged > 0 {
		fmt.Fprintf(o.notes, "bpfmeta: warning: %s: %s skipped (listed above): a program of them is missing from the journal\n", safetext.Quote(j.Path), plural(damaged, "damaged record"))
	}
	if lost > 0 {
		fmt.Fprintf(o.notes, "bpfmeta: warning: %s: its writer lost %s (listed): those programs may be missing from it\n", safetext.Quote(j.Path), plural(lost, "load"))
	}
	if err := missingNames(sel, "in "+safetext.Quote(j.Path)); err != nil {
		return err
	}
	if o.verbose {
		fmt.Fprintf(o.notes, "bpfmeta: %s: %s, %d loads and %d unloads listed\n", safetext.Quote(j.Path), plural(len(j.Hosts()), "host"), loads, unloads)
	}
	return nil
}

// printObject is programs --object: the stable text of an object file's
// programs, to out.
func printObject(out io.Writer, o programsOpts) error {
	path := o.object
	progs, err := stable.ObjectFile(path)
	if err != nil {
		return cliutil.FileError(safetext.Quote(path), err)
	}
	w := bufio.NewWriter(out)
	err = printStablePrograms(w, progs, o.json)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// printLost prints a load the journal's writer could not journal.
func printLost(w io.Writer, host, when string, l *journal.Lost) {
	if l.ID == 0 {
		fmt.Fprintf(w, "%s  %s  lost    the kernel dropped %d perf records: loads and unloads meanwhile are unknown\n", host, when, l.Records)
		return
	}
	fmt.Fprintf(w, "%s  %s  lost    %d  tag %s  %s: not journaled: %s\n", host, when, l.ID, l.Tag, safetext.Quote(l.Name), safetext.Clean(l.Why))
}
