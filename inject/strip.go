package inject

import (
	"encoding/binary"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Strip is the rule of bpfmeta strip, Run's counterpart for perf before
// 6.17, which stops at the first BPF_METADATA record ("failed to process
// type: 84"): Keep keeps every record but the BPF_METADATA records, so that
// a recording Run added them to is what it was before. It removes those
// perf >= 6.17 wrote too.
type Strip struct {
	// Removed, if not nil, is called with the offset (Record.Offset) of
	// every record Keep leaves out, and the program it names (its
	// prog_name, "" if it is too short for one), read in Order, the
	// recording's byte order (reader.Reader.ByteOrder).
	Removed func(offset int64, prog string)
	Order   binary.ByteOrder
	// Stuck counts the BPF_METADATA records Keep kept because they are
	// inside a compressed record, which carries them as they are: perf
	// before 6.17 still stops at them.
	Stuck int
}

// Keep reports whether rec stays (writer.Copy's keep).
func (s *Strip) Keep(rec *perfdata.Record) bool {
	switch {
	case rec.Header.Type != perfdata.RecordBPFMetadata:
		return true
	case rec.Compressed():
		s.Stuck++ // it cannot be taken out of the compressed data
		return true
	}
	if s.Removed != nil {
		prog := ""
		if s.Order != nil {
			m, _ := perfdata.DecodeBPFMetadata(rec.Raw, s.Order)
			prog = m.ProgName
		}
		s.Removed(rec.Offset, prog)
	}
	return false
}
