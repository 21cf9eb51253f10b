package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
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
			if _, err := copyRecords(in, out, true, nil, c.App.ErrWriter, c.App.ErrWriter); err != nil {
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

// copyRecords copies the records of in to out unchanged, all of them or
// those keep keeps, and says how many it left out. toFile is newWriter's;
// notes get its notes, warnings the one about trailing bytes.
func copyRecords(in *input, out *output, toFile bool, keep func(*perfdata.Record) bool, notes, warnings io.Writer) (dropped int, err error) {
	w, pipe, err := newWriter(in, out, notes, toFile)
	if err != nil {
		return 0, err
	}
	defer w.Abort() // stops the writer when an error ends the command early
	for in.Next() {
		rec := in.Record()
		if keep != nil && !keep(rec) {
			dropped++
			continue
		}
		if err := w.WriteRecord(rec); err != nil {
			// the record's offset is the input's
			return dropped, fmt.Errorf("%s: writing %s: %w", in.name, out.name, err)
		}
	}
	if err := in.Err(); err != nil {
		return dropped, fmt.Errorf("%s: %w", in.name, err)
	}
	if err := writeTrailing(in, pipe, warnings); err != nil {
		return dropped, err
	}
	if err := w.Close(); err != nil {
		return dropped, fmt.Errorf("%s: %w", out.name, err)
	}
	return dropped, nil
}

// writeTrailing copies the bytes after a pipe stream's last record that
// are not a record to a pipe output; a file cannot hold them, so for a
// file output they are dropped with a warning.
func writeTrailing(in *input, pipe *writer.Pipe, stderr io.Writer) error {
	off, tr := in.Trailing()
	if len(tr) == 0 {
		return nil
	}
	if pipe == nil {
		fmt.Fprintf(stderr, "bpfmeta: warning: %s: dropped %d bytes at %#x after the last record that are not a record\n", in.name, len(tr), off)
		return nil
	}
	return pipe.WriteRaw(tr)
}
