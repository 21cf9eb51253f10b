package main

import (
	"bufio"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/dump"
	"github.com/bpfmeta/bpfmeta/reader"
)

func dumpCommand() *cli.Command {
	return &cli.Command{
		Name:      "dump",
		Usage:     "list the records of a recording",
		ArgsUsage: inputArgs,
		Description: `Prints one line per record: its offset, size and type, and for KSYMBOL,
BPF_EVENT and BPF_METADATA what they say. Records decoded from a COMPRESSED or
COMPRESSED2 record are indented, with their offset in the decompressed stream.
Offsets are byte offsets in the input, pipe header included; in a directory
recording (perf record --threads), in the file the "# data.N" line before names.
Text from the recording (names, values) is printed with control characters
escaped.

Examples:
   bpfmeta dump -i perf.data
   perf record -o - -a -- sleep 1 | bpfmeta dump --stats`,
		Flags: []cli.Flag{
			inputFlag(),
			&cli.BoolFlag{Name: flagStats, Usage: "print the number of records of each type instead, as perf report --stats does"},
			&cli.BoolFlag{Name: flagNoDecompress, Usage: "do not decode the records inside compressed records"},
			maxExpansionFlag(), quietFlag(),
			verboseFlag("print every record's bytes in hex too, and say what was read"),
		},
		Action: func(c *cli.Context) error {
			start := time.Now()
			o, err := dumpOptionsOf(c)
			if err != nil {
				return err
			}
			in, err := openInput(sessionOf(c), o.readOpts, reader.Options{Decompress: !o.noDecompress})
			if err != nil {
				return err
			}
			defer in.Close()
			warnUnfinished(o.notes, in)
			w := bufio.NewWriter(c.App.Writer)
			if o.stats {
				err = dump.Stats(w, in.Reader)
			} else {
				err = dump.Records(w, in.Reader, in.Name, o.verbose)
			}
			if err != nil {
				err = fmt.Errorf("%s: %w", in.Name, err)
			}
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			if err == nil && o.verbose {
				printSummary(o.notes, in, start)
			}
			return err
		},
	}
}

// dump's own flags.
const (
	flagStats        = "stats"
	flagNoDecompress = "no-decompress"
)

// dumpOpts are dump's options.
type dumpOpts struct {
	readOpts
	stats, noDecompress bool
}

// dumpOptionsOf reads dump's flags: the one place they are read.
func dumpOptionsOf(c *cli.Context) (dumpOpts, error) {
	r, err := readOptionsOf(c)
	return dumpOpts{readOpts: r, stats: c.Bool(flagStats), noDecompress: c.Bool(flagNoDecompress)}, err
}
