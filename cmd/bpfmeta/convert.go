package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/reader"
)

func convertCommand() *cli.Command {
	return &cli.Command{
		Name:      "convert",
		Usage:     "copy a recording, converting between file and pipe format",
		ArgsUsage: " ",
		Description: "Writes the recording -i to -o: a pipe stream when -o is - (stdout) or a FIFO,\n" +
			"a file otherwise. File to file keeps the layout byte for byte; file to pipe\n" +
			"writes the header sections as HEADER_ATTR/HEADER_FEATURE records as perf inject\n" +
			"does; pipe to file turns them back into sections. Compressed records are copied\n" +
			"as they are.\n\n" +
			"Examples:\n" +
			"   bpfmeta convert -i perf.data -o - | perf report -i -\n" +
			"   perf record -o - -a sleep 1 | bpfmeta convert -o perf.data",
		Flags: []cli.Flag{
			inputFlag(),
			outputFlag(),
			forceFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("convert takes no arguments (use -i and -o)")
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
			if err := copyRecords(in, out); err != nil {
				return err
			}
			return out.commit()
		},
	}
}

func outputFlag() cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "write the recording to `FILE` (- for stdout, in pipe format)", TakesFile: true}
}

func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace the output file if it exists"}
}

// copyRecords copies every record of in to out unchanged.
func copyRecords(in *input, out *output) error {
	w, pipe, err := newWriter(in, out)
	if err != nil {
		return err
	}
	for in.Next() {
		if err := w.WriteRecord(in.Record()); err != nil {
			return fmt.Errorf("%s: %w", out.name, err)
		}
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("%s: %w", in.name, err)
	}
	if _, tr := in.Trailing(); len(tr) > 0 && pipe != nil {
		if err := pipe.WriteRaw(tr); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %w", out.name, err)
	}
	return nil
}
