package perfdata

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// perf's text of a BPF_METADATA record's entry, as
// perf_event__fprintf_bpf_metadata() prints it (perf script
// --show-bpf-events): each entry on a line of its own, after the line of
// the record's program (" prog %s").
const (
	entryPrefix = "  entry "
	entryFormat = entryPrefix + "%d: %20s = %s\n"
)

// AppendEntryLine appends entry i of a BPF_METADATA record to b after
// prefix, as perf writes it ("  entry %d: %20s = %s\n"), with what came
// from the input escaped (safetext.Clean): the one rule of that line,
// which bpfmeta dump, show and programs print (doc.WriteEntry).
func AppendEntryLine(b []byte, prefix string, i int, key, value string) []byte {
	return fmt.Appendf(b, "%s"+entryFormat, prefix, i, safetext.Clean(key), safetext.Clean(value))
}

// IsEntryLine reports whether line (without its newline) is an entry as
// perf writes it (AppendEntryLine without a prefix) of a key without
// blanks, as a variable's name is: ^  entry \d+: +[^ ]+ = .
func IsEntryLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte(entryPrefix))
	if !ok {
		return false
	}
	d := 0
	for d < len(rest) && '0' <= rest[d] && rest[d] <= '9' {
		d++
	}
	if d == 0 || d+1 >= len(rest) || rest[d] != ':' || rest[d+1] != ' ' {
		return false
	}
	k := d + 1
	for k < len(rest) && rest[k] == ' ' {
		k++
	}
	e := k
	for e < len(rest) && rest[e] != ' ' {
		e++
	}
	return e > k && bytes.HasPrefix(rest[e:], []byte(" = "))
}

// The Describe of the record-type table's rows (Record.Describe): what
// bpfmeta dump prints after a record's type.

func describeKSymbol(r *Record, bo binary.ByteOrder) string {
	k, err := DecodeKSymbol(r.Raw, bo)
	if err != nil {
		return " (" + err.Error() + ")"
	}
	return fmt.Sprintf(" addr %x len %d type %d flags %#x name %s", k.Addr, k.Len, uint16(k.Type), uint16(k.Flags), safetext.Clean(k.Name))
}

func describeBPFEvent(r *Record, bo binary.ByteOrder) string {
	e, err := DecodeBPFEvent(r.Raw, bo)
	if err != nil {
		return " (" + err.Error() + ")"
	}
	return fmt.Sprintf(" type %d, flags %d, id %d tag %v", uint16(e.Type), e.Flags, e.ID, e.Tag)
}

// describeBPFMetadata is perf's text of the record
// (perf_event__fprintf_bpf_metadata), its program's line and then a line
// an entry, without the last newline (dump ends the line).
func describeBPFMetadata(r *Record, bo binary.ByteOrder) string {
	m, err := DecodeBPFMetadata(r.Raw, bo)
	if err != nil {
		return " (" + err.Error() + ")"
	}
	b := fmt.Appendf(nil, " prog %s\n", safetext.Clean(m.ProgName))
	for i, e := range m.Entries {
		b = AppendEntryLine(b, "", i, e.Key, e.Value)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// describePayload is the size of the data after an AUXTRACE or
// HEADER_TRACING_DATA record (Record.PayloadSize), if any.
func describePayload(r *Record, _ binary.ByteOrder) string {
	if r.PayloadSize > 0 {
		return fmt.Sprintf(" (+%#x bytes of data)", r.PayloadSize)
	}
	return ""
}
