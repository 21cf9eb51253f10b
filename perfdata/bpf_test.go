package perfdata

import (
	"encoding/binary"
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

func TestBPFProgName(t *testing.T) {
	tag, _ := ParseBPFTag("e21be2de8fc54252")
	for _, tc := range []struct {
		name, fn string
		ok       bool
	}{
		{"bpf_prog_e21be2de8fc54252_main", "main", true},
		{"bpf_prog_e21be2de8fc54252", "", true},
		{"bpf_prog_e21be2de8fc54252_", "", true},
		{"bpf_prog_e21be2de8fc54252x", "", false},
		{"bpf_prog_e21be2de8fc5425", "", false},
		{"bpf_trampoline_6", "", false},
	} {
		gotTag, fn, ok := ParseBPFProgName(tc.name)
		if ok != tc.ok || fn != tc.fn || ok && gotTag != tag {
			t.Errorf("ParseBPFProgName(%q) = %v, %q, %v", tc.name, gotTag, fn, ok)
		}
	}
	if got := BPFProgName(tag, "main"); got != "bpf_prog_e21be2de8fc54252_main" {
		t.Errorf("BPFProgName = %q", got)
	}
	if got := BPFProgName(tag, strings.Repeat("x", 600)); len(got) != BPFProgNameLen-1 {
		t.Errorf("BPFProgName of a long name: %d bytes, want %d", len(got), BPFProgNameLen-1)
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
