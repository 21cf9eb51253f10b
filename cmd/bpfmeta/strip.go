package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

func stripCommand() *cli.Command {
	return &cli.Command{
		Name:      "strip",
		Usage:     "remove PERF_RECORD_BPF_METADATA records, for perf before 6.16",
		ArgsUsage: " ",
		Description: "perf before 6.16 stops at the first BPF_METADATA record (\"failed to process\n" +
			"type: 84\"). strip copies -i to -o without them; every other byte is unchanged\n" +
			"(offsets after the removed records are adjusted) and the format is kept, so for\n" +
			"a recording bpfmeta injected the result is what it was before. It also removes the\n" +
			"records perf >= 6.16 wrote itself.\n\n" +
			"Examples:\n" +
			"   bpfmeta strip -i perf.meta.data -o perf.data\n" +
			"   bpfmeta strip < perf.meta.data | perf report -i -",
		Flags: []cli.Flag{inputFlag(), outputFlag(), forceFlag(),
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"}},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("strip takes no arguments (use -i and -o)")
			}
			in, err := openInput(c.String("input"), c.App.Reader, reader.Options{})
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := openOutput(c.String("output"), c.Bool("force"), in, c.App.Writer)
			if err != nil {
				return err
			}
			defer out.abort()
			removed, err := copyRecords(in, out, false, func(rec *perfdata.Record) bool {
				return rec.Header.Type != perfdata.RecordBPFMetadata || rec.Compressed()
			}, notes(c), c.App.ErrWriter)
			if err != nil {
				return err
			}
			if !c.Bool("quiet") {
				fmt.Fprintf(c.App.ErrWriter, "bpfmeta: %s: removed %d BPF_METADATA record(s)\n", in.name, removed)
			}
			return out.commit()
		},
	}
}
