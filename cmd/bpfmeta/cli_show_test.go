package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestShowMatched: show says how each record was given its KSYMBOL, in
// text and JSON: an earlier load's by name after its BPF_EVENT, a load
// during the recording's by function name at the end, and "ambiguous",
// with the candidates and no program, when two programs loaded during the
// recording have functions of that function name and other tags.
func TestShowMatched(t *testing.T) {
	tag := func(b byte) perfdata.BPFTag { return perfdata.BPFTag{b, 1, 2, 3, 4, 5, 6, 7} }
	s := testkit.NewStream(binary.LittleEndian)
	md := func(name string) {
		s.Metadata(perfdata.BPFMetadata{ProgName: name, Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: `"1"`}}})
	}
	main := perfdata.BPFProgName(tag(0xf), "main")
	twin := perfdata.BPFProgName(tag(0xf), "twin")
	s.KSymbol(0x1000, 0x40, main, false, false) // loaded before
	s.BPFEvent(perfdata.BPFEventProgLoad, 1, tag(0xa), false)
	md(main)
	s.KSymbol(0x2000, 0x40, perfdata.BPFProgName(tag(0xa), "main"), false, true) // during
	s.BPFEvent(perfdata.BPFEventProgLoad, 2, tag(0xa), true)
	s.KSymbol(0x3000, 0x40, perfdata.BPFProgName(tag(0xb), "twin"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 3, tag(0xb), true)
	s.KSymbol(0x4000, 0x40, perfdata.BPFProgName(tag(0xc), "twin"), false, true)
	s.BPFEvent(perfdata.BPFEventProgLoad, 4, tag(0xc), true)
	s.Sample(0x2004)
	s.Record(perfdata.RecordFinishedRound, nil)
	md(main)
	md(twin)
	in := filepath.Join(t.TempDir(), "in.data")
	if err := os.WriteFile(in, s.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	r := bpfmeta(t, nil, "show", "-i", in)
	if r.code != exitOK {
		t.Fatalf("show: %v", r)
	}
	for _, want := range []string{
		"  ksymbol addr 0x1000 len 64, program 1: 0 samples\n",
		"  ksymbol bpf_prog_0a01020304050607_main (by function name) addr 0x2000 len 64, program 2: 1 sample\n",
		"  ksymbol bpf_prog_0b01020304050607_twin (ambiguous: one of these, or a load the recording has no KSYMBOL of) addr 0x3000 len 64, or addr 0x4000 len 64: 0 samples\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show does not say\n%s\nin\n%s", want, r.stdout)
		}
	}

	r = bpfmeta(t, nil, "show", "--json", "-i", in)
	var doc struct {
		Records []struct {
			KSymbol struct {
				Addr    string `json:"addr"`
				Matched string `json:"matched"`
			} `json:"ksymbol"`
			Program *uint32 `json:"program_id"`
			Others  []struct {
				Addr    string `json:"addr"`
				Matched string `json:"matched"`
			} `json:"others"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != exitOK || err != nil || len(doc.Records) != 3 {
		t.Fatalf("show --json: %v (%v), %d records", r, err, len(doc.Records))
	}
	for i, want := range []struct {
		addr, matched string
		program       uint32 // 0: none
		others        int
	}{{"0x1000", "name", 1, 0}, {"0x2000", "function", 2, 0}, {"0x3000", "ambiguous", 0, 1}} {
		got := doc.Records[i]
		var id uint32
		if got.Program != nil {
			id = *got.Program
		}
		if got.KSymbol.Addr != want.addr || got.KSymbol.Matched != want.matched || id != want.program || len(got.Others) != want.others {
			t.Errorf("record %d: %+v, want ksymbol %s matched %s, program %d, %d others", i, got, want.addr, want.matched, want.program, want.others)
		}
	}
}
