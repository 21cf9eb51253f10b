// Package dump lists a recording's records as text, as perf report -D and --stats do.
//
// Records prints a line per record (its offset, size and type, and what the
// record-type table says of it: perfdata.Record.Describe), the header's
// sections first; Stats counts the records of each type in perf report
// --stats' layout. Both stop at the first record too short for its fields
// (perfdata.CheckFields), as every reader of a recording's programs does,
// and escape what comes from the recording (internal/safetext). bpfmeta
// dump is these two and its flags.
package dump

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Records writes the listing of r's records to w: a comment line naming
// the recording (name), its format and byte order, and for a file its
// sections; then a line per record, those decoded from a compressed
// record indented, each followed by its bytes in hex with hex; a line
// naming each data file of a directory recording before its records; the
// bytes after the last record that are not one. The error is r's, or a
// *reader.FormatError for a record too short for its fields (Check).
func Records(w io.Writer, r *reader.Reader, name string, hex bool) error {
	bo := r.ByteOrder()
	fmt.Fprintf(w, "# %s: %v format, %s\n", safetext.Clean(name), r.Format(), OrderName(bo))
	if l := r.Layout(); l != nil {
		h := &l.Header
		fmt.Fprintf(w, "# attrs [%#x, +%#x) %d of %d bytes, data [%#x, +%#x), id_hdr_size %d\n",
			h.Attrs.Offset, h.Attrs.Size, len(l.Attrs), h.AttrSize, h.Data.Offset, h.Data.Size, l.IDHeaderSize())
		for _, f := range l.Features {
			fmt.Fprintf(w, "# feature %v [%#x, +%#x)\n", f.ID, f.Offset, f.Size)
		}
	}
	if files := r.DataFiles(); r.IsDirRecording() {
		fmt.Fprintf(w, "# a directory recording: data and %s, read in this order\n", plural(len(files), "data file"))
	}
	part := 0
	var line []byte
	for r.Next() {
		rec := r.Record()
		if rec.Part != part {
			part = rec.Part
			fmt.Fprintf(w, "# %s\n", r.PartName(part))
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
		if err := Check(rec); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if off, b := r.Trailing(); len(b) > 0 {
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

// OrderName names a byte order as the listing and bpfmeta -v do.
func OrderName(bo binary.ByteOrder) string {
	if bo == binary.BigEndian {
		return "big-endian"
	}
	return "little-endian"
}

// Check refuses a record too short for its fields, as inject and show do
// (perfdata.CheckFields), with the reader's FormatError: where the record
// is, as the reader says it.
func Check(rec *perfdata.Record) error {
	if err := perfdata.CheckFields(rec.Header.Type, rec.Raw); err != nil {
		return &reader.FormatError{Offset: rec.Offset, Outer: rec.Outer, Msg: err.Error(), Err: reader.ErrCorrupt}
	}
	return nil
}

// Stats writes the number of r's records of each type to w, in the
// layout of perf report --stats' "Aggregated stats" (events__fprintf),
// and the bytes after the last record that are not one. The error is r's.
func Stats(w io.Writer, r *reader.Reader) error {
	counts := map[perfdata.RecordType]int{}
	total := 0
	for r.Next() {
		counts[r.Record().Header.Type]++
		total++
	}
	if err := r.Err(); err != nil {
		return err
	}
	types := make([]perfdata.RecordType, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	slices.Sort(types)
	fmt.Fprintf(w, "\nAggregated stats:\n%20s events: %10d\n", "TOTAL", total)
	for _, t := range types {
		fmt.Fprintf(w, "%20s events: %10d  (%4.1f%%)\n", t, counts[t], 100*float64(counts[t])/float64(total))
	}
	if off, b := r.Trailing(); len(b) > 0 {
		fmt.Fprintf(w, "%s at %#x after the last record are not a record\n", plural(len(b), "byte"), off)
	}
	return nil
}

// plural is "1 byte", "2 bytes".
func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
