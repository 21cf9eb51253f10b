package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog/sources"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// The flags several commands share, and what they open. Each command
// reads its flags in one parse function, COMMANDOptionsOf (in its file),
// into a struct of its options, which embeds the structs of the shared
// flags below, each read by a parse function of its own (inputOptionsOf,
// ...); nothing else reads a flag by its name (TestFlagsReadByParse).

// The names of the shared flags, and of the flags of several commands'
// own that are spelled alike: written once, for the flag's definition and
// its parse.
const (
	flagInput        = "input"
	flagOutput       = "output"
	flagForce        = "force"
	flagNoClobber    = "no-clobber"
	flagSync         = "sync"
	flagQuiet        = "quiet"
	flagVerbose      = "verbose"
	flagMaxExpansion = "max-expansion"
	flagJSON         = "json"
	flagStable       = "stable"
	flagProg         = "prog"
	flagJournal      = "journal"  // programs', watch's, and sources.Rows' flag
	flagSnapshot     = "snapshot" // show's, and sources.Rows' flag
)

func inputFlag() cli.Flag {
	return &cli.StringFlag{Name: flagInput, Aliases: []string{"i"}, Value: "-", TakesFile: true,
		Usage: "read the recording from `FILE`, or from the directory perf record --threads wrote (- for stdin; without -i or FILE, stdin, or ./perf.data when stdin is a terminal)"}
}

// maxExpansionFlag is --max-expansion of every command that reads a
// recording (reader.Options.MaxExpansion; expansionOptionsOf reads it).
func maxExpansionFlag() cli.Flag {
	return &cli.IntFlag{Name: flagMaxExpansion, Value: reader.DefaultMaxExpansion,
		Usage: "read compressed records that expand up to `N` times their size (perf record -z writes 5 to 20; more is taken for a zstd bomb once past 64 MiB; 0: no limit)"}
}

func outputFlag(what string) cli.Flag {
	return &cli.StringFlag{Name: flagOutput, Aliases: []string{"o"}, Value: "-", TakesFile: true,
		Usage: "write the " + what + " to `FILE` (- for stdout)"}
}

func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: flagForce, Aliases: []string{"f"},
		Usage: "replace FILE if it is a regular file, without keeping it as FILE.old (or write to it if it is a device or FIFO)"}
}

// noClobberFlag is --no-clobber of the commands that write a file (package
// outfile's rule): without it, a file of the caller's at -o is replaced, as
// perf inject replaces it, and kept as FILE.old, as perf record keeps
// perf.data.old.
func noClobberFlag() cli.Flag {
	return &cli.BoolFlag{Name: flagNoClobber,
		Usage: "refuse a FILE that exists and is not empty (by default a file of yours is replaced, as perf inject -o does, and kept as FILE.old, as perf record does, replacing a FILE.old of yours)"}
}

// syncFlag is --sync of the commands that write a recording: a recording
// can be made again from its input, so by default it is not synced (as perf
// and cp do not sync); snapshots always are.
func syncFlag() cli.Flag {
	return &cli.BoolFlag{Name: flagSync,
		Usage: "have a recording written to FILE on the disk before bpfmeta exits (fsync the file and its directory)"}
}

func quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: flagQuiet, Aliases: []string{"q"}, Usage: "print only errors"}
}

func verboseFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: flagVerbose, Aliases: []string{"v"}, Usage: what}
}

// inputArgs is the ArgsUsage of the commands that read a recording: it
// may be named as -i FILE or as the argument, as perf report -i and bpftool
// take a file.
const inputArgs = "[FILE]"

// inputOpts are the recording a command reads: -i or the argument.
type inputOpts struct {
	input      string // its path; "-" for stdin
	inputGiven bool   // named by -i or the argument, not -i's default
}

// inputOptionsOf is the recording -i or the argument names, and whether
// one did; both, or more than one argument, is a usage error.
func inputOptionsOf(c *cli.Context) (inputOpts, error) {
	args := c.Args()
	switch {
	case args.Len() == 2 && !c.IsSet(flagOutput) && slices.ContainsFunc(c.Command.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), flagOutput) }):
		// perf inject -i IN -o OUT, cp IN OUT: the second is the output
		return inputOpts{}, cliutil.Usagef("%s reads one recording; got %s and %s (to write %s: -o %s)", c.Command.Name, safetext.Quote(args.Get(0)), safetext.Quote(args.Get(1)), safetext.Quote(args.Get(1)), safetext.Quote(args.Get(1)))
	case args.Len() > 1:
		return inputOpts{}, cliutil.Usagef("%s reads one recording; got %s and %s", c.Command.Name, safetext.Quote(args.Get(0)), safetext.Quote(args.Get(1)))
	case args.Len() == 1 && c.IsSet(flagInput):
		return inputOpts{}, cliutil.Usagef("%s: name the recording once, as -i FILE or as the argument; got -i %s and %s", c.Command.Name, safetext.Quote(c.String(flagInput)), safetext.Quote(args.First()))
	case args.Len() == 1:
		return inputOpts{input: args.First(), inputGiven: true}, nil
	}
	return inputOpts{input: c.String(flagInput), inputGiven: c.IsSet(flagInput)}, nil
}

// expansionOpts are --max-expansion.
type expansionOpts struct {
	maxExpansion int // reader.Options.MaxExpansion: -1 for no limit
}

// expansionOptionsOf reads --max-expansion; a negative number is a usage
// error.
func expansionOptionsOf(c *cli.Context) (expansionOpts, error) {
	switch n := c.Int(flagMaxExpansion); {
	case n < 0:
		return expansionOpts{}, cliutil.Usagef("--max-expansion %d: give a number of times, or 0 for no limit", n)
	case n == 0:
		return expansionOpts{maxExpansion: -1}, nil // no limit
	default:
		return expansionOpts{maxExpansion: n}, nil
	}
}

// readOpts are the options of every command that reads a recording: the
// recording, how far it may expand, -q and -v.
type readOpts struct {
	inputOpts
	expansionOpts
	verbosity
}

// readOptionsOf reads them, in the order their usage errors are checked.
func readOptionsOf(c *cli.Context) (o readOpts, err error) {
	if o.inputOpts, err = inputOptionsOf(c); err != nil {
		return o, err
	}
	if o.expansionOpts, err = expansionOptionsOf(c); err != nil {
		return o, err
	}
	o.verbosity, err = verbosityOptionsOf(c)
	return o, err
}

// openInput opens the recording o names (Session.OpenInput).
func openInput(s *cliutil.Session, o readOpts, opts reader.Options) (*cliutil.Input, error) {
	path, given := o.input, o.inputGiven
	opts.MaxExpansion = o.maxExpansion
	return s.OpenInput(path, given, opts)
}

// outputOpts are -o and how it is written: -f, --no-clobber, and --sync
// (false in the commands without it).
type outputOpts struct {
	output                 string // its path; "-" for stdout
	outputGiven            bool   // named by -o, not its default
	force, noClobber, sync bool
}

// outputOptionsOf reads them.
func outputOptionsOf(c *cli.Context) outputOpts {
	return outputOpts{output: c.String(flagOutput), outputGiven: c.IsSet(flagOutput),
		force: c.Bool(flagForce), noClobber: c.Bool(flagNoClobber), sync: c.Bool(flagSync)}
}

// openInOut opens the recording to read (decompressing) and the one -o
// names to write, which may not be the input's file: what the commands that
// write a recording again start with. A directory recording is written as
// a directory with dirOut (inject, strip), else as one file or stream
// (convert). The caller closes in and aborts out.
func openInOut(s *cliutil.Session, o rewriteOpts, dirOut bool) (*cliutil.Input, *outfile.Output, error) {
	in, err := openInput(s, o.readOpts, reader.Options{Decompress: true})
	if err != nil {
		return nil, nil, err
	}
	out, err := s.OpenOutput(o.output, cliutil.OutputOptions{
		Given: o.outputGiven, Force: o.force, NoClobber: o.noClobber, Sync: o.sync, Binary: true, Input: in.File(),
		Dir: dirOut && in.Dir != "", InputDir: in.Dir})
	if err != nil {
		in.Close()
		return nil, nil, err
	}
	return in, out, nil
}

// rewriteOpts are the options of the commands that write the recording -i
// to -o (inject, strip, convert: openRewrite); all of convert's and
// strip's, whose parse function rewriteOptionsOf is.
type rewriteOpts struct {
	readOpts
	outputOpts
}

// rewriteOptionsOf reads them.
func rewriteOptionsOf(c *cli.Context) (o rewriteOpts, err error) {
	o.readOpts, err = readOptionsOf(c)
	o.outputOpts = outputOptionsOf(c)
	return o, err
}

// newWriter is the writer of a recording read from in to out: a
// directory recording's copy into a directory output, or one file or
// stream.
func newWriter(out *outfile.Output, in *cliutil.Input, opts writer.Options) (*writer.Writer, error) {
	if out.Dir != nil {
		return writer.NewDir(out.Dir, in.Reader, opts)
	}
	return writer.New(out.Dest(), in, opts)
}

// openSnapshotOutput opens the snapshot -o names; with journal, a new file
// appears under its name at once (watch). A snapshot is synced: it cannot be
// made again once its programs are gone.
func openSnapshotOutput(s *cliutil.Session, o outputOpts, journal bool) (*outfile.Output, error) {
	return s.OpenOutput(o.output, cliutil.OutputOptions{
		Given: o.outputGiven, Force: o.force, NoClobber: o.noClobber, Journal: journal, Sync: true})
}

// verbosity is -q and -v, which every command that does something has.
type verbosity struct {
	quiet   bool      // -q: print only errors
	verbose bool      // -v asks for more (and -q does not ask for less)
	notes   io.Writer // where the command prints its notes: stderr, or nowhere with -q
}

// verbosityOptionsOf reads -q and -v; both contradict each other, a usage
// error (checked before every command: quietAndVerbose).
func verbosityOptionsOf(c *cli.Context) (verbosity, error) {
	v := verbosity{quiet: c.Bool(flagQuiet), notes: c.App.ErrWriter}
	v.verbose = c.Bool(flagVerbose) && !v.quiet
	if v.quiet && c.Bool(flagVerbose) {
		return v, cliutil.Usagef("%s: -q and -v contradict each other", c.Command.Name)
	}
	if v.quiet {
		v.notes = io.Discard
	}
	return v, nil
}

// quietAndVerbose fails a command given both -q and -v.
func quietAndVerbose(c *cli.Context) error {
	_, err := verbosityOptionsOf(c)
	return err
}

// parseSize parses a size in bytes, with an optional K, M or G (KiB, MiB,
// GiB) suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult = 1 << 10
	case strings.HasSuffix(s, "M"):
		mult = 1 << 20
	case strings.HasSuffix(s, "G"):
		mult = 1 << 30
	}
	num := s
	if mult > 1 {
		num = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%s is not a size (bytes, or a number with K, M or G)", safetext.Quote(s))
	}
	return n * mult, nil
}

// sourceFlags are the flags of the commands that look programs up in a
// metadata source (inject, annotate: openSource), a flag for each row of
// sources.Rows. instead says what a source named instead of the running
// kernel is read instead of; stdin, whether it may be "-".
func sourceFlags(instead string, stdin bool) []cli.Flag {
	var flags []cli.Flag
	for _, r := range sources.Rows {
		flags = append(flags, &cli.StringFlag{Name: r.Flag, TakesFile: true, Usage: r.Usage(instead, stdin)})
	}
	return flags
}

// sourceOpts are what the flags of sourceFlags name.
type sourceOpts struct {
	sourceArgs map[string]sources.Arg // by the row's flag
}

// sourceOptionsOf reads them.
func sourceOptionsOf(c *cli.Context) sourceOpts {
	args := map[string]sources.Arg{}
	for _, r := range sources.Rows {
		if !c.IsSet(r.Flag) {
			continue
		}
		path := c.String(r.Flag)
		name := safetext.Quote(path)
		if r.Stdin {
			name = snapshotName(path)
		}
		args[r.Flag] = sources.Arg{Path: path, Set: true, Name: name}
	}
	return sourceOpts{sourceArgs: args}
}

// openSource opens the metadata source the flags name (sources.Open: the
// running kernel and its journal, or a snapshot instead); in is the
// recording the command reads, which a source named "-" may not share
// stdin with, and notes where its warnings go.
func openSource(s *cliutil.Session, o sourceOpts, in inputOpts, notes io.Writer) (*sources.Opened, error) {
	src, err := sources.Open(o.sourceArgs, &sources.Env{
		Stdin:          func(r *sources.Row) (*os.File, error) { return sourceStdin(s, in, r) },
		DefaultJournal: defaultJournal,
		Warn:           warner(notes),
	})
	var ue *sources.UsageError
	var oe *sources.OpenError
	switch {
	case errors.As(err, &ue):
		return nil, cliutil.UsageError{Err: err}
	case errors.As(err, &oe):
		return nil, cliutil.FileError(oe.Name, oe.Err)
	}
	return src, err
}

// sourceStdin is standard input for the source of r named "-", when the
// recording is not read from it.
func sourceStdin(s *cliutil.Session, in inputOpts, r *sources.Row) (*os.File, error) {
	switch {
	case in.input == "-" && (in.inputGiven || !s.StdinTerminal):
		return nil, cliutil.Usagef("--%s - and the recording cannot both be read from stdin: name the recording with -i FILE", r.Flag)
	case s.StdinTerminal:
		return nil, cliutil.Usagef("--%s -: stdin is a terminal; give %s on a pipe, or name its file", r.Flag, r.What)
	}
	f, ok := s.Stdin.(*os.File)
	if !ok {
		return nil, cliutil.Usagef("--%s -: stdin is not a file", r.Flag)
	}
	return f, nil
}

// warner prints a warning of the library's (its text safe to print) to
// notes.
func warner(notes io.Writer) func(string) {
	return func(msg string) { fmt.Fprintf(notes, "bpfmeta: warning: %s\n", msg) }
}
