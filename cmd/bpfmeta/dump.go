package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
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
				err = dumpStats(w, in)
			} else {
				err = dumpRecords(w, in, o.verbose)
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

func dumpRecords(w io.Writer, in *cliutil.Input, hex bool) error {
	bo := in.ByteOrder()
	fmt.Fprintf(w, "# %s: %v format, %s\n", safetext.Clean(in.Name), in.Format(), orderName(bo))
	if l := in.Layout(); l != nil {
		h := &l.Header
		fmt.Fprintf(w, "# attrs [%#x, +%#x) %d of %d bytes, data [%#x, +%#x), id_hdr_size %d\n",
			h.Attrs.Offset, h.Attrs.Size, len(l.Attrs), h.AttrSize, h.Data.Offset, h.Data.Size, l.IDHeaderSize())
		for _, f := range l.Features {
			fmt.Fprintf(w, "# feature %v [%#x, +%#x)\n", f.ID, f.Offset, f.Size)
		}
	}
	if files := in.DataFiles(); in.IsDirRecording() {
		fmt.Fprintf(w, "# a directory recording: data and %s, read in this order\n", plural(len(files), "data file"))
	}
	part := 0
	var line []byte
	for in.Next() {
		rec := in.Record()
		if rec.Part != part {
			part = rec.Part
			fmt.Fprintf(w, "# %s\n", in.PartName(part))
		}
		indent := ""
		if rec.Compressed() {
			indent = "    "
		}
		// as fmt's "%s%#x [%#x]: %v%s\n", in a third of its time: a
		// listing is a line per record, and may be of 10 million records
		// per 100 MB (docs/safety.md, CPU in proportion to the input)
		line = append(append(line[:0], indent...), "0x"...)
		line = strconv.AppendInt(line, rec.Offset, 16)
		line = append(line, " [0x"...)
		line = strconv.AppendUint(line, uint64(rec.Header.Size), 16)
		line = append(append(append(line, "]: "...), rec.Header.Type.String()...), rec.Describe(bo)...)
		w.Write(append(line, '\n'))
		if hex {
			hexDump(w, indent, rec.Raw)
		}
		if err := malformed(rec); err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	if off, b := in.Trailing(); len(b) > 0 {
		fmt.Fprintf(w, "%#x: %s after the last record that are not a record: %s\n", off, plural(len(b), "byte"), safetext.Quote(string(b[:min(len(b), 40)])))
	}
	return nil
}

// hexDump prints b as perf report -D does: 16 bytes a line, after their
// offset in the record.
func hexDump(w io.Writer, indent string, b []byte) {
	for i := 0; i < len(b); i += 16 {
		fmt.Fprintf(w, "%s  %04x: % x\n", indent, i, b[i:min(i+16, len(b))])
	}
}

func orderName(bo binary.ByteOrder) string {
	if bo == binary.BigEndian {
		return "big-endian"
	}
	return "little-endian"
}

// malformed refuses a record too short for its fields, as inject and
// show do (perfdata.CheckFields), where it is as the reader says it.
func malformed(rec *perfdata.Record) error {
	if err := perfdata.CheckFields(rec.Header.Type, rec.Raw); err != nil {
		return &reader.FormatError{Offset: rec.Offset, Outer: rec.Outer, Msg: err.Error(), Err: reader.ErrCorrupt}
	}
	return nil
}

func dumpStats(w io.Writer, in *cliutil.Input) error {
	counts := map[perfdata.RecordType]int{}
	total := 0
	for in.Next() {
		counts[in.Record().Header.Type]++
		total++
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	types := make([]perfdata.RecordType, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	slices.Sort(types)
	// The layout of perf report --stats' "Aggregated stats" (events__fprintf).
	fmt.Fprintf(w, "\nAggregated stats:\n%20s events: %10d\n", "TOTAL", total)
	for _, t := range types {
		fmt.Fprintf(w, "%20s events: %10d  (%4.1f%%)\n", t, counts[t], 100*float64(counts[t])/float64(total))
	}
	if off, b := in.Trailing(); len(b) > 0 {
		fmt.Fprintf(w, "%s at %#x after the last record are not a record\n", plural(len(b), "byte"), off)
	}
	return nil
}
