package perfdata

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Sizes of struct perf_event_attr by ABI version (PERF_ATTR_SIZE_VER0..8).
const (
	AttrSizeVer0 = 64
	AttrSizeVer8 = 136
)

// MaxAttrSize bounds a file's attr_size (a perf_event_attr and its ids
// section): 152 in perf 7.2, 184 with every proposed extension. perf
// refuses an attr larger than the one it was built with (read_attr()), so
// a bound far above any is no loss, and a damaged size field cannot make
// a reader keep 64 KiB an event. A pipe's HEADER_ATTR record holds an
// attr of at most MaxAttrSize-SectionSize bytes, which a file written
// from it can hold again.
const MaxAttrSize = 1024

var attrSizes = []int{64, 72, 80, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168}

// SampleType is perf_event_attr.sample_type (PERF_SAMPLE_* bits).
type SampleType uint64

// The sample_type bits a rewriter needs: the ones that make up the
// sample_id trailer of non-SAMPLE records.
const (
	SampleIP         SampleType = 1 << 0
	SampleTID        SampleType = 1 << 1
	SampleTime       SampleType = 1 << 2
	SampleAddr       SampleType = 1 << 3
	SampleRead       SampleType = 1 << 4
	SampleCallchain  SampleType = 1 << 5
	SampleID         SampleType = 1 << 6
	SampleCPU        SampleType = 1 << 7
	SamplePeriod     SampleType = 1 << 8
	SampleStreamID   SampleType = 1 << 9
	SampleRaw        SampleType = 1 << 10
	SampleIdentifier SampleType = 1 << 16
)

// sampleIDBits are the sample_type bits that each add 8 bytes to the
// sample_id trailer (struct sample_id in perf_event.h).
const sampleIDBits = SampleTID | SampleTime | SampleID | SampleStreamID | SampleCPU | SampleIdentifier

// attrFlagSampleIDAll is the bit number of perf_event_attr.sample_id_all in
// the flags word at offset 40 (counted from the least significant bit on a
// little-endian writer, from the most significant on a big-endian one:
// that is how C compilers lay out bitfields).
const attrFlagSampleIDAll = 18

// attrFlagUseClockID is the bit of perf_event_attr.use_clockid, and
// attrClockIDOffset the offset of attr.clockid (PERF_ATTR_SIZE_VER3 on).
const (
	attrFlagUseClockID = 25
	attrClockIDOffset  = 92
)

// attrFlagWriteBackward is perf_event_attr.write_backward's bit number.
const attrFlagWriteBackward = 27

// Attr is the part of struct perf_event_attr a rewriter needs, plus the raw
// bytes it came from (in the recording's byte order).
type Attr struct {
	Type       uint32
	Size       uint32 // attr.size as stored (0 means VER0 = 64 bytes)
	Config     uint64
	SampleType SampleType
	ReadFormat uint64
	Flags      uint64 // the bitfield word at offset 40, as read in the file's byte order
	Raw        []byte
	order      binary.ByteOrder
}

// DecodeAttr decodes a perf_event_attr stored in b (at least 64 bytes).
func DecodeAttr(b []byte, bo binary.ByteOrder) (Attr, error) {
	if len(b) < AttrSizeVer0 {
		return Attr{}, fmt.Errorf("perf_event_attr is %d bytes, want at least %d", len(b), AttrSizeVer0)
	}
	return Attr{
		Type:       bo.Uint32(b[0:]),
		Size:       bo.Uint32(b[4:]),
		Config:     bo.Uint64(b[8:]),
		SampleType: SampleType(bo.Uint64(b[24:])),
		ReadFormat: bo.Uint64(b[32:]),
		Flags:      bo.Uint64(b[40:]),
		Raw:        b,
		order:      bo,
	}, nil
}

// AttrSize returns the number of bytes the attr occupies: attr.size, with 0
// meaning PERF_ATTR_SIZE_VER0, as perf's read_attr() does.
func AttrSize(size uint32) int {
	if size == 0 {
		return AttrSizeVer0
	}
	return int(size)
}

func (a *Attr) flag(bit uint) bool {
	if a.order == binary.BigEndian {
		return a.Flags&(1<<(63-bit)) != 0
	}
	return a.Flags&(1<<bit) != 0
}

// SampleIDAll reports perf_event_attr.sample_id_all: whether non-SAMPLE
// records of this event carry the sample_id trailer.
func (a *Attr) SampleIDAll() bool { return a.flag(attrFlagSampleIDAll) }

// Clock returns perf_event_attr.clockid and whether use_clockid is set:
// whether the event's times are of that clock (perf record -k) rather than
// perf's own (local_clock()). An attr that sets use_clockid but is too
// short to hold clockid (no perf writes one) has clock -1, which is none.
func (a *Attr) Clock() (ClockID, bool) {
	switch {
	case !a.flag(attrFlagUseClockID):
		return 0, false
	case len(a.Raw) < attrClockIDOffset+4:
		return -1, true
	case a.order == binary.BigEndian:
		return ClockID(int32(binary.BigEndian.Uint32(a.Raw[attrClockIDOffset:]))), true
	}
	return ClockID(int32(binary.LittleEndian.Uint32(a.Raw[attrClockIDOffset:]))), true
}

// WriteBackward reports perf_event_attr.write_backward: the kernel writes
// the event's ring buffer from its end (perf record --overwrite), and perf
// reads it newest record first.
func (a *Attr) WriteBackward() bool { return a.flag(attrFlagWriteBackward) }

// IDHeaderSize is the size of the sample_id trailer this attr gives
// non-SAMPLE records, as perf's evsel__id_hdr_size() computes it (0 without
// sample_id_all).
func (a *Attr) IDHeaderSize() int {
	if !a.SampleIDAll() {
		return 0
	}
	return 8 * bits.OnesCount64(uint64(a.SampleType&sampleIDBits))
}

// FileAttr is one entry of a file's attrs section (struct perf_file_attr)
// with the sample ids it points to.
type FileAttr struct {
	Attr Attr
	IDs  Section // absolute offset and size of the u64 id array
}

// HeaderAttr is a pipe-mode PERF_RECORD_HEADER_ATTR: header | attr
// (attr.size bytes) | u64 id[] (the rest of the record).
type HeaderAttr struct {
	Attr Attr
	IDs  []uint64
}

// DecodeHeaderAttr decodes a HEADER_ATTR record (raw includes the header),
// as perf's perf_event__process_attr() does: the ids start at attr.size.
func DecodeHeaderAttr(raw []byte, bo binary.ByteOrder) (HeaderAttr, error) {
	body := raw[EventHeaderSize:]
	if len(body) < AttrSizeVer0 {
		return HeaderAttr{}, fmt.Errorf("HEADER_ATTR record of %d bytes is too short for a perf_event_attr", len(raw))
	}
	sz := AttrSize(bo.Uint32(body[4:]))
	if sz > len(body) {
		return HeaderAttr{}, fmt.Errorf("HEADER_ATTR record of %d bytes holds a perf_event_attr of %d", len(raw), sz)
	}
	if sz > MaxAttrSize-SectionSize {
		return HeaderAttr{}, fmt.Errorf("HEADER_ATTR record holds a perf_event_attr of %d bytes (at most %d)", sz, MaxAttrSize-SectionSize)
	}
	a, err := DecodeAttr(body[:sz], bo)
	if err != nil {
		return HeaderAttr{}, err
	}
	h := HeaderAttr{Attr: a}
	for p := body[sz:]; len(p) >= 8; p = p[8:] {
		h.IDs = append(h.IDs, bo.Uint64(p))
	}
	return h, nil
}

// MaxIDHeaderSize is the largest sample_id trailer: six 8-byte fields.
const MaxIDHeaderSize = 8 * 6

// idPos is where a SAMPLE record of this attr keeps its id, in u64 words
// after the header, as perf's evsel__calc_id_pos() finds it; -1 for none.
func (a *Attr) idPos() int {
	st := a.SampleType
	if st&SampleIdentifier != 0 {
		return 0
	}
	if st&SampleID == 0 {
		return -1
	}
	pos := 0
	for _, b := range []SampleType{SampleIP, SampleTID, SampleTime, SampleAddr} {
		if st&b != 0 {
			pos++
		}
	}
	return pos
}

// maxEventIDs bounds the sample ids Events keeps: far more than a
// recording of a few events on every CPU has.
const maxEventIDs = 1 << 16

// Events are a recording's events (its attrs) and the ids that say which
// event a record belongs to, as perf's evlist__event2evsel() tells them.
type Events struct {
	// big: the records are big-endian (SetOrder); the zero value reads
	// little-endian ones, the usual case, without an interface call.
	big     bool
	attrs   []Attr
	layouts []sampleLayout // per attr
	ids     map[uint64]int
	// partial: more ids than maxEventIDs; records with ids not kept are
	// taken to be the first event's.
	partial bool
	// idAt is where a SAMPLE keeps the id that tells its event, when
	// there are several and it has one, else 0; same says every event's
	// SAMPLEs keep ip and time in the same places (Sample).
	idAt int
	same bool
	// seen remembers the ids looked up lately, by their low bits: a
	// recording's samples come from a few ids at a time (one per CPU of an
	// event, numbered in turn), and a map lookup per sample cost more
	// than the rest of reading it.
	seen [idCacheSize]struct {
		id    uint64
		index int
	}
}

// idCacheSize is the number of ids Events remembers (a power of 2).
const idCacheSize = 64

// SetOrder sets the byte order of the records Sample, ForSample and Time
// read: the recording's.
func (e *Events) SetOrder(bo binary.ByteOrder) { e.big = bo == binary.BigEndian }

// Add adds an event and its sample ids.
func (e *Events) Add(a Attr, ids []uint64) {
	e.attrs = append(e.attrs, a)
	l := layoutOf(&a)
	e.layouts = append(e.layouts, l)
	if len(e.attrs) == 1 {
		e.same = true
	} else {
		e.idAt = max(e.layouts[0].id, 0)
		e.same = e.same && l.ip == e.layouts[0].ip && l.time == e.layouts[0].time
	}
	e.AddIDs(len(e.attrs)-1, ids)
}

// AddIDs adds sample ids of event i.
func (e *Events) AddIDs(i int, ids []uint64) {
	clear(e.seen[:])
	for _, id := range ids {
		if e.Full() {
			e.partial = true
			return
		}
		if e.ids == nil {
			e.ids = make(map[uint64]int)
		}
		e.ids[id] = i
	}
}

// Full reports whether Events keeps no more ids: records with ids it does
// not know are then taken to be the first event's.
func (e *Events) Full() bool { return len(e.ids) >= maxEventIDs }

// Attrs returns the events' attrs, in recording order.
func (e *Events) Attrs() []Attr { return e.attrs }

// IDHeaderSize is the size of the sample_id trailer perf appends to the
// records it synthesizes: the first attr's, as evlist__id_hdr_size() takes
// it (0 before any event is known).
func (e *Events) IDHeaderSize() int {
	if len(e.attrs) == 0 {
		return 0
	}
	return e.attrs[0].IDHeaderSize()
}

// sampleLayout is where an event's SAMPLE records keep the fields perf's
// evsel__parse_sample() reads first, in bytes from the record's start; -1
// for a field the event does not sample.
type sampleLayout struct {
	ip, time int
	// id is the position of the sample id perf's evlist__event2evsel()
	// reads (the first event's for every SAMPLE), -1 without one.
	id int
	// trailerTime is the time's position counted from the end of a
	// non-SAMPLE record's sample_id trailer; -1 without one.
	trailerTime int
}

func layoutOf(a *Attr) sampleLayout {
	l := sampleLayout{ip: -1, time: -1, id: -1, trailerTime: -1}
	if pos := a.idPos(); pos >= 0 {
		l.id = EventHeaderSize + 8*pos
	}
	off := EventHeaderSize
	if a.SampleType&SampleIdentifier != 0 {
		off += 8
	}
	if a.SampleType&SampleIP != 0 {
		l.ip = off
		off += 8
	}
	if a.SampleType&SampleTID != 0 {
		off += 8
	}
	if a.SampleType&SampleTime != 0 {
		l.time = off
		if a.SampleIDAll() {
			l.trailerTime = a.IDHeaderSize()
			if a.SampleType&SampleTID != 0 {
				l.trailerTime -= 8
			}
		}
	}
	return l
}

// forSample returns the index of the event of a SAMPLE record, or -1.
func (e *Events) forSample(raw []byte) int {
	if len(e.attrs) <= 1 {
		return len(e.attrs) - 1
	}
	at := e.layouts[0].id
	if at < 0 {
		return 0
	}
	if len(raw) < at+8 {
		return -1
	}
	id := e.uint64At(raw, at)
	if id == 0 {
		return 0
	}
	c := &e.seen[id&(idCacheSize-1)]
	if id == c.id {
		return c.index
	}
	i, ok := e.ids[id]
	if !ok {
		if e.partial {
			return 0
		}
		return -1
	}
	c.id, c.index = id, i
	return i
}

// uint64At reads a u64 at raw[at:], with a direct call, inlined, for
// either byte order (binary.ByteOrder's methods are not, and comparing
// one with binary.LittleEndian costs a runtime call per record).
func (e *Events) uint64At(raw []byte, at int) uint64 {
	if e.big {
		return binary.BigEndian.Uint64(raw[at:])
	}
	return binary.LittleEndian.Uint64(raw[at:])
}

// SampleFields are the fields of a SAMPLE record inject and show need.
type SampleFields struct {
	IP, Time       uint64
	HasIP, HasTime bool
}

// Sample returns a SAMPLE record's ip and time (perf's
// evsel__parse_sample()), where its event samples them.
//
// The event is forSample's, for most records without the chain of loads
// from the record's id to its event's layout that forSample takes, and in
// this one call (inject makes it for every SAMPLE): a recording of several
// events whose SAMPLEs keep ip and time in the same places (perf record's
// event and its dummy event) needs the id only to know that the event is
// known; if it was seen lately, the fields are where the first event has
// them.
func (e *Events) Sample(raw []byte) SampleFields {
	var l *sampleLayout
	if at := e.idAt; at > 0 && at+8 <= len(raw) {
		id := e.uint64At(raw, at)
		if c := &e.seen[id&(idCacheSize-1)]; id == c.id && id != 0 {
			if e.same {
				l = &e.layouts[0]
			} else {
				l = &e.layouts[c.index]
			}
		}
	}
	if l == nil {
		i := e.forSample(raw)
		if i < 0 {
			return SampleFields{}
		}
		l = &e.layouts[i]
	}
	var f SampleFields
	if at := l.ip; at >= 0 && at+8 <= len(raw) {
		f.IP, f.HasIP = e.uint64At(raw, at), true
	}
	if at := l.time; at >= 0 && at+8 <= len(raw) {
		f.Time, f.HasTime = e.uint64At(raw, at), true
	}
	return f
}

// Time returns the time of a record (raw includes the header) on perf's
// clock, as perf's evsel__parse_sample() and perf_evsel__parse_id_sample()
// find it: in a SAMPLE after the identifier, ip and pid/tid; in another
// kernel record in the sample_id trailer at its end, with the first event's
// layout. false when the record has no time. The kernel's KSYMBOL and
// BPF_EVENT records may end in bytes it did not write (bpftrack explains
// why): their times are not read.
func (e *Events) Time(raw []byte) (uint64, bool) {
	if len(e.attrs) == 0 || len(raw) < EventHeaderSize {
		return 0, false
	}
	switch t := DecodeEventHeaderBig(raw, e.big).Type; {
	case t == RecordSample:
		f := e.Sample(raw)
		return f.Time, f.HasTime
	case t >= UserTypeStart, t == RecordKSymbol, t == RecordBPFEvent:
		return 0, false
	}
	tt := e.layouts[0].trailerTime
	if tt < 0 || len(raw)-tt < EventHeaderSize || tt < 8 {
		return 0, false
	}
	return e.uint64At(raw, len(raw)-tt), true
}

// TrailerTime is the time of a record other than a SAMPLE as perf reads it
// to order the record (perf_evlist__parse_sample_timestamp() through
// perf_evsel__parse_id_sample()): from its sample_id counted from the
// record's end, whatever its type, even where the kernel left bytes after
// the sample_id (see TimeAfter). 0 and false without sample_id_all or a
// time.
func (e *Events) TrailerTime(raw []byte) (uint64, bool) {
	if len(e.attrs) == 0 {
		return 0, false
	}
	tt := e.layouts[0].trailerTime
	if tt < 8 || len(raw)-tt < EventHeaderSize {
		return 0, false
	}
	return e.uint64At(raw, len(raw)-tt), true
}

// TimeAfter is the time in the sample_id of a KSYMBOL or BPF_EVENT record
// raw whose fields are fields bytes (perfdata.BPFEventFieldsSize): its
// sample_id follows them, and the kernel may leave bytes after it (see
// bpftrack's synthesized), so it is not found from the end as Time finds
// it. 0 and false without sample_id_all or a time.
func (e *Events) TimeAfter(raw []byte, fields int) (uint64, bool) {
	if len(e.attrs) == 0 {
		return 0, false
	}
	tt, n := e.layouts[0].trailerTime, e.attrs[0].IDHeaderSize()
	if tt < 8 || n < tt {
		return 0, false
	}
	off := fields + n - tt
	if off+8 > len(raw) {
		return 0, false
	}
	return e.uint64At(raw, off), true
}
