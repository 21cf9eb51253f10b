package live

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// This file reads the few perf.data records the kernel tests compare with:
// PERF_RECORD_KSYMBOL, PERF_RECORD_BPF_EVENT and PERF_RECORD_BPF_METADATA,
// from uncompressed file-mode recordings of this machine (little endian).
// It is test code on purpose: the project's reader is a separate package, and
// these tests must not depend on it.

const (
	perfMagic         = "PERFILE2"
	perfHeaderSize    = 104
	recordKSymbol     = 17
	recordBPFEvent    = 18
	recordAuxtrace    = 71
	recordCompressed  = 81
	recordCompressed2 = 83
	recordBPFMetadata = 84
	// perf's BPF_PROG_NAME_LEN (KSYM_NAME_LEN) in perf 7.2.
	perfProgNameLen = 512
	// PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER
	ksymUnregister = 1
	// PERF_BPF_EVENT_PROG_LOAD
	bpfEventProgLoad = 1
)

type perfKSymbol struct {
	Addr  uint64
	Len   uint32
	Type  uint16
	Flags uint16
	Name  string
}

type perfBPFEvent struct {
	Type  uint16
	Flags uint16
	ID    uint32
	Tag   perfdata.BPFTag
}

type perfBPFMetadata struct {
	ProgName string
	Entries  []bpfprog.Entry
}

// perfRecord is one of the three records, with its file offset.
type perfRecord struct {
	Offset   int64
	KSymbol  *perfKSymbol
	BPFEvent *perfBPFEvent
	Metadata *perfBPFMetadata
}

func (r perfRecord) String() string {
	switch {
	case r.KSymbol != nil:
		return fmt.Sprintf("%#x KSYMBOL %+v", r.Offset, *r.KSymbol)
	case r.BPFEvent != nil:
		return fmt.Sprintf("%#x BPF_EVENT %+v", r.Offset, *r.BPFEvent)
	default:
		return fmt.Sprintf("%#x BPF_METADATA %+v", r.Offset, *r.Metadata)
	}
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// readPerfRecords returns the KSYMBOL, BPF_EVENT and BPF_METADATA records of
// a perf.data file in file order.
func readPerfRecords(t *testing.T, path string) []perfRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(b) < perfHeaderSize || string(b[:8]) != perfMagic {
		t.Fatalf("%s: not a little-endian perf.data file", path)
	}
	off, size := int64(le.Uint64(b[40:])), int64(le.Uint64(b[48:]))
	end := off + size
	if end > int64(len(b)) {
		t.Fatalf("%s: data section %d+%d beyond the %d-byte file", path, off, size, len(b))
	}
	var recs []perfRecord
	for off < end {
		if end-off < 8 {
			t.Fatalf("%s: truncated record header at %#x", path, off)
		}
		typ := le.Uint32(b[off:])
		n := int64(le.Uint16(b[off+6:]))
		if n < 8 || off+n > end {
			t.Fatalf("%s: record type %d at %#x has size %d", path, typ, off, n)
		}
		r := b[off : off+n]
		switch typ {
		case recordKSymbol:
			recs = append(recs, perfRecord{Offset: off, KSymbol: &perfKSymbol{
				Addr: le.Uint64(r[8:]), Len: le.Uint32(r[16:]), Type: le.Uint16(r[20:]),
				Flags: le.Uint16(r[22:]), Name: cString(r[24:]),
			}})
		case recordBPFEvent:
			e := &perfBPFEvent{Type: le.Uint16(r[8:]), Flags: le.Uint16(r[10:]), ID: le.Uint32(r[12:])}
			copy(e.Tag[:], r[16:24])
			recs = append(recs, perfRecord{Offset: off, BPFEvent: e})
		case recordBPFMetadata:
			nameEnd := 8 + perfProgNameLen
			nr := int(le.Uint64(r[nameEnd:]))
			ents := r[nameEnd+8:]
			if len(ents) < nr*(perfdata.BPFMetadataKeyLen+perfdata.BPFMetadataValueLen) {
				t.Fatalf("%s: BPF_METADATA at %#x: %d entries do not fit in %d bytes", path, off, nr, n)
			}
			m := &perfBPFMetadata{ProgName: cString(r[8:nameEnd])}
			for i := range nr {
				e := ents[i*(perfdata.BPFMetadataKeyLen+perfdata.BPFMetadataValueLen):]
				m.Entries = append(m.Entries, bpfprog.Entry{
					Key:   cString(e[:perfdata.BPFMetadataKeyLen]),
					Value: cString(e[perfdata.BPFMetadataKeyLen : perfdata.BPFMetadataKeyLen+perfdata.BPFMetadataValueLen]),
				})
			}
			recs = append(recs, perfRecord{Offset: off, Metadata: m})
		case recordAuxtrace, recordCompressed, recordCompressed2:
			t.Fatalf("%s: record type %d at %#x: the tests record without AUX data and compression", path, typ, off)
		}
		off += n
	}
	return recs
}

// keys returns the entries' keys.
func keys(es []bpfprog.Entry) []string {
	var ks []string
	for _, e := range es {
		ks = append(ks, e.Key)
	}
	return ks
}

// kallsyms returns the names of the [bpf] symbols in /proc/kallsyms by address.
func kallsyms(t *testing.T) map[uint64][]string {
	t.Helper()
	b, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	syms := make(map[uint64][]string)
	for line := range strings.Lines(string(b)) {
		if !strings.HasSuffix(line, "\t[bpf]\n") {
			continue
		}
		var addr uint64
		var typ, name string
		if _, err := fmt.Sscanf(line, "%x %s %s", &addr, &typ, &name); err != nil {
			t.Fatalf("/proc/kallsyms: %q: %v", line, err)
		}
		syms[addr] = append(syms[addr], name)
	}
	return syms
}
