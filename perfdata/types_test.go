package perfdata

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// TestRecordTypes: every constant has a row with its name, String, Noun
// and Known answer from the table, a type without a row is its number,
// and the rows marked Inspected are exactly KSYMBOL and BPF_EVENT (the
// records recrun.Passes keeps out of runs).
func TestRecordTypes(t *testing.T) {
	names := map[RecordType]string{
		RecordMmap: "MMAP", RecordLost: "LOST", RecordComm: "COMM", RecordExit: "EXIT",
		RecordThrottle: "THROTTLE", RecordUnthrottle: "UNTHROTTLE", RecordFork: "FORK",
		RecordRead: "READ", RecordSample: "SAMPLE", RecordMmap2: "MMAP2", RecordAux: "AUX",
		RecordItraceStart: "ITRACE_START", RecordLostSamples: "LOST_SAMPLES",
		RecordSwitch: "SWITCH", RecordSwitchCPUWide: "SWITCH_CPU_WIDE",
		RecordNamespaces: "NAMESPACES", RecordKSymbol: "KSYMBOL", RecordBPFEvent: "BPF_EVENT",
		RecordCgroup: "CGROUP", RecordTextPoke: "TEXT_POKE",
		RecordAuxOutputHWID: "AUX_OUTPUT_HW_ID", RecordCallchainDeferred: "CALLCHAIN_DEFERRED",
		RecordHeaderAttr: "ATTR", RecordHeaderEventType: "EVENT_TYPE",
		RecordHeaderTracingData: "TRACING_DATA", RecordHeaderBuildID: "BUILD_ID",
		RecordFinishedRound: "FINISHED_ROUND", RecordIDIndex: "ID_INDEX",
		RecordAuxtraceInfo: "AUXTRACE_INFO", RecordAuxtrace: "AUXTRACE",
		RecordAuxtraceError: "AUXTRACE_ERROR", RecordThreadMap: "THREAD_MAP",
		RecordCPUMap: "CPU_MAP", RecordStatConfig: "STAT_CONFIG", RecordStat: "STAT",
		RecordStatRound: "STAT_ROUND", RecordEventUpdate: "EVENT_UPDATE",
		RecordTimeConv: "TIME_CONV", RecordHeaderFeature: "FEATURE",
		RecordCompressed: "COMPRESSED", RecordFinishedInit: "FINISHED_INIT",
		RecordCompressed2: "COMPRESSED2", RecordBPFMetadata: "BPF_METADATA",
		RecordSchedstatCPU: "SCHEDSTAT_CPU", RecordSchedstatDomain: "SCHEDSTAT_DOMAIN",
	}
	if len(recordTypes) != len(names) {
		t.Errorf("%d rows, want %d (a row for each constant)", len(recordTypes), len(names))
	}
	seen := map[RecordType]bool{}
	for _, r := range recordTypes {
		if r.Name == "" {
			t.Errorf("type %d: a row without a name", uint32(r.Type))
		}
		if seen[r.Type] {
			t.Errorf("type %d: two rows", uint32(r.Type))
		}
		seen[r.Type] = true
	}
	for typ, want := range names {
		if got := typ.String(); got != want {
			t.Errorf("RecordType(%d).String() = %q, want %q", uint32(typ), got, want)
		}
		if got := typ.Noun(); got != want+" record" {
			t.Errorf("RecordType(%d).Noun() = %q, want %q", uint32(typ), got, want+" record")
		}
		if !typ.Known() {
			t.Errorf("%v: not Known", typ)
		}
		inspected := typ == RecordKSymbol || typ == RecordBPFEvent
		if got := typ.Inspected(); got != inspected {
			t.Errorf("%v.Inspected() = %v, want %v", typ, got, inspected)
		}
	}
	for _, typ := range []RecordType{0, 23, 63, 87, 1000, 1<<32 - 1} {
		if got, want := typ.String(), strconv.FormatUint(uint64(typ), 10); got != want {
			t.Errorf("RecordType(%d).String() = %q, want %q", uint32(typ), got, want)
		}
		if got, want := typ.Noun(), "record of type "+strconv.FormatUint(uint64(typ), 10); got != want {
			t.Errorf("RecordType(%d).Noun() = %q, want %q", uint32(typ), got, want)
		}
		if typ.Known() || typ.Inspected() {
			t.Errorf("RecordType(%d): Known %v, Inspected %v, want neither", uint32(typ), typ.Known(), typ.Inspected())
		}
	}
}

// record is a record of type typ with body after its header, in order bo.
func record(typ RecordType, bo binary.ByteOrder, body ...any) *Record {
	var b bytes.Buffer
	b.Write(make([]byte, EventHeaderSize))
	for _, f := range body {
		if err := binary.Write(&b, bo, f); err != nil {
			panic(err)
		}
	}
	raw := b.Bytes()
	h := EventHeader{Type: typ, Size: uint16(len(raw))}
	h.Encode(raw, bo)
	return &Record{Header: h, Raw: raw, Outer: -1}
}

// TestDescribe: what bpfmeta dump prints after each type that says more
// (the rows with a Describe), in both byte orders, text from the
// recording escaped; "" for every other type.
func TestDescribe(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		md, err := (&BPFMetadata{ProgName: "bpf_prog_0123456789abcdef_f\x1b", Entries: []BPFMetadataEntry{
			{Key: "version", Value: "1.2"}, {Key: "k\n", Value: "v"},
		}}).Encode(bo, 0)
		if err != nil {
			t.Fatal(err)
		}
		mdRec := &Record{Header: DecodeEventHeader(md, bo), Raw: md, Outer: -1}
		aux := record(RecordAuxtrace, bo, uint64(0x100), uint64(0), uint64(0), uint32(0), uint32(0), uint32(0), uint32(0))
		aux.PayloadSize = 0x100
		tracing := record(RecordHeaderTracingData, bo, uint32(0x30), uint32(0))
		tracing.PayloadSize = 0x30
		noData := record(RecordAuxtrace, bo, uint64(0), uint64(0), uint64(0), uint32(0), uint32(0), uint32(0), uint32(0))
		cases := []struct {
			rec  *Record
			want string
		}{
			{record(RecordKSymbol, bo, uint64(0xffffffffc0001000), uint32(0x40), uint16(KSymbolTypeBPF), uint16(0), []byte("bpf_prog_0123456789abcdef_f\x07\x00\x00\x00\x00")),
				" addr ffffffffc0001000 len 64 type 1 flags 0x0 name bpf_prog_0123456789abcdef_f\\x07"},
			{record(RecordKSymbol, bo, uint64(0x1000), uint32(8), uint16(KSymbolTypeBPF), uint16(KSymbolUnregister), []byte("f\x00\x00\x00\x00\x00\x00\x00")),
				" addr 1000 len 8 type 1 flags 0x1 name f"},
			{record(RecordKSymbol, bo, uint64(0x1000)), " (KSYMBOL record of 16 bytes, want at least 24)"},
			{record(RecordBPFEvent, bo, uint16(BPFEventProgLoad), uint16(0), uint32(42), [8]byte{1, 2, 3, 4, 5, 6, 7, 0xff}),
				" type 1, flags 0, id 42 tag 01020304050607ff"},
			{record(RecordBPFEvent, bo, uint16(1)), " (BPF_EVENT record of 10 bytes, want at least 24)"},
			{mdRec, " prog bpf_prog_0123456789abcdef_f\\x1b\n" +
				"  entry 0:              version = 1.2\n" +
				"  entry 1:                  k\\n = v"},
			{aux, " (+0x100 bytes of data)"},
			{tracing, " (+0x30 bytes of data)"},
			{noData, ""},
			{record(RecordSample, bo, uint64(1)), ""},
			{record(RecordType(1000), bo, uint64(1)), ""},
		}
		for _, c := range cases {
			if got := c.rec.Describe(bo); got != c.want {
				t.Errorf("%v: %v.Describe() = %q, want %q", bo, c.rec.Header.Type, got, c.want)
			}
		}
		bad := &Record{Header: EventHeader{Type: RecordBPFMetadata, Size: 12}, Raw: md[:12], Outer: -1}
		if got := bad.Describe(bo); !strings.HasPrefix(got, " (") || !strings.HasSuffix(got, ")") {
			t.Errorf("%v: a BPF_METADATA record cut short: Describe() = %q, want its decoder's error in parentheses", bo, got)
		}
	}
	described := map[RecordType]bool{RecordKSymbol: true, RecordBPFEvent: true, RecordBPFMetadata: true, RecordAuxtrace: true, RecordHeaderTracingData: true}
	for _, r := range recordTypes {
		if (r.Describe != nil) != described[r.Type] {
			t.Errorf("%v: Describe %v, want %v", r.Type, r.Describe != nil, described[r.Type])
		}
	}
}

// TestAppendEntryLine: perf's line of an entry
// (perf_event__fprintf_bpf_metadata), which IsEntryLine reads back.
func TestAppendEntryLine(t *testing.T) {
	cases := []struct {
		prefix     string
		i          int
		key, value string
		want       string
		isEntry    bool
	}{
		{"", 0, "version", "1", "  entry 0:              version = 1\n", true},
		{"    ", 12, "a_rather_long_variable_name", "x y", "      entry 12: a_rather_long_variable_name = x y\n", false},
		{"", 3, "k\x1b[31m", "v\n", "  entry 3:            k\\x1b[31m = v\\n\n", true},
		{"", 1, "two words", "v", "  entry 1:            two words = v\n", false},
	}
	for _, c := range cases {
		got := string(AppendEntryLine([]byte("x"), c.prefix, c.i, c.key, c.value))
		if got != "x"+c.want {
			t.Errorf("AppendEntryLine(%q, %d, %q, %q) = %q, want %q", c.prefix, c.i, c.key, c.value, got[1:], c.want)
		}
		if is := IsEntryLine([]byte(strings.TrimSuffix(c.want, "\n"))); is != c.isEntry {
			t.Errorf("IsEntryLine(%q) = %v, want %v", c.want, is, c.isEntry)
		}
	}
}

// BenchmarkRecordTypeString: String is called for each line bpfmeta dump
// prints; it is an index, not a map lookup.
func BenchmarkRecordTypeString(b *testing.B) {
	types := []RecordType{RecordSample, RecordMmap2, RecordFinishedRound, RecordKSymbol, RecordBPFMetadata}
	n := 0
	for i := 0; b.Loop(); i++ {
		n += len(types[i%len(types)].String())
	}
	_ = n
}
