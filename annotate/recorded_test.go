package annotate_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/annotate"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

const walkSym = "bpf_prog_6deef7357e7b4530_walk_filter"

// A load is one KSYMBOL of walkSym in a made-up recording: where, when
// (perf's clock, ns; 0: synthesized by perf, without a time) and, if
// gone, when it was unregistered.
type load struct {
	addr        uint64
	len         uint32
	time, gone  uint64
	version     string
	sampleTimes []uint64
}

// recordedTable is the table of a pipe recording of loads of walkSym, each
// with a BPF_METADATA record of its version and samples at its times.
func recordedTable(t testing.TB, loads ...load) *annotate.Table {
	t.Helper()
	s := testkit.NewStream(binary.LittleEndian)
	tag := perfdata.BPFTag{0x6d, 0xee, 0xf7, 0x35, 0x7e, 0x7b, 0x45, 0x30}
	for i, l := range loads {
		s.KSymbolAt(l.addr, l.len, walkSym, false, l.time)
		s.BPFEvent(perfdata.BPFEventProgLoad, uint32(100+i), tag, l.time != 0)
		s.Metadata(perfdata.BPFMetadata{ProgName: walkSym, Entries: []perfdata.BPFMetadataEntry{{Key: "bpf_metadata_version", Value: `"` + l.version + `"`}}})
		for _, ts := range l.sampleTimes {
			s.SampleAt(l.addr+4, ts)
		}
		if l.gone != 0 {
			s.KSymbolAt(l.addr, l.len, walkSym, true, l.gone)
		}
	}
	r, err := reader.NewStream(bytes.NewReader(s.Bytes()), reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tab := annotate.NewTable(nil)
	t.Cleanup(tab.Close)
	if _, err := annotate.Fill(tab, r); err != nil {
		t.Fatal(err)
	}
	return tab
}

// sampleText is perf script -g text of one sample at the time ts (s, µs)
// with a frame of walkSym at ip.
func sampleText(ts string, ip uint64) string {
	return fmt.Sprintf("walker 4242 [000] %s: 250000 cpu-clock:ppp: \n\t%16x %s+0x4 (%s)\n\tffffffff81000130 entry_SYSCALL_64+0x76 ([kernel.kallsyms])\n\n", ts, ip, walkSym, walkSym)
}

func annotateString(t testing.TB, tab *annotate.Table, text string) (string, annotate.Stats) {
	t.Helper()
	var out bytes.Buffer
	st, err := annotate.Run(strings.NewReader(text), &out, tab)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), st
}

// The text of recording B annotated with recording A, where the program
// was loaded elsewhere: no frame gets A's metadata, whether or not A's
// load agrees with B's; each is not in the recording. A frame outside
// the only load of its name is not in the recording either.
func TestAnnotateOtherRecording(t *testing.T) {
	const addrA, addrB = 0xffffffffc0023448, 0xffffffffc0a1b2c0
	for _, versionB := range []string{"9.9.9-other", "2.3.1"} {
		a := recordedTable(t, load{addr: addrA, len: 52, version: "2.3.1"})
		b := recordedTable(t, load{addr: addrB, len: 52, version: versionB})
		var text string
		for i := range 50 {
			text += sampleText(fmt.Sprintf("3474.%06d", i), addrB+4)
		}
		got, st := annotateString(t, a, text)
		if want := strings.ReplaceAll(text, walkSym+"+0x4", walkSym+annotate.NotInRecording+"+0x4"); got != want {
			t.Errorf("B's text with A (B %s): got\n%s", versionB, got)
		}
		if st.Annotated != 50 || st.NotInRecording != 50 {
			t.Errorf("B's text with A: %+v, want 50 frames not in the recording", st)
		}
		got, st = annotateString(t, b, text)
		if want := strings.ReplaceAll(text, walkSym+"+0x4", walkSym+"[version="+versionB+"]+0x4"); got != want || st.NotInRecording != 0 {
			t.Errorf("B's text with B: %+v, got\n%s", st, got)
		}
	}
	a := recordedTable(t, load{addr: addrA, len: 52, version: "2.3.1"})
	for ip, want := range map[uint64]string{
		0xffffffffc0a1b2c4: annotate.NotInRecording,
		addrA + 4:          "[version=2.3.1]",
		addrA + 51:         "[version=2.3.1]",
		addrA + 52:         annotate.NotInRecording,
		addrA - 1:          annotate.NotInRecording,
	} {
		line := fmt.Sprintf("\t%16x %s+0x4 (%s)\n", ip, walkSym, walkSym)
		if got, _ := a.Annotate(nil, []byte(line)); string(got) != strings.Replace(line, "+0x4", want+"+0x4", 1) {
			t.Errorf("%#x: got %q, want %s", ip, got, want)
		}
	}
	// a frame without an address keeps its name's label
	if got, _ := a.Annotate(nil, []byte("\t"+walkSym+"+0x4 (x)\n")); !bytes.Contains(got, []byte("[version=2.3.1]")) {
		t.Errorf("a frame without an address: %q", got)
	}
}

// Where the text prints a sample's time, a frame is in a load only while
// the load was: from its KSYMBOL to its unregistering, or to the
// recording's end. The kernel puts a new load where an old one was.
func TestAnnotateLifetime(t *testing.T) {
	const addr = 0xffffffffc0023448
	tab := recordedTable(t,
		load{addr: addr, len: 52, time: 1_000_000_000, gone: 2_000_000_000, version: "1", sampleTimes: []uint64{1_500_000_000}},
		load{addr: addr, len: 52, time: 3_000_000_000, version: "2", sampleTimes: []uint64{4_000_000_000}})
	for ts, want := range map[string]string{
		"0.999999":    annotate.NotInRecording,
		"1.000000":    "[version=1]", // the microsecond the load was made in
		"1.500000":    "[version=1]",
		"1.500000000": "[version=1]",
		"2.500000":    annotate.NotInRecording,
		"3.500000":    "[version=2]",
		"4.000000":    "[version=2]", // the recording's last time
		"4.000001":    annotate.NotInRecording,
		"9.000000":    annotate.NotInRecording,
	} {
		text := sampleText(ts, addr+4)
		if got, _ := annotateString(t, tab, text); got != strings.Replace(text, "+0x4", want+"+0x4", 1) {
			t.Errorf("at %s: got %q, want %s", ts, got, want)
		}
	}
	// without a time (-F ip,sym) the address alone: either load's
	line := fmt.Sprintf(" %16x %s\n", uint64(addr+4), walkSym)
	if got, _ := annotateString(t, tab, line); got != strings.TrimSuffix(line, "\n")+annotate.Ambiguous+"\n" {
		t.Errorf("without a time: %q", got)
	}
	// a frame line after the sample's end is not given its time
	text := sampleText("9.000000", addr+4) + fmt.Sprintf(" %16x %s\n", uint64(addr+4), walkSym)
	if got, _ := annotateString(t, tab, text); !strings.HasSuffix(got, walkSym+annotate.Ambiguous+"\n") {
		t.Errorf("a line after a sample: %q", got)
	}
}
