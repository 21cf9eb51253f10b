package perfdata_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// sampleOf makes a SAMPLE record of sample_type st in byte order bo with
// the given ip, time and id, its fields in perf_output_sample()'s order.
func sampleOf(bo binary.ByteOrder, st perfdata.SampleType, ip, time, id uint64) []byte {
	b := make([]byte, perfdata.EventHeaderSize)
	perfdata.EventHeader{Type: perfdata.RecordSample}.Encode(b, bo)
	put := func(bit perfdata.SampleType, v uint64) {
		if st&bit != 0 {
			b, _ = binary.Append(b, bo, v)
		}
	}
	put(perfdata.SampleIdentifier, id)
	put(perfdata.SampleIP, ip)
	put(perfdata.SampleTID, 0x1234)
	put(perfdata.SampleTime, time)
	put(perfdata.SampleAddr, 0xadd)
	put(perfdata.SampleID, id)
	put(perfdata.SampleCPU, 1)
	bo.PutUint16(b[6:], uint16(len(b)))
	return b
}

// TestEventsSample: Sample reads a SAMPLE's ip and time where the event
// its id names keeps them, as perf's evlist__event2evsel() and
// evsel__parse_sample() do (no fields for an id no event has, the first
// event's for id 0), the same on the first look and on every later one
// (ids seen lately are remembered), with one event or several, whose
// SAMPLEs keep the fields in the same places or not, in either byte order.
func TestEventsSample(t *testing.T) {
	const (
		full    = perfdata.SampleIP | perfdata.SampleTID | perfdata.SampleTime | perfdata.SampleID | perfdata.SampleCPU
		noTime  = perfdata.SampleIP | perfdata.SampleTID | perfdata.SampleAddr | perfdata.SampleID
		noIP    = perfdata.SampleTID | perfdata.SampleTime | perfdata.SampleAddr | perfdata.SampleID
		ident   = perfdata.SampleIdentifier | perfdata.SampleIP | perfdata.SampleTime
		firstID = 100
	)
	// Events of one recording keep their ids in the same place (perf's
	// evlist__valid_sample_type()).
	type event struct {
		st  perfdata.SampleType
		ids []uint64
	}
	cases := map[string][]event{
		"one event":                {{full, []uint64{firstID}}},
		"one event without ids":    {{perfdata.SampleIP | perfdata.SampleTime, nil}},
		"two events, same places":  {{full, []uint64{firstID, firstID + 64}}, {full, []uint64{7, 8}}},
		"two events, other places": {{full, []uint64{firstID}}, {noTime, []uint64{7}}, {noIP, []uint64{9 + 64}}},
		"identifier":               {{ident, []uint64{firstID}}, {ident | perfdata.SampleTID, []uint64{7}}},
		"no id field":              {{perfdata.SampleIP | perfdata.SampleTime, []uint64{firstID}}, {noTime, []uint64{7}}},
	}
	for name, events := range cases {
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			t.Run(fmt.Sprintf("%s/%v", name, bo), func(t *testing.T) {
				var e perfdata.Events
				e.SetOrder(bo)
				for _, ev := range events {
					raw := make([]byte, perfdata.AttrSizeVer8)
					bo.PutUint64(raw[24:], uint64(ev.st))
					a, err := perfdata.DecodeAttr(raw, bo)
					if err != nil {
						t.Fatal(err)
					}
					e.Add(a, ev.ids)
				}
				// what perf finds: the event of the id at the first event's
				// id position (the first event, if it is the only one or
				// has no id field, or for id 0; none for an unknown id),
				// and the fields where that event's SAMPLEs keep them
				want := func(raw []byte, id uint64) perfdata.SampleFields {
					var f perfdata.SampleFields
					ev := &events[0]
					if len(events) > 1 && events[0].st&(perfdata.SampleID|perfdata.SampleIdentifier) != 0 && id != 0 {
						ev = nil
						for i := range events {
							for _, x := range events[i].ids {
								if x == id {
									ev = &events[i]
								}
							}
						}
					}
					if ev == nil {
						return f
					}
					at := perfdata.EventHeaderSize
					if ev.st&perfdata.SampleIdentifier != 0 {
						at += 8
					}
					if ev.st&perfdata.SampleIP != 0 {
						f.IP, f.HasIP = bo.Uint64(raw[at:]), true
						at += 8
					}
					if ev.st&perfdata.SampleTID != 0 {
						at += 8
					}
					if ev.st&perfdata.SampleTime != 0 {
						f.Time, f.HasTime = bo.Uint64(raw[at:]), true
					}
					return f
				}
				for round := range 3 { // the ids unknown, then remembered
					for _, ev := range events {
						for _, id := range append(ev.ids, 0, 12345, firstID+1) {
							raw := sampleOf(bo, ev.st, 0x1111, 0x2222, id)
							if got, want := e.Sample(raw), want(raw, id); got != want {
								t.Errorf("round %d: a sample of type %#x with id %d: %+v, want %+v", round, ev.st, id, got, want)
							}
							if got := e.Sample(raw[:perfdata.EventHeaderSize+4]); got != (perfdata.SampleFields{}) {
								t.Errorf("round %d: a cut sample with id %d: %+v", round, id, got)
							}
						}
					}
				}
			})
		}
	}
}
