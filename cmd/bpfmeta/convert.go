package main

import (
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
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
		Flags: []cli.Flag{inputFlag(), outputFlag("recording"), forceFlag(), noClobberFlag(), syncFlag(), maxExpansionFlag(), quietFlag(),
			verboseFlag("say what was read, and note every header section a pipe output leaves out")},
		Action: func(c *cli.Context) error {
			start := time.Now()
			o, err := rewriteOptionsOf(c)
			if err != nil {
				return err
			}
			rw, err := openRewrite(sessionOf(c), o, false, "", func(out *outfile.Output) writer.Options {
				// A file output is a file-mode recording, whatever the input.
				if out.Regular() {
					return writer.Options{Format: perfdata.FormatFile, SpoolDir: filepath.Dir(o.output)}
				}
				return writer.Options{Format: perfdata.FormatPipe}
			})
			if err != nil {
				return err
			}
			defer rw.close()
			if _, err := rw.copy(nil); err != nil {
				return err
			}
			if err := rw.commit(); err != nil {
				return err
			}
			if o.verbose {
				printSummary(o.notes, rw.in, start)
			}
			return nil
		},
	}
}
