package main

import (
	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// The flags several commands share, and what they open.

func inputFlag() cli.Flag {
	return &cli.StringFlag{Name: "input", Aliases: []string{"i"}, Value: "-", TakesFile: true,
		Usage: "read the recording from `FILE` (- for stdin; with stdin a terminal, ./perf.data)"}
}

func outputFlag(what string) cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", TakesFile: true,
		Usage: "write the " + what + " to `FILE` (- for stdout)"}
}

func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Aliases: []string{"f"},
		Usage: "replace FILE if it is a regular file (or write to it if it is a device or FIFO)"}
}

func quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"}
}

func verboseFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: what}
}

// openInput opens the recording -i names (Session.OpenInput).
func openInput(c *cli.Context, opts reader.Options) (*cliutil.Input, error) {
	return sessionOf(c).OpenInput(c.String("input"), c.IsSet("input"), opts)
}

// openOutput opens the recording -o names, which may not be in's file
// (Session.OpenOutput).
func openOutput(c *cli.Context, in *cliutil.Input) (*outfile.Output, error) {
	return sessionOf(c).OpenOutput(c.String("output"), cliutil.OutputOptions{
		Given: c.IsSet("output"), Force: c.Bool("force"), Binary: true, Input: in.File})
}

// openSnapshotOutput opens the snapshot -o names; with journal, a new file
// appears under its name at once (watch).
func openSnapshotOutput(c *cli.Context, journal bool) (*outfile.Output, error) {
	return sessionOf(c).OpenOutput(c.String("output"), cliutil.OutputOptions{
		Given: c.IsSet("output"), Force: c.Bool("force"), Journal: journal})
}

// recordFormat is the format a recording written to out must have
// (writer.Options.Format): the input's (0) for a regular file, a pipe
// stream for anything else, held or not.
func recordFormat(out *outfile.Output) perfdata.Format {
	if out.Regular() {
		return 0
	}
	return perfdata.FormatPipe
}
