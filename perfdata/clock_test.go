package perfdata_test

import (
	"encoding/binary"
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// The clock of an event: attr.use_clockid (bit 25 of the flags word, laid
// out as each byte order's C compilers lay out bitfields) and attr.clockid
// at offset 92; and HEADER_CLOCK_DATA as perf's write_clock_data() writes
// it (the values of a perf 6.1 recording made with -k CLOCK_TAI).
func TestClock(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		raw := make([]byte, 128)
		bo.PutUint32(raw[4:], 128)
		use := uint64(1) << 25
		if bo == binary.BigEndian {
			use = 1 << (63 - 25)
		}
		bo.PutUint64(raw[40:], use)
		bo.PutUint32(raw[92:], uint32(perfdata.ClockTAI))
		a, err := perfdata.DecodeAttr(raw, bo)
		if err != nil {
			t.Fatal(err)
		}
		if id, ok := a.Clock(); !ok || id != perfdata.ClockTAI {
			t.Errorf("%v: clock %v, %v; want CLOCK_TAI", bo, id, ok)
		}
		bo.PutUint64(raw[40:], 0)
		if a, _ := perfdata.DecodeAttr(raw, bo); func() bool { _, ok := a.Clock(); return ok }() {
			t.Errorf("%v: a clock without use_clockid", bo)
		}
		bo.PutUint64(raw[40:], use)
		if a, _ := perfdata.DecodeAttr(raw[:88], bo); func() bool { id, ok := a.Clock(); return !ok || id != -1 }() {
			t.Errorf("%v: an attr too short for clockid does not say so", bo)
		}

		cd := make([]byte, perfdata.ClockDataSize)
		bo.PutUint32(cd, 1)
		bo.PutUint32(cd[4:], 11)
		bo.PutUint64(cd[8:], 1796427092566614000)
		bo.PutUint64(cd[16:], 1796427092566617208)
		d, err := perfdata.DecodeClockData(cd, bo)
		if want := (perfdata.ClockData{Version: 1, ClockID: perfdata.ClockTAI, WallNs: 1796427092566614000, ClockNs: 1796427092566617208}); err != nil || d != want {
			t.Errorf("%v: %+v, %v; want %+v", bo, d, err, want)
		}
		bo.PutUint32(cd, 2)
		if _, err := perfdata.DecodeClockData(cd, bo); err == nil {
			t.Errorf("%v: CLOCK_DATA version 2 read", bo)
		}
		if _, err := perfdata.DecodeClockData(cd[:20], bo); err == nil {
			t.Errorf("%v: a short CLOCK_DATA read", bo)
		}
	}
	if s := perfdata.ClockMonotonicRaw.String(); s != "CLOCK_MONOTONIC_RAW" {
		t.Errorf("%q", s)
	}
}
