package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/annotate"
	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/sources"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/reader"
)

func annotateCommand() *cli.Command {
	return &cli.Command{
		Name:  "annotate",
		Usage: "put each BPF program's metadata on its frames in perf script output, or fold it for a flame graph",
		Description: `Reads perf script output on stdin and writes it to stdout with every frame of
a BPF program (bpf_prog_<tag>_<name>, as perf names a JITed function) followed
by that program's metadata, taken from the recording -i the text was made
from: bpf_prog_<tag>_<name>[version=1.4.2,build=abc]+0x2a. The label goes
right after the symbol, before +0x..., with no spaces, parentheses, quotes or
semicolons (a string's quotes are dropped; such bytes in a value are written
%XX), so that FlameGraph's stackcollapse-perf.pl and inferno keep it as part
of the frame's name. --keys chooses and orders the keys. perf script's
default output, with and without callchains (-g), and -F field sets with sym
(ip,sym; ip,sym,dso; +symoff) are read; every other line, and every other
byte, is written as read. A frame whose symbol is [unknown] in a BPF
program's dso gets the label in the dso.

--folded writes folded stacks instead (comm;frame;...;frame count), as
stackcollapse-perf.pl makes them from the annotated text, for flamegraph.pl
or inferno-flamegraph. It keeps one line per distinct stack until the end,
as stackcollapse-perf.pl does, and each stack as it reads it, within the
memory budget (a longer one is an error).

--pprof writes a pprof profile instead (gzipped profile.proto, made with the
pprof project's own package), for go tool pprof, Parca or Grafana Pyroscope:
one sample per perf script sample, valued in samples/count and in the
event's period where perf script prints it (cpu-clock/nanoseconds), its
callchain as locations leaf first (the address, the dso as mapping, the
symbol as function), comm and the thread (pid and tid with perf script
-F +pid; else one number, labelled thread) as labels. A BPF frame's function
is named with the label above, and a sample with one carries its program's
metadata as labels bpf_<key>=value (go tool pprof -tagfocus
bpf_version=1.4.2); an ambiguous frame gives none. Samples alike in all of
that are summed in one, so memory grows with the distinct stacks, not the
text. It is binary: never written to a terminal. Lines that are not in the
profile are counted, with a warning.

The metadata comes from the recording's BPF_METADATA records (perf >= 6.17,
or bpfmeta inject); for a recording without them, from the running kernel
(its programs still loaded, and once gone its journal: --journal) or
--snapshot, as bpfmeta inject would add them. A frame whose address perf
printed is labelled only when the address lies in a load of its name in the
recording (its KSYMBOL's range, while it was loaded, where the text prints
the sample's time); otherwise it is labelled [bpfmeta:not-in-recording], and
when more than 1% of the frames are, a warning says the text may not come
from the recording. Loads of one function name with other metadata are told
apart by a frame's address; a frame the address does not tell (none
printed, a load without a record, loads one after the other at one address
at a time the text does not print), or of a function that a record cannot
be told to belong to, is labelled [bpfmeta:ambiguous], never given one of
them. Memory grows with the programs, not the text.

Warnings without -v: most lines are not perf script output; a --keys key
no record has (the keys the records have are named); --folded on text
without callchains (record with -g).

Examples:
   perf script -i perf.data | bpfmeta annotate -i perf.data
   perf script -i perf.data | bpfmeta annotate -i perf.data --keys version,build
   perf script -i perf.data | bpfmeta annotate -i perf.data --folded | flamegraph.pl > perf.svg
   perf script -i perf.data | bpfmeta annotate -i perf.data --pprof > prof.pb.gz
   go tool pprof -http :8080 prof.pb.gz`,
		Flags: slices.Concat([]cli.Flag{
			&cli.StringFlag{Name: flagInput, Aliases: []string{"i"}, TakesFile: true,
				Usage: "the recording `FILE` (or directory) the perf script text was made from"},
			&cli.StringFlag{Name: flagKeys, Usage: "label frames with these metadata `KEYS`, in this order (comma-separated, with or without bpf_metadata_; default: all)"},
			&cli.BoolFlag{Name: flagFolded, Usage: "write folded stacks (comm;frame;...;frame count), as stackcollapse-perf.pl does"},
			&cli.BoolFlag{Name: flagPprof, Usage: "write a gzipped pprof profile (profile.proto) for go tool pprof, Parca or Pyroscope, never to a terminal"},
		}, sourceFlags("the recording's records or the running kernel", false), []cli.Flag{
			maxExpansionFlag(), quietFlag(),
			verboseFlag("count the frames labelled (and ambiguous) and the lines that are not perf script output"),
		}),
		Action: runAnnotate,
	}
}

// annotate's own flags.
const (
	flagKeys   = "keys"
	flagFolded = "folded"
	flagPprof  = "pprof"
)

// annotateOpts are annotate's options.
type annotateOpts struct {
	readOpts
	sourceOpts
	keys          []string // the keys --keys chooses, in its order
	keysText      string   // --keys as given
	folded, pprof bool
}

// annotateOptionsOf reads annotate's flags: the one place they are read.
// Arguments, a recording or snapshot on stdin (which the text comes on),
// what checkProfileOutput refuses and an empty --keys are usage errors.
func annotateOptionsOf(c *cli.Context) (annotateOpts, error) {
	var o annotateOpts
	var err error
	if err = noArgs(c, "the recording is -i FILE; the text comes on stdin"); err != nil {
		return o, err
	}
	if o.inputOpts, err = inputOptionsOf(c); err != nil {
		return o, err
	}
	o.sourceOpts = sourceOptionsOf(c)
	if o.input == "" || o.input == "-" {
		return o, cliutil.Usagef("annotate reads perf script text on stdin: name the recording it was made from with -i FILE")
	}
	for _, r := range sources.Rows {
		if r.Stdin && o.sourceArgs[r.Flag].Path == "-" {
			return o, cliutil.Usagef("annotate reads perf script text on stdin: name the file of %s (--%s FILE)", r.What, r.Flag)
		}
	}
	o.folded, o.pprof = c.Bool(flagFolded), c.Bool(flagPprof)
	if err := checkProfileOutput(sessionOf(c), o); err != nil {
		return o, err
	}
	o.keysText = c.String(flagKeys)
	for _, k := range strings.Split(o.keysText, ",") {
		if k = strings.TrimSpace(k); k != "" {
			o.keys = append(o.keys, k)
		}
	}
	if c.IsSet(flagKeys) && len(o.keys) == 0 {
		return o, cliutil.Usagef("--keys %s: give the keys, comma-separated (--keys version,build)", safetext.Quote(o.keysText))
	}
	if o.expansionOpts, err = expansionOptionsOf(c); err != nil {
		return o, err
	}
	o.verbosity, err = verbosityOptionsOf(c)
	return o, err
}

func runAnnotate(c *cli.Context) error {
	start := time.Now()
	o, err := annotateOptionsOf(c)
	if err != nil {
		return err
	}
	t := annotate.NewTable(o.keys)
	defer t.Close()
	name, err := fillTable(sessionOf(c), o, t)
	if err != nil {
		return err
	}
	var st annotate.Stats
	if o.pprof {
		return writeProfile(c.App.Reader, c.App.Writer, o, t, name, start)
	}
	var f *annotate.Folder
	if o.folded {
		f = annotate.NewFolder()
		if st, err = annotate.Fold(c.App.Reader, f, t); err == nil {
			_, err = f.WriteTo(c.App.Writer)
		}
	} else {
		st, err = annotate.Run(c.App.Reader, c.App.Writer, t)
	}
	if errors.Is(err, budget.ErrExhausted) {
		return fmt.Errorf("stdin, line %d: %w", st.Lines, err)
	}
	if err != nil {
		return err
	}
	warnAnnotated(o, name, t, st, f)
	if o.verbose {
		fmt.Fprintf(o.notes, "bpfmeta: %s: %s of %s labelled (%d ambiguous, %d not in the recording); %s read, %d not perf script output, in %.3fs\n",
			name, plural(int(st.Annotated), "frame"), plural(t.Len(), "BPF function"), st.Ambiguous, st.NotInRecording,
			plural(int(st.Lines), "line"), st.Unparsed, time.Since(start).Seconds())
	}
	return nil
}

// warnAnnotated says, without -v, what makes the output not what was
// meant: text that is mostly not perf script output, frames of another
// recording, keys the recording has not, a fold without callchains.
func warnAnnotated(o annotateOpts, name string, t *annotate.Table, st annotate.Stats, f *annotate.Folder) {
	w := o.notes
	junk := st.MostlyUnparsed()
	if junk {
		fmt.Fprintf(w, "bpfmeta: warning: %d of %s on stdin are not perf script output: annotate reads perf script's text (perf script -i %s | bpfmeta annotate -i %s), not a recording\n",
			st.Unparsed, plural(int(st.Lines), "line"), name, name)
	}
	if st.OftenNotInRecording() {
		fmt.Fprintf(w, "bpfmeta: warning: %d of %s of BPF functions lie in no load of their name in %s (labelled %s): the text may not come from the recording given with -i, or its times are not perf's (perf script --reltime, --deltatime)\n",
			st.NotInRecording, plural(int(st.Annotated), "frame"), name, annotate.NotInRecording)
	}
	if f != nil && !junk && f.NoCallchains() {
		fmt.Fprintf(w, "bpfmeta: warning: no callchains: record with -g (perf record -g): %s of the text and no stack to fold\n", plural(int(f.Samples()), "sample"))
	}
	missing := t.MissingKeys()
	if len(missing) == 0 {
		return
	}
	list := "it has no BPF_METADATA records"
	if has, _ := t.Keys(); len(has) > 0 {
		list = "its records have " + strings.Join(has, ", ")
	}
	for _, k := range missing {
		fmt.Fprintf(w, "bpfmeta: warning: --keys %s: no record of %s has the key %s: %s\n",
			safetext.Clean(o.keysText), name, safetext.Clean(k), safetext.Clean(list))
	}
}

// fillTable fills t with the metadata of the recording's programs
// (annotate.FillFrom): its BPF_METADATA records, or those bpfmeta inject
// would add from the source inject opens.
func fillTable(s *cliutil.Session, o annotateOpts, t *annotate.Table) (string, error) {
	in, err := openInput(s, o.readOpts, reader.Options{Decompress: true})
	if err != nil {
		return "", err
	}
	defer func() {
		if in != nil {
			in.Close()
		}
	}()
	from := annotate.From{Name: in.Name, Recording: in, SourceNamed: sources.Instead(o.sourceArgs),
		Source: func() (bpfprog.Source, func(), error) {
			src, err := openSource(s, o.sourceOpts, o.inputOpts, o.notes)
			if err != nil {
				return nil, nil, err
			}
			return src.Source, src.Close, nil
		}}
	if in.File() != nil || in.Dir != "" {
		from.Reopen = func() (inject.Recording, error) {
			in.Close()
			again, err := openInput(s, o.readOpts, reader.Options{Decompress: true})
			if err != nil {
				in = nil // closed
				return nil, err
			}
			in = again
			return again, nil
		}
	}
	filled, err := annotate.FillFrom(t, from)
	if filled == annotate.NotReread {
		fmt.Fprintf(o.notes, "bpfmeta: warning: %s has no BPF_METADATA records and is read as a stream, which cannot be read again for the running kernel's: give it as a file, or --snapshot\n", from.Name)
	}
	return from.Name, err
}
