package main

import (
	"errors"
	"fmt"
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

// The flags several commands share, and what they open.

func inputFlag() cli.Flag {
	return &cli.StringFlag{Name: "input", Aliases: []string{"i"}, Value: "-", TakesFile: true,
		Usage: "read the recording from `FILE`, or from the directory perf record --threads wrote (- for stdin; without -i or FILE, stdin, or ./perf.data when stdin is a terminal)"}
}

// maxExpansionFlag is --max-expansion of every command that reads a
// recording (reader.Options.MaxExpansion; openInput reads it).
func maxExpansionFlag() cli.Flag {
	return &cli.IntFlag{Name: "max-expansion", Value: reader.DefaultMaxExpansion,
		Usage: "read compressed records that expand up to `N` times their size (perf record -z writes 5 to 20; more is taken for a zstd bomb once past 64 MiB; 0: no limit)"}
}

func outputFlag(what string) cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", TakesFile: true,
		Usage: "write the " + what + " to `FILE` (- for stdout)"}
}

func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Aliases: []string{"f"},
		Usage: "replace FILE if it is a regular file, without keeping it as FILE.old (or write to it if it is a device or FIFO)"}
}

// noClobberFlag is --no-clobber of the commands that write a file (package
// outfile's rule): without it, a file of the caller's at -o is replaced, as
// perf inject replaces it, and kept as FILE.old, as perf record keeps
// perf.data.old.
func noClobberFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-clobber",
		Usage: "refuse a FILE that exists and is not empty (by default a file of yours is replaced, as perf inject -o does, and kept as FILE.old, as perf record does, replacing a FILE.old of yours)"}
}

// syncFlag is --sync of the commands that write a recording: a recording
// can be made again from its input, so by default it is not synced (as perf
// and cp do not sync); snapshots always are.
func syncFlag() cli.Flag {
	return &cli.BoolFlag{Name: "sync",
		Usage: "have a recording written to FILE on the disk before bpfmeta exits (fsync the file and its directory)"}
}

func quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"}
}

func verboseFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: what}
}

// inputArgs is the ArgsUsage of the commands that read a recording: it
// may be named as -i FILE or as the argument, as perf report -i and bpftool
// take a file.
const inputArgs = "[FILE]"

// inputPath is the recording -i or the argument names, and whether one
// did; both, or more than one argument, is a usage error.
func inputPath(c *cli.Context) (path string, given bool, err error) {
	args := c.Args()
	switch {
	case args.Len() == 2 && !c.IsSet("output") && slices.ContainsFunc(c.Command.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "output") }):
		// perf inject -i IN -o OUT, cp IN OUT: the second is the output
		return "", false, cliutil.Usagef("%s reads one recording; got %s and %s (to write %s: -o %s)", c.Command.Name, safetext.Quote(args.Get(0)), safetext.Quote(args.Get(1)), safetext.Quote(args.Get(1)), safetext.Quote(args.Get(1)))
	case args.Len() > 1:
		return "", false, cliutil.Usagef("%s reads one recording; got %s and %s", c.Command.Name, safetext.Quote(args.Get(0)), safetext.Quote(args.Get(1)))
	case args.Len() == 1 && c.IsSet("input"):
		return "", false, cliutil.Usagef("%s: name the recording once, as -i FILE or as the argument; got -i %s and %s", c.Command.Name, safetext.Quote(c.String("input")), safetext.Quote(args.First()))
	case args.Len() == 1:
		return args.First(), true, nil
	}
	return c.String("input"), c.IsSet("input"), nil
}

// openInput opens the recording -i or the argument names
// (Session.OpenInput).
func openInput(c *cli.Context, opts reader.Options) (*cliutil.Input, error) {
	path, given, err := inputPath(c)
	if err != nil {
		return nil, err
	}
	switch n := c.Int("max-expansion"); {
	case n < 0:
		return nil, cliutil.Usagef("--max-expansion %d: give a number of times, or 0 for no limit", n)
	case n == 0:
		opts.MaxExpansion = -1 // no limit
	default:
		opts.MaxExpansion = n
	}
	return sessionOf(c).OpenInput(path, given, opts)
}

// openInOut opens the recording to read (decompressing) and the one -o
// names to write, which may not be the input's file: what the commands that
// write a recording again start with. A directory recording is written as
// a directory with dirOut (inject, strip), else as one file or stream
// (convert). The caller closes in and aborts out.
func openInOut(c *cli.Context, dirOut bool) (*cliutil.Input, *outfile.Output, error) {
	in, err := openInput(c, reader.Options{Decompress: true})
	if err != nil {
		return nil, nil, err
	}
	out, err := sessionOf(c).OpenOutput(c.String("output"), cliutil.OutputOptions{
		Given: c.IsSet("output"), Force: c.Bool("force"), NoClobber: c.Bool("no-clobber"), Sync: c.Bool("sync"), Binary: true, Input: in.File,
		Dir: dirOut && in.Dir != "", InputDir: in.Dir})
	if err != nil {
		in.Close()
		return nil, nil, err
	}
	return in, out, nil
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
func openSnapshotOutput(c *cli.Context, journal bool) (*outfile.Output, error) {
	return sessionOf(c).OpenOutput(c.String("output"), cliutil.OutputOptions{
		Given: c.IsSet("output"), Force: c.Bool("force"), NoClobber: c.Bool("no-clobber"), Journal: journal, Sync: true})
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

// sourceArgs are what the flags of sourceFlags name.
func sourceArgs(c *cli.Context) map[string]sources.Arg {
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
	return args
}

// openSource opens the metadata source the flags name (sources.Open: the
// running kernel and its journal, or a snapshot instead).
func openSource(s *cliutil.Session, c *cli.Context) (*sources.Opened, error) {
	src, err := sources.Open(sourceArgs(c), &sources.Env{
		Stdin:          func(r *sources.Row) (*os.File, error) { return sourceStdin(s, c, r) },
		DefaultJournal: defaultJournal,
		Warn:           warner(c),
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
func sourceStdin(s *cliutil.Session, c *cli.Context, r *sources.Row) (*os.File, error) {
	in, given, err := inputPath(c)
	switch {
	case err != nil:
		return nil, err
	case in == "-" && (given || !s.StdinTerminal):
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

// warner prints a warning of the library's (its text safe to print).
func warner(c *cli.Context) func(string) {
	return func(msg string) { fmt.Fprintf(notes(c), "bpfmeta: warning: %s\n", msg) }
}
