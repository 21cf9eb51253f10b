package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

func dumpCommand() *cli.Command {
	return &cli.Command{
		Name:      "dump",
		Usage:     "list the records of a recording",
		ArgsUsage: " ",
		Description: "Prints one line per record: its offset, size and type, and for KSYMBOL,\n" +
			"BPF_EVENT and BPF_METADATA what they say. Records decoded from a COMPRESSED or\n" +
			"COMPRESSED2 record are indented, with their offset in the decompressed stream.\n" +
			"Offsets are byte offsets in the input, pipe header included.\n\n" +
			"Examples:\n" +
			"   bpfmeta dump -i perf.data\n" +
			"   perf record -o - -a sleep 1 | bpfmeta dump --stats",
		Flags: []cli.Flag{
			inputFlag(),
			&cli.BoolFlag{Name: "stats", Usage: "print the number of records of each type instead, as perf report --stats does"},
			&cli.BoolFlag{Name: "no-decompress", Usage: "do not decode the records inside compressed records"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("dump takes no arguments (use -i FILE)")
			}
			in, err := openInput(c.String("input"), c.App.Reader, reader.Options{Decompress: !c.Bool("no-decompress")})
			if err != nil {
				return err
			}
			defer in.Close()
			w := bufio.NewWriter(c.App.Writer)
			defer w.Flush()
			if c.Bool("stats") {
				err = dumpStats(w, in)
			} else {
				err = dumpRecords(w, in)
			}
			if err != nil {
				return err
			}
			return w.Flush()
		},
	}
}

func inputFlag() cli.Flag {
	return &cli.StringFlag{Name: "input", Aliases: []string{"i"}, Value: "-", Usage: "read the recording from `FILE` (- for stdin)", TakesFile: true}
}

func dumpRecords(w io.Writer, in *input) error {
	bo := in.ByteOrder()
	fmt.Fprintf(w, "# %s: %v format, %s\n", in.name, in.Format(), orderName(bo))
	if l := in.Layout(); l != nil {
		h := &l.Header
		fmt.Fprintf(w, "# attrs [%#x, +%#x) %d of %d bytes, data [%#x, +%#x), id_hdr_size %d\n",
			h.Attrs.Offset, h.Attrs.Size, len(l.Attrs), h.AttrSize, h.Data.Offset, h.Data.Size, l.IDHeaderSize())
		for _, f := range l.Features {
			fmt.Fprintf(w, "# feature %v [%#x, +%#x)\n", f.ID, f.Offset, f.Size)
		}
	}
	for in.Next() {
		rec := in.Record()
		indent := ""
		if rec.Compressed() {
			indent = "    "
		}
		fmt.Fprintf(w, "%s%#x [%#x]: %v%s\n", indent, rec.Offset, rec.Header.Size, rec.Header.Type, describe(rec, bo, in.IDHeaderSize()))
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("%s: %w", in.name, err)
	}
	if off, b := in.Trailing(); len(b) > 0 {
		fmt.Fprintf(w, "%#x: %d bytes after the last record that are not a record: %q\n", off, len(b), shorten(b, 40))
	}
	return nil
}

func orderName(bo binary.ByteOrder) string {
	if bo == binary.BigEndian {
		return "big-endian"
	}
	return "little-endian"
}

func shorten(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// describe says what a record holds, for the records bpfmeta cares about.
func describe(rec *perfdata.Record, bo binary.ByteOrder, idHdrSize int) string {
	var s string
	switch rec.Header.Type {
	case perfdata.RecordKSymbol:
		k, err := perfdata.DecodeKSymbol(rec.Raw, bo)
		if err != nil {
			return " (" + err.Error() + ")"
		}
		s = fmt.Sprintf(" addr %x len %d type %d flags %#x name %s", k.Addr, k.Len, k.Type, k.Flags, k.Name)
	case perfdata.RecordBPFEvent:
		e, err := perfdata.DecodeBPFEvent(rec.Raw, bo)
		if err != nil {
			return " (" + err.Error() + ")"
		}
		s = fmt.Sprintf(" type %d, flags %d, id %d tag %v", e.Type, e.Flags, e.ID, e.Tag)
	case perfdata.RecordBPFMetadata:
		m, err := perfdata.DecodeBPFMetadata(rec.Raw, bo, idHdrSize)
		if err != nil {
			return " (" + err.Error() + ")"
		}
		var b strings.Builder
		fmt.Fprintf(&b, " prog %s", m.ProgName)
		for i, e := range m.Entries {
			// as perf's perf_event__fprintf_bpf_metadata()
			fmt.Fprintf(&b, "\n  entry %d: %20s = %s", i, e.Key, e.Value)
		}
		s = b.String()
	case perfdata.RecordAuxtrace, perfdata.RecordHeaderTracingData:
		if rec.PayloadSize > 0 {
			s = fmt.Sprintf(" (+%#x bytes of data)", rec.PayloadSize)
		}
	}
	return s
}

func dumpStats(w io.Writer, in *input) error {
	counts := map[perfdata.RecordType]int{}
	total := 0
	for in.Next() {
		counts[in.Record().Header.Type]++
		total++
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("%s: %w", in.name, err)
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
		fmt.Fprintf(w, "%d bytes at %#x after the last record are not a record\n", len(b), off)
	}
	return nil
}
