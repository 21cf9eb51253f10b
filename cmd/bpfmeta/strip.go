package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

func stripCommand() *cli.Command {
	return &cli.Command{
		Name:      "strip",
		Usage:     "remove the BPF_METADATA records, for perf before 6.17",
		ArgsUsage: " ",
		Description: `perf before 6.17 stops at the first BPF_METADATA record ("failed to process
type: 84"). strip copies -i to -o without them: every other byte is unchanged
(offsets after the removed records are adjusted) and the format is kept, so for
a recording bpfmeta injected the result is what it was before. It also removes
the records perf >= 6.17 wrote itself.

Examples:
   bpfmeta strip -i perf.meta.data -o perf.data
   bpfmeta strip -i perf.meta.data -o - | perf report -i -`,
		Flags: []cli.Flag{inputFlag(), outputFlag("recording"), forceFlag(), quietFlag()},
		Action: func(c *cli.Context) error {
			if err := noArgs(c, "use -i and -o"); err != nil {
				return err
			}
			in, err := openInput(c, reader.Options{})
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := openOutput(c, in, binaryOutput, false)
			if err != nil {
				return err
			}
			defer out.abort()
			removed, err := copyRecords(sessionOf(c), in, out, writer.Options{}, func(rec *perfdata.Record) bool {
				return rec.Header.Type != perfdata.RecordBPFMetadata || rec.Compressed()
			}, notes(c))
			if err != nil {
				return err
			}
			if err := out.commit(); err != nil {
				return err
			}
			fmt.Fprintf(notes(c), "bpfmeta: %s: removed %s\n", in.name, plural(removed, "BPF_METADATA record"))
			return nil
		},
	}
}
