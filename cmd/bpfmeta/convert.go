package main

import (
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/writer"
)

func convertCommand() *cli.Command {
	return &cli.Command{
		Name:      "convert",
		Usage:     "copy a recording, converting between file and pipe format",
		ArgsUsage: inputArgs,
		Description: `Writes the recording -i to -o: a pipe stream when -o is - (stdout) or a FIFO,
a file otherwise. File to file keeps the layout byte for byte; file to pipe
writes the header sections as HEADER_ATTR/HEADER_FEATURE records, as perf inject
does; pipe to file turns them back into sections (kept meanwhile in an unnamed
file next to the output). Compressed records are checked and copied as they
are. A directory recording (perf record --threads) becomes one file or stream:
the records of its data files after those of data, without its DIR_FORMAT
header section; compressed records of several data files (a zstd stream each)
cannot be put in one, and are refused.

Examples:
   bpfmeta convert -i perf.data -o - | perf report -i -
   perf record -o - -a -- sleep 1 | bpfmeta convert -o perf.data`,
		Flags: []cli.Flag{inputFlag(), outputFlag("recording"), forceFlag(), syncFlag(), maxExpansionFlag(), quietFlag(),
			verboseFlag("say what was read, and note every header section a pipe output leaves out")},
		Action: func(c *cli.Context) error {
			start := time.Now()
			in, out, err := openInOut(c, false)
			if err != nil {
				return err
			}
			defer in.Close()
			defer out.Abort()
			// A file output is a file-mode recording, whatever the input.
			opts := writer.Options{Format: perfdata.FormatPipe}
			if out.Regular() {
				opts = writer.Options{Format: perfdata.FormatFile, SpoolDir: filepath.Dir(c.String("output"))}
			}
			if _, err := copyRecords(in, out, opts, nil, notes(c), verbose(c)); err != nil {
				return err
			}
			if err := out.Commit(); err != nil {
				return err
			}
			if verbose(c) {
				printSummary(notes(c), in, start)
			}
			return nil
		},
	}
}
