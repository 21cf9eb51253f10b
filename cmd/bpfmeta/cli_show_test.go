package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestShowMatched: show says how each record was given its KSYMBOL, in
// text and JSON: an earlier load's by name after its BPF_EVENT, a load
// during the recording's by function name at the end, and "ambiguous",
// with the candidates and no program, when two programs loaded during the
// recording have functions of that function name and other tags;
// --with-samples keeps the one record of a function with samples.
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

	// --with-samples: only the record of the function with a sample
	r = bpfmeta(t, nil, "show", "--with-samples", "-i", in)
	if r.code != exitOK || strings.Count(r.stdout, "  ksymbol ") != 1 || !strings.Contains(r.stdout, "addr 0x2000 len 64, program 2: 1 sample\n") {
		t.Errorf("show --with-samples: %v\n%s", r, r.stdout)
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

// TestShowLoadsUnloads is issue 36's long recording: a pipe recording in
// which 70,000 programs are loaded and unloaded, one at a time, each with
// a function of its own name and a sample, then perf's records at the end
// for three of them: the last loaded, one loaded 1,000 times over the
// recording (as a host that reloads its programs does), and the first of
// all. show read none of it ("65536 functions in all"); it must print the
// records as inject reads the file: the last two with their KSYMBOLs and
// samples, and the first, which it forgot (it keeps the MaxHistory gone
// last), with a warning that it may be one of those. Its peak memory is
// that of what it keeps, not of the recording's length: a recording twice
// as long takes no more.
func TestShowLoadsUnloads(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	tagOf := func(i int) perfdata.BPFTag { return perfdata.BPFTag{byte(i), byte(i >> 8), byte(i >> 16), 0xee} }
	nameOf := func(i int) string {
		if i%70 == 1 && i < 70_000 { // 1,000 loads of one program
			return perfdata.BPFProgName(tagOf(1), "reloaded")
		}
		return perfdata.BPFProgName(tagOf(i), fmt.Sprintf("f%d", i))
	}
	show := func(n int) (procResult, string) {
		in := streamFile(t, dir, fmt.Sprintf("loads-unloads-%d.data", n), func(s *testkit.Stream) {
			for i := range n {
				addr := 0xffffffffc0000000 + uint64(i%64)*0x1000
				tg, _, _ := perfdata.ParseBPFProgName(nameOf(i))
				s.KSymbol(addr, 0x40, nameOf(i), false, true)
				s.BPFEvent(perfdata.BPFEventProgLoad, uint32(i+1), tg, true)
				s.Sample(addr + 4)
				s.KSymbol(addr, 0x40, nameOf(i), true, true)
				s.BPFEvent(perfdata.BPFEventProgUnload, uint32(i+1), tg, true)
			}
			s.Record(perfdata.RecordFinishedRound, nil)
			for _, i := range []int{n - 1, 1, 0} {
				s.Metadata(perfdata.BPFMetadata{ProgName: nameOf(i), Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: fmt.Sprintf(`"%d"`, i)}}})
			}
		})
		var out bytes.Buffer
		r := runProc(t, bin, procRun{stdout: &out}, "show", "-i", in)
		t.Logf("%d loads: %v, peak %.1f MiB, CPU %v", n, r, float64(r.peak)/(1<<20), r.cpu.Round(time.Millisecond))
		if r.code != exitOK {
			t.Fatalf("show: %v", r)
		}
		if r.peak > peakBound {
			t.Errorf("%d loads: peak memory %.1f MiB, want < %d MiB", n, float64(r.peak)/(1<<20), peakBound>>20)
		}
		return r, out.String()
	}
	const n = 70_000
	r, out := show(n)
	entry := func(v int) string { return fmt.Sprintf("\n  entry 0:              version = \"%d\"\n", v) }
	for _, want := range []string{
		nameOf(n-1) + entry(n-1) + "  ksymbol addr 0xffffffffc002f000 len 64, program 70000: 1 sample\n",
		nameOf(1) + entry(1) + "  ksymbol addr 0xffffffffc",
		", or 984 more of the name: 1000 samples\n",
		nameOf(0) + entry(0) + "  (no BPF KSYMBOL in the recording it can belong to)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show does not say\n%s\nin\n%s", want, out)
		}
	}
	// of the 69,000 functions of a name of their own, all but the
	// MaxHistory gone last, less the 16 of the reloaded one it keeps
	if want := fmt.Sprintf("%d functions of programs loaded during the recording and gone were forgotten", n-1000-bpftrack.MaxHistory+bpftrack.MaxRecordFuncs); !strings.HasPrefix(r.stderr, "bpfmeta: warning: ") || !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not say %q", r.stderr, want)
	}
	if long, _ := show(2 * n); long.peak > r.peak+8<<20 { // a leak would be 40 MiB; GC timing moves the peak by a few
		t.Errorf("show of %d loads took %.1f MiB, of %d %.1f MiB: its memory grows with the recording", n, float64(r.peak)/(1<<20), 2*n, float64(long.peak)/(1<<20))
	}
}
