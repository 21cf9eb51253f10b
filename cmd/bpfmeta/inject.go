package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/bpfprog/sources"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/writer"
)

// injectDescription is inject -h's text.
const injectDescription = `Copies the recording -i to -o and adds, for every JITed function of every BPF
program in it whose .rodata has bpf_metadata_* variables, the
PERF_RECORD_BPF_METADATA record perf record >= 6.17 writes, where it writes it:
right after the program's BPF_EVENT for a program loaded when the recording
started, at the end for one loaded during it (before the tail synthesis of
perf record --tail-synthesize and --overwrite). Everything else is copied
unchanged, in the input's format. The metadata comes from the running kernel
(the programs must still be loaded), or from a snapshot (bpfmeta snapshot, or
bpfmeta watch around the recording) for programs that are gone or recordings
from another machine. A program is matched by id, tag and the addresses of its
functions, so a reused id never gets another program's metadata. Records the
recording has already are kept, not duplicated: injecting twice is injecting
once.

perf >= 6.17 also writes, at the end, the records of programs other processes
loaded during the recording when it has no record of them (a recording of one
command sees only that command's loads); so does inject, for the programs the
source says were loaded between the recording's first and last timestamp
(load times are CLOCK_BOOTTIME, placed on the recording's clock: on perf's own
by an offset measured when the source was read, exact to microseconds unless
the machine suspended meanwhile; on a clock perf record -k chose, REALTIME,
TAI, MONOTONIC, MONOTONIC_RAW or BOOTTIME, by the recording's CLOCK_DATA and
the source's boot time), if the recording is of the source's boot (one of its
programs is the source's). A recording whose clock cannot be placed (perf
before 5.10 wrote no CLOCK_DATA) gets a warning. --recorded-only leaves them
out.

A summary goes to stderr: programs, records added, and the programs whose
metadata could not be found, and why (-v lists every one). --strict fails (exit
1, no output) when a program with samples in the recording gets no metadata
that perf would have written; programs without samples (such as the probes
libbpf loads and unloads at once) do not count. --require NAME (repeatable)
fails the same way when no program named NAME gets metadata (injected or
already present), whether or not it has samples; NAME is the program's
function name (bpf_prog_<tag>_ stripped) or its KSYMBOL's full name. A golden
test of a recording of your programs runs inject with --require for each.

A directory recording (perf record --threads: data and data.N) is written as a
directory again, the records in data as perf >= 6.17 writes them with --threads
(the programs loaded during the recording at the end of data); -o - writes one
pipe stream.

perf before 6.17 cannot read the output ("failed to process type: 84"): read it
with perf >= 6.17, print it with bpfmeta show, or remove the records again with
bpfmeta strip.

Without --snapshot, a program no longer loaded is taken from the journal of
bpfmeta watch --journal (bpfmeta-watch.service: /var/lib/bpfmeta, when it
exists; --journal DIR names another, such as one copied from another host):
only the same load (same host as the recording's HEADER_HOSTNAME, same id,
tag and function addresses, loaded before the record that names it, of one
boot), never a guess between two. The summary says how many came from it,
and which programs fell out of it by its size limit.

Examples:
   bpfmeta inject -i perf.data -o perf.meta.data
   perf record -o - -a -- sleep 5 | bpfmeta inject -o perf.meta.data
   bpfmeta inject --snapshot progs.jsonl -i old.data -o old.meta.data
   bpfmeta inject -i threads.data -o threads.meta.data     # perf record --threads`

func injectCommand() *cli.Command {
	return &cli.Command{
		Name:        "inject",
		Usage:       "add the BPF programs' metadata records (PERF_RECORD_BPF_METADATA) to a recording",
		ArgsUsage:   inputArgs,
		Description: injectDescription,
		Flags: slices.Concat([]cli.Flag{
			inputFlag(),
			outputFlag("recording"),
			forceFlag(), noClobberFlag(),
			syncFlag(),
		}, sourceFlags("the running kernel", true), []cli.Flag{
			&cli.BoolFlag{Name: flagStrict, Usage: "fail (exit 1, no output) if a program with samples gets no metadata perf would have written"},
			&cli.StringSliceFlag{Name: flagRequire, Usage: "fail (exit 1, no output) if no program named `NAME` (repeatable) gets metadata"},
			&cli.BoolFlag{Name: flagPerfNames, Usage: "name the records as perf record does, not after the function they belong to (see docs/inject.md, Names)"},
			&cli.BoolFlag{Name: flagRecordedOnly, Usage: "add metadata only for programs the recording has a record of (see above)"},
			maxExpansionFlag(), quietFlag(),
			verboseFlag("list every program that got no metadata, and why"),
		}),
		Action: runInject,
	}
}

// inject's own flags.
const (
	flagStrict       = "strict"
	flagRequire      = "require"
	flagPerfNames    = "perf-names"
	flagRecordedOnly = "recorded-only"
)

// injectOpts are inject's options.
type injectOpts struct {
	rewriteOpts
	sourceOpts
	strict                  bool
	require                 []string // the names --require gives
	perfNames, recordedOnly bool
}

// injectOptionsOf reads inject's flags: the one place they are read.
func injectOptionsOf(c *cli.Context) (injectOpts, error) {
	rw, err := rewriteOptionsOf(c)
	if err != nil {
		return injectOpts{}, err
	}
	return injectOpts{rewriteOpts: rw, sourceOpts: sourceOptionsOf(c),
		strict: c.Bool(flagStrict), require: c.StringSlice(flagRequire),
		perfNames: c.Bool(flagPerfNames), recordedOnly: c.Bool(flagRecordedOnly)}, nil
}

func runInject(c *cli.Context) error {
	o, err := injectOptionsOf(c)
	if err != nil {
		return err
	}
	s := sessionOf(c)
	opened, err := openSource(s, o.sourceOpts, o.inputOpts, o.notes)
	if err != nil {
		return err
	}
	defer opened.Close()
	src := opened.Source
	if n, ok := src.(bpfprog.Noter); ok {
		for _, note := range n.Notes() {
			fmt.Fprintf(o.notes, "bpfmeta: warning: %s %s\n", opened.Name, safetext.Clean(note))
		}
	}
	hold := "" // until the summary shows that nothing is missing
	switch {
	case o.strict:
		hold = "--strict"
	case len(o.require) > 0:
		hold = "--require"
	}
	rw, err := openRewrite(s, o.rewriteOpts, true, hold, func(*outfile.Output) writer.Options { return writer.Options{} })
	if err != nil {
		return err
	}
	defer rw.close()
	in, out := rw.in, rw.out
	opts := inject.Options{PerfNames: o.perfNames, RecordedOnly: o.recordedOnly,
		OtherMachine: func(m *inject.OtherMachine) { warnOtherMachine(o.notes, in.Name, m, sources.Name(src)) }}
	prog := newProgress(s, in, o.quiet)
	if prog.Active() {
		opts.Progress = prog.Update
	}
	sum, err := inject.Write(rw.w, in, src, opts)
	prog.Done()
	if err != nil {
		return rw.blame(err)
	}
	rw.finished()
	rep := summarize(sum, src)
	strictFails := o.strict && rep.tally.Missing[inject.MissingWithSamples] > 0
	if !o.quiet {
		if o.verbose || strictFails {
			rep.print(o.notes, in.Name, o.verbose)
		} else {
			rep.printLine(o.notes, in.Name)
		}
		if r, ok := src.(bpfprog.Reporter); ok {
			for _, line := range r.Report() {
				fmt.Fprintf(o.notes, "bpfmeta: %s: %s\n", in.Name, safetext.Clean(line))
			}
		}
		if sum.EarlyFlushes > 0 {
			fmt.Fprintf(o.notes, "bpfmeta: warning: %s: %s\n", in.Name, earlyFlushes(sum.EarlyFlushes))
		}
		if sum.UnrecordedUnlooked() {
			// unlike the other reasons, nothing the user chose: say it
			fmt.Fprintf(o.notes, "bpfmeta: warning: %s: programs loaded elsewhere during the recording were not looked for: %s\n", in.Name, safetext.Clean(sum.UnrecordedSkipped))
		}
	}
	if n := reportLimited(c.App.ErrWriter, o.notes, in.Name, sum); n > 0 {
		return fmt.Errorf("%s with samples in the recording got no metadata because of a limit of bpfmeta's (see above); %s", plural(n, "BPF program"), failedOutput(hold != "" || out.Regular(), out.Name))
	}
	if unmet := sum.Unmet(o.require...); len(unmet) > 0 {
		// in the error itself, which -q does not silence
		return fmt.Errorf("--require: %s; no output written", safetext.Clean(strings.Join(unmet, "; ")))
	}
	if n := rep.tally.Missing[inject.MissingWithSamples]; strictFails {
		return fmt.Errorf("--strict: %s with samples in the recording got no metadata (see above); no output written", plural(n, "BPF program"))
	}
	if err := rw.commit(); err != nil {
		return err
	}
	if sum.Injected > 0 && !o.quiet && oldPerfMayRead(s, out, o.output) {
		fmt.Fprintln(c.App.ErrWriter, "bpfmeta: note: perf before 6.17 cannot read BPF_METADATA records (\"failed to process type: 84\"): read them with perf >= 6.17 or bpfmeta show; bpfmeta strip gives back a recording old perf reads")
	}
	return nil
}

// failedOutput says what became of the output of an inject that fails
// after the copy: nothing of it, if it appears only when committed (a
// file, or a stream held back); else the stream has had it all.
func failedOutput(committedOnly bool, name string) string {
	if committedOnly {
		return "no output written"
	}
	return name + " has had the recording without their metadata"
}

// reportLimited names the programs that got no metadata because the
// source is over a limit of bpfmeta's (inject.Summary.Limited), whatever
// -v says. Those with samples are errors, to errw even with -q, as a
// record lost is; the others warnings, to warnw. It returns how many have
// samples.
func reportLimited(errw, warnw io.Writer, name string, sum *inject.Summary) int {
	withSamples := 0
	for _, p := range sum.Limited() {
		kind, w := "warning", warnw
		if p.Samples > 0 {
			kind, w = "error", errw
			withSamples++
		}
		what := fmt.Sprintf("program %d (tag %v", p.ID, p.Tag)
		if p.Name != "" {
			what += ", " + safetext.Quote(p.Name)
		}
		what += ", " + plural(p.Samples, "sample") + ")"
		fmt.Fprintf(w, "bpfmeta: %s: %s: %s: %s\n", kind, name, safetext.Clean(what), safetext.Clean(p.Why()))
	}
	return withSamples
}

// oldPerfMayRead reports whether the output may go to a perf before 6.17,
// which stops at the first BPF_METADATA record: it is a file, or a pipe
// that another bpfmeta does not read (bpfmeta inject | bpfmeta show needs
// no warning); not the null device, nor a terminal.
func oldPerfMayRead(s *cliutil.Session, out *outfile.Output, path string) bool {
	switch {
	case out.Regular():
		return true
	case cliutil.IsDevNull(path):
		return false
	case path == "-" || outfile.IsStdout(path):
		return !s.StdoutTerminal && !s.StdoutReadBy("bpfmeta")
	}
	return true // a FIFO or device: whatever reads it
}

// defaultJournal is journal.DefaultDir; a test's own directory in tests.
var defaultJournal = journal.DefaultDir

// snapshotName is how messages name the snapshot --snapshot gives.
func snapshotName(path string) string {
	if path == "-" {
		return cliutil.StdinName
	}
	return safetext.Quote(path)
}

// report is what the summary says about an injection.
type report struct {
	sum   *inject.Summary
	src   bpfprog.Source // where the metadata came from
	tally inject.Tally
	// missing are the listed programs the output has no metadata for that
	// perf would have written, by id; transient those of them loaded and
	// unloaded during the recording without a sample (libbpf's probes).
	missing, transient []inject.Program
}

func summarize(sum *inject.Summary, src bpfprog.Source) *report {
	return &report{sum: sum, src: src, tally: sum.Tally(),
		missing:   sum.Missing(inject.MissingWithSamples, inject.MissingOther),
		transient: sum.Missing(inject.MissingTransient)}
}

// printLine is the summary without -v: one line, counts only.
func (r *report) printLine(w io.Writer, name string) {
	t := &r.tally
	withSamples := t.Missing[inject.MissingWithSamples]
	var b strings.Builder
	fmt.Fprintf(&b, "bpfmeta: %s: %s, %s added for %d", name, plural(t.Programs, "BPF program"), plural(r.sum.Injected, "BPF_METADATA record"), t.Outcomes[inject.Injected])
	if n := t.Outcomes[inject.AlreadyPresent]; n > 0 {
		fmt.Fprintf(&b, ", %d had them already", n)
	}
	if n := t.Outcomes[inject.Duplicate]; n > 0 {
		fmt.Fprintf(&b, ", %s of an id loaded before", plural(n, "more load"))
	}
	switch missing := withSamples + t.Missing[inject.MissingOther] + t.Missing[inject.MissingTransient]; {
	case withSamples > 0:
		fmt.Fprintf(&b, "; the metadata of %d is missing, %d of them with samples (-v says why)", missing, withSamples)
	case missing > 0:
		fmt.Fprintf(&b, "; the metadata of %d without samples is missing (-v says why)", missing)
	}
	fmt.Fprintln(w, safetext.Clean(b.String()))
}

// maxListed is how many programs without metadata the summary names
// without -v.
const maxListed = 10

func (r *report) print(w io.Writer, name string, verbose bool) {
	sum, t := r.sum, &r.tally
	withSamples, transient, others := t.Missing[inject.MissingWithSamples], t.Missing[inject.MissingTransient], t.Missing[inject.MissingOther]
	var b strings.Builder
	fmt.Fprintf(&b, "bpfmeta: %s: %s; %s added for %d",
		name, plural(t.Programs, "BPF program"), plural(sum.Injected, "BPF_METADATA record"), t.Outcomes[inject.Injected])
	if n := t.Outcomes[inject.AlreadyPresent]; n > 0 {
		fmt.Fprintf(&b, "; %d had them already", n)
	}
	// "without bpf_metadata_* variables": the programs that have none,
	// not those whose metadata is missing (counted next)
	fmt.Fprintf(&b, "; %d without bpf_metadata_* variables", t.Outcomes[inject.NoMetadata])
	if n := t.Outcomes[inject.Duplicate]; n > 0 {
		fmt.Fprintf(&b, "; %d loads of an id loaded before (perf records an id once)", n)
	}
	if n := withSamples + others; n > 0 {
		fmt.Fprintf(&b, "; the metadata of %d is missing (%d with samples)", n, withSamples)
	}
	if transient > 0 {
		fmt.Fprintf(&b, "; %d loaded and unloaded during the recording without a sample, not found", transient)
	}
	if t.Unrecorded > 0 {
		fmt.Fprintf(&b, "; of them, %d loaded elsewhere during the recording, which has no record of them (%d got records at the end, as perf's side-band thread has them written)", t.Unrecorded, t.UnrecordedInjected)
	}
	fmt.Fprintln(w, safetext.Clean(b.String()))
	if verbose && sum.UnrecordedSkipped != "" && !sum.UnrecordedUnlooked() {
		fmt.Fprintf(w, "bpfmeta: note: programs loaded elsewhere during the recording were not looked for: %s\n", safetext.Clean(sum.UnrecordedSkipped))
	}
	list, all := r.missing, withSamples+others
	if verbose {
		list, all = append(slices.Clone(list), r.transient...), all+transient
	}
	if !verbose && len(list) > maxListed {
		list = list[:maxListed]
	}
	for _, p := range list {
		what := fmt.Sprintf("program %d (tag %v", p.ID, p.Tag)
		if p.Name != "" {
			what += ", " + safetext.Quote(p.Name)
		}
		what += ", " + plural(p.Samples, "sample")
		if p.SamplesShort {
			what += " or more: those read before its load in its round were not counted"
		}
		what += ")"
		fmt.Fprintf(w, "bpfmeta:   %s: %s\n", safetext.Clean(what), safetext.Clean(r.why(p)))
	}
	switch {
	case len(list) == all:
	case !verbose:
		fmt.Fprintf(w, "bpfmeta: ... and %d more (-v lists them all)\n", all-len(list))
	default:
		fmt.Fprintf(w, "bpfmeta: ... and %d more, not listed: the recording loads more than %d programs\n", all-len(list), inject.MaxListed)
	}
	if d, ok := r.src.(bpfprog.Describer); ok && withSamples > 0 {
		fmt.Fprintln(w, "bpfmeta: hint:", safetext.Clean(d.Hint()))
	}
}

// why says why p has no metadata, in the user's terms (Program.WhyIn).
func (r *report) why(p inject.Program) string { return p.WhyIn(r.src) }
