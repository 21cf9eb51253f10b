package perfdata

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestBPFMetadataKey(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"bpf_metadata_version", "version", true},
		{"bpf_metadata_", "", true},
		{"bpf_metadata_" + strings.Repeat("k", 70), strings.Repeat("k", BPFMetadataKeyLen-1), true},
		{"version", "", false},
	} {
		if got, ok := BPFMetadataKey(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("BPFMetadataKey(%q) = %q, %v, want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseBPFTag(t *testing.T) {
	if tag, err := ParseBPFTag("e21be2de8fc54252"); err != nil || tag.String() != "e21be2de8fc54252" {
		t.Errorf("ParseBPFTag: %v %v", tag, err)
	}
	for _, bad := range []string{"", "e21be2de8fc5425", "e21be2de8fc54252aa", "zz1be2de8fc54252"} {
		if _, err := ParseBPFTag(bad); err == nil {
			t.Errorf("ParseBPFTag(%q): no error", bad)
		}
	}
}

// TestBPFProgName: every form of a BPF function's name the kernel and perf
// write, and the names that only look like one (testdata/bpf_prog_names.txt,
// annotate's table too).
func TestBPFProgName(t *testing.T) {
	tag, _ := ParseBPFTag("e21be2de8fc54252")
	rows := bpfProgNames(t)
	rows = append(rows, bpfProgNameRow{"", "", false})
	for _, tc := range rows {
		gotTag, fn, ok := ParseBPFProgName(tc.name)
		if ok != tc.ok || fn != tc.fn || ok && gotTag.String() != tc.name[len("bpf_prog_"):][:2*BPFTagSize] || !ok && gotTag != (BPFTag{}) {
			t.Errorf("ParseBPFProgName(%q) = %v, %q, %v; want %q, %v", tc.name, gotTag, fn, ok, tc.fn, tc.ok)
		}
		// the same of bytes
		bTag, bfn, bok := ParseBPFProgName([]byte(tc.name))
		if bok != ok || string(bfn) != fn || bTag != gotTag {
			t.Errorf("ParseBPFProgName([]byte(%q)) = %v, %q, %v", tc.name, bTag, bfn, bok)
		}
		// what BPFProgName makes of it is the name (without the "_" of
		// bpf_prog_<tag>_, which perf writes for an empty BTF name)
		if want := tc.name; ok && BPFProgName(gotTag, fn) != want && BPFProgName(gotTag, fn)+"_" != want {
			t.Errorf("BPFProgName(%v, %q) = %q, want %q", gotTag, fn, BPFProgName(gotTag, fn), want)
		}
	}
	if got := BPFProgName(tag, "main"); got != "bpf_prog_e21be2de8fc54252_main" {
		t.Errorf("BPFProgName = %q", got)
	}
	if got := BPFProgName(tag, strings.Repeat("x", 600)); len(got) != BPFProgNameLen-1 {
		t.Errorf("BPFProgName of a long name: %d bytes, want %d", len(got), BPFProgNameLen-1)
	}
}

// TestProgNamed: the one rule of selecting a program by what a user typed.
func TestProgNamed(t *testing.T) {
	for _, tc := range []struct {
		sel   string
		id    uint32
		names []string
		want  bool
	}{
		{"97", 97, nil, true},
		{"97", 98, []string{"97"}, false}, // digits are an id
		{"97", 0, nil, false},             // an unknown id is no one's
		{"handle", 0, []string{"handle"}, true},
		{"handle", 0, []string{"bpf_prog_e21be2de8fc54252_handle"}, true},
		{"bpf_prog_e21be2de8fc54252_handle", 0, []string{"bpf_prog_e21be2de8fc54252_handle"}, true},
		{"bpf_prog_e21be2de8fc54252_handle", 0, []string{"handle"}, false},
		{"handle", 0, []string{"bpf_prog_0123456789ABCDEF_handle"}, false},
		{"handle", 0, []string{"other", "bpf_prog_e21be2de8fc54252_handle"}, true},
		{"", 0, []string{"bpf_prog_e21be2de8fc54252", ""}, false},
		{"hand", 0, []string{"handle"}, false},
	} {
		if got := ProgNamed(tc.sel, tc.id, tc.names...); got != tc.want {
			t.Errorf("ProgNamed(%q, %d, %q) = %v", tc.sel, tc.id, tc.names, got)
		}
	}
}

// TestStringsNeverPanic: every typed constant's String has an answer for
// values it does not know.
func TestStringsNeverPanic(t *testing.T) {
	for _, s := range []interface{ String() string }{KSymbolType(9), KSymbolFlags(6), BPFEventType(7), Dialect(9), RecordType(200), Feature(99), Format(7)} {
		if s.String() == "" {
			t.Errorf("%T: empty String", s)
		}
	}
	if got := KSymbolType(9).String(); got != "KSymbolType(9)" {
		t.Errorf("KSymbolType(9) = %q", got)
	}
	if got := KSymbolFlags(3).String(); got != "UNREGISTER|0x2" {
		t.Errorf("KSymbolFlags(3) = %q", got)
	}
}

// TestBPFMetadataRoundTrip: Encode, then DecodeBPFMetadata with perf
// 7.2's checks; the limit on entries is perf's.
func TestBPFMetadataRoundTrip(t *testing.T) {
	m := BPFMetadata{ProgName: "bpf_prog_e21be2de8fc54252_main", Entries: []BPFMetadataEntry{{"version", `"1.0"`}, {"n", "42"}}}
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		raw, err := m.Encode(bo, 16)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != BPFMetadataSize(2, 16) || int(bo.Uint16(raw[6:])) != len(raw) {
			t.Errorf("size %d, header %d, want %d", len(raw), bo.Uint16(raw[6:]), BPFMetadataSize(2, 16))
		}
		got, err := DecodeBPFMetadata(raw, bo)
		if err != nil || got.ProgName != m.ProgName || len(got.Entries) != 2 || got.Entries[1] != m.Entries[1] {
			t.Errorf("decoded %+v, %v", got, err)
		}
		bo.PutUint64(raw[8+BPFProgNameLen:], 3)
		if _, err := DecodeBPFMetadata(raw, bo); err == nil {
			t.Errorf("nr_entries 3 in a record of 2: no error")
		}
	}
	if MaxBPFMetadataEntries != 202 {
		t.Errorf("MaxBPFMetadataEntries = %d, perf 7.2 writes up to 202", MaxBPFMetadataEntries)
	}
	big := BPFMetadata{ProgName: "p", Entries: make([]BPFMetadataEntry, 203)}
	if _, err := big.Encode(binary.LittleEndian, 0); err == nil {
		t.Errorf("203 entries: encoded, perf writes none")
	}
}

// TestDecodeKSymbolLongName: a name longer than KSYM_NAME_LEN-1 bytes, which
// only a made-up record has, is cut to that, as the kernel's and perf's
// snprintf() cut theirs; a name that ends before is kept whole.
func TestDecodeKSymbolLongName(t *testing.T) {
	bo := binary.LittleEndian
	for _, tc := range []struct{ name, want string }{
		{"bpf_prog_e21be2de8fc54252_main", "bpf_prog_e21be2de8fc54252_main"},
		{strings.Repeat("n", KSymNameLen-1), strings.Repeat("n", KSymNameLen-1)},
		{strings.Repeat("n", 65000), strings.Repeat("n", KSymNameLen-1)},
	} {
		raw := make([]byte, kSymbolFieldsSize+(len(tc.name)+8)&^7)
		copy(raw[kSymbolFieldsSize:], tc.name)
		k, err := DecodeKSymbol(raw, bo)
		if err != nil || k.Name != tc.want {
			t.Errorf("a name of %d bytes: %d bytes, %v; want %d", len(tc.name), len(k.Name), err, len(tc.want))
		}
	}
}

// TestKSymbolBPF is the one rule for "this KSYMBOL is (registers) a BPF
// function", which bpftrack, annotate and inject use.
func TestKSymbolBPF(t *testing.T) {
	for _, tc := range []struct {
		typ            KSymbolType
		flags          KSymbolFlags
		bpf, registers bool
	}{
		{KSymbolTypeBPF, 0, true, true},
		{KSymbolTypeBPF, KSymbolUnregister, true, false},
		{KSymbolTypeBPF, 0x2, true, true},
		{KSymbolTypeOOL, 0, false, false},
		{KSymbolTypeOOL, KSymbolUnregister, false, false},
		{KSymbolTypeUnknown, 0, false, false},
		{KSymbolType(7), 0, false, false},
	} {
		k := KSymbol{Type: tc.typ, Flags: tc.flags}
		if got := k.BPF(); got != tc.bpf {
			t.Errorf("%v %v: BPF() = %v, want %v", tc.typ, tc.flags, got, tc.bpf)
		}
		if got := k.RegistersBPF(); got != tc.registers {
			t.Errorf("%v %v: RegistersBPF() = %v, want %v", tc.typ, tc.flags, got, tc.registers)
		}
	}
}

type bpfProgNameRow struct {
	name, fn string
	ok       bool // name is of the form
}

// bpfProgNames reads testdata/bpf_prog_names.txt: a name of the form, a
// tab and its function name; or a name not of the form alone.
func bpfProgNames(t *testing.T) []bpfProgNameRow {
	b, err := os.ReadFile("testdata/bpf_prog_names.txt")
	if err != nil {
		t.Fatal(err)
	}
	var rows []bpfProgNameRow
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" || line[0] == '#' {
			continue
		}
		name, fn, ok := strings.Cut(line, "\t")
		rows = append(rows, bpfProgNameRow{name, fn, ok})
	}
	return rows
}

// TestCheckFields: a KSYMBOL or BPF_EVENT too short for its fields is
// refused with the decoders' words, by size alone; any other record, of
// any size, and a record that holds its fields, is not.
func TestCheckFields(t *testing.T) {
	for _, tc := range []struct {
		typ  RecordType
		size int
		want string
	}{
		{RecordKSymbol, 0, "KSYMBOL record of 0 bytes, want at least 24"},
		{RecordKSymbol, 8, "KSYMBOL record of 8 bytes, want at least 24"},
		{RecordKSymbol, kSymbolFieldsSize - 1, "KSYMBOL record of 23 bytes, want at least 24"},
		{RecordKSymbol, kSymbolFieldsSize, ""}, // no name: "" (perf writes none such, but it decodes)
		{RecordKSymbol, 64, ""},
		{RecordBPFEvent, 10, "BPF_EVENT record of 10 bytes, want at least 24"},
		{RecordBPFEvent, BPFEventFieldsSize - 1, "BPF_EVENT record of 23 bytes, want at least 24"},
		{RecordBPFEvent, BPFEventFieldsSize, ""},
		{RecordBPFMetadata, 8, ""}, // DecodeBPFMetadata's own rules; not a reader's reason to stop
		{RecordSample, 8, ""},
		{RecordMmap, 0, ""},
		{RecordType(200), 3, ""},
	} {
		raw := make([]byte, tc.size)
		err := CheckFields(tc.typ, raw)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CheckFields(%v, %d bytes) = %q, want %q", tc.typ, tc.size, got, tc.want)
		}
		// the decoders refuse what CheckFields refuses, with its words
		var derr error
		switch tc.typ {
		case RecordKSymbol:
			_, derr = DecodeKSymbol(raw, binary.LittleEndian)
		case RecordBPFEvent:
			_, derr = DecodeBPFEvent(raw, binary.LittleEndian)
		default:
			continue
		}
		if fmt.Sprint(derr) != fmt.Sprint(err) {
			t.Errorf("decoding %v of %d bytes: %v, CheckFields says %v", tc.typ, tc.size, derr, err)
		}
	}
}
