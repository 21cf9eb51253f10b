package dump_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/bpfmeta/bpfmeta/dump"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestCheck: the listing refuses a KSYMBOL or BPF_EVENT record too short for
// its fields with the reader's FormatError, so it says where the record is
// as the reader's own errors do (a record of a compressed one included).
func TestCheck(t *testing.T) {
	short := func(typ perfdata.RecordType, offset, outer int64) *perfdata.Record {
		raw := make([]byte, perfdata.EventHeaderSize+4)
		binary.LittleEndian.PutUint32(raw, uint32(typ))
		binary.LittleEndian.PutUint16(raw[6:], uint16(len(raw)))
		return &perfdata.Record{Header: perfdata.EventHeader{Type: typ, Size: uint16(len(raw))}, Raw: raw, Offset: offset, Outer: outer}
	}
	for _, c := range []struct {
		name string
		rec  *perfdata.Record
		want string // "" for no error
	}{
		{"KSYMBOL", short(perfdata.RecordKSymbol, 0x1a8, -1),
			"KSYMBOL record of 12 bytes, want at least 24 at 0x1a8"},
		{"KSYMBOL compressed", short(perfdata.RecordKSymbol, 0x40, 0x2000),
			"KSYMBOL record of 12 bytes, want at least 24 at decompressed offset 0x40 (data of the compressed record at 0x2000)"},
		{"BPF_EVENT", short(perfdata.RecordBPFEvent, 0x30, -1),
			"BPF_EVENT record of 12 bytes, want at least 24 at 0x30"},
		{"MMAP", short(perfdata.RecordMmap, 0x30, -1), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := dump.Check(c.rec)
			if c.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != c.want {
				t.Fatalf("Check = %v, want %q", err, c.want)
			}
			var fe *reader.FormatError
			if !errors.As(err, &fe) || !errors.Is(err, reader.ErrCorrupt) {
				t.Errorf("Check = %v (%T), want a FormatError (corrupt)", err, err)
			}
		})
	}
}
