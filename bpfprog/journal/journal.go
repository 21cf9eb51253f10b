// Package journal is the flight recorder of BPF program loads (bpfmeta watch --journal).
//
// It is the flight recorder of BPF program loads: a directory of segment
// files to which a long-running watch (bpfmeta watch --journal) appends
// every program it finds loaded and every unload, and which answers as a
// bpfprog.Source for the programs of a recording that are gone when it is
// injected, on that machine or another.
//
// A journal is kept like journald's: in segments rotated by size, the whole
// under a size limit (Options.MaxSize), the oldest segments dropped first,
// their loads counted and named (a "dropped" record in the segment that
// follows, so that inject can say which programs fell out). Every record
// is framed with its length and a CRC-32C, written with one write(2) and
// synced at most once a second (after a burst, a second after its first
// record): a SIGKILL loses nothing written, a crash of the machine at most
// the last second, and a record cut by either is found by its frame and
// ignored. A writer that starts again begins a new segment.
//
// Journals of several machines can sit in one tree: the writer keeps each
// host's in DIR/HOST (HOST is perf's HEADER_HOSTNAME, the hostname), and
// Open reads DIR as such a tree, or as one host's directory.
//
// It does not follow loads (bpfprog/watch does) nor read the kernel
// (bpfprog/live does).
package journal

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// A segment file is named by its sequence number, in hex so that the names
// sort as the numbers do, and holds:
//
//	magic (8 bytes: "BPFMJNL\n")
//	frame: u32 length | u32 CRC-32C (Castagnoli) of the payload | payload
//	...
//
// little-endian, every payload one JSON object with one key: the first
// "segment" (segmentHeader), then "load" (a program in the JSON form every
// bpfmeta document shares), "unload" (Unload), "dropped" (Dropped) and
// "lost" (Lost). A reader skips a kind it does not know.
const (
	magic         = "BPFMJNL\n"
	frameHeader   = 8
	segmentSuffix = ".journal"
	// MaxRecord bounds a record's payload: a program of 256 functions
	// and 202 entries of 320 bytes is far smaller.
	MaxRecord = 1 << 20
	// maxDroppedPerRecord bounds the loads one dropped record names.
	maxDroppedPerRecord = 8192
)

// DefaultDir is the journal bpfmeta-watch.service writes
// (StateDirectory=bpfmeta), which inject reads when it exists.
const DefaultDir = "/var/lib/bpfmeta"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DefaultMaxSize is the size the whole of a host's journal is kept under
// when Options.MaxSize is 0: 128 MiB hold about 100,000 loads of programs
// with metadata (a load's record is about 1 KiB), two months of a host that
// loads a program every minute; inject's index of 128 MiB of the smallest
// loads and unloads is 9.3 MiB (TestIndexBound); journald keeps up to
// 4 GiB, but a load is worth less than a log.
const DefaultMaxSize = 128 << 20

// segmentHeader is a segment's first record.
type segmentHeader struct {
	doc.Header
	Seq    uint64         `json:"seq"`
	System bpfprog.System `json:"system"`
	// Started is when the segment was begun.
	Started time.Time `json:"started"`
	// Dropped counts the segments and loads dropped before this segment
	// was begun, to keep the journal under its size limit.
	DroppedSegments uint64 `json:"dropped_segments"`
	DroppedLoads    uint64 `json:"dropped_loads"`
}

// Unload is a program's unload (its PROG_UNLOAD BPF_EVENT).
type Unload struct {
	ID  uint32          `json:"id"`
	Tag perfdata.BPFTag `json:"tag"`
	// Time is CLOCK_BOOTTIME at the unload, as a program's LoadTime is.
	Time time.Duration `json:"time_ns"`
	At   time.Time     `json:"at"`
}

// Dropped names loads of a segment dropped to keep the journal under its
// size limit, so that a program that fell out of it can be named.
type Dropped struct {
	At     time.Time     `json:"at"`      // when it was dropped
	Seq    uint64        `json:"seq"`     // the segment's number
	BootID string        `json:"boot_id"` // the boot its loads are of
	Loads  []DroppedLoad `json:"loads"`
}

// DroppedLoad is a load that fell out of the journal: enough to know a
// recording's program again (id, tag, main function's address).
type DroppedLoad struct {
	ID       uint32          `json:"id"`
	Tag      perfdata.BPFTag `json:"tag"`
	Addr     hexAddr         `json:"addr"`
	LoadTime time.Duration   `json:"load_time_ns"`
}

// Lost is a load the journal's writer saw and could not journal (the
// program was gone before it could be read, or could not be read: ID and
// Tag set), or a count of the kernel's records it lost (Records: loads it
// knows nothing of), written as it happened, so that a reader can say
// which programs may be missing from the journal, and why.
type Lost struct {
	At      time.Time       `json:"at"`
	ID      uint32          `json:"id,omitempty"`
	Tag     perfdata.BPFTag `json:"tag"`
	Name    string          `json:"name,omitempty"` // its main function's, from its KSYMBOL
	Why     string          `json:"why,omitempty"`
	Records uint64          `json:"records,omitempty"`
}

// hexAddr is a kernel address as every bpfmeta document writes it
// (bpfprog.Addr: "0xffffffffc0023054").
type hexAddr uint64

func (a hexAddr) MarshalText() ([]byte, error) { return bpfprog.Addr(a).MarshalText() }

func (a *hexAddr) UnmarshalText(b []byte) error {
	v, err := bpfprog.ParseAddr(string(b))
	*a = hexAddr(v)
	return err
}

// record is a frame's payload: one of its fields is set.
type record struct {
	Segment *segmentHeader  `json:"segment,omitempty"`
	Load    json.RawMessage `json:"load,omitempty"`
	Unload  *Unload         `json:"unload,omitempty"`
	Dropped *Dropped        `json:"dropped,omitempty"`
	Lost    *Lost           `json:"lost,omitempty"` // a load not journaled
}

// frame appends the frame of payload to b.
func frame(b, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// ErrFormat is wrapped by the errors for what is not a journal this
// package reads.
var ErrFormat = errors.New("not a bpfmeta journal")

// ErrDropped is wrapped (with bpfprog.ErrNotFound) by the error for a
// program that fell out of the journal: its load was dropped to keep the
// journal under its size limit.
var ErrDropped = errors.New("dropped from the journal by its size limit")

// ErrAmbiguous is wrapped (with bpfprog.ErrNotFound) by the error for a
// load the journal has more than one candidate for: it does not guess.
var ErrAmbiguous = errors.New("more than one load in the journal could be it")

// ErrDamaged is wrapped (with bpfprog.ErrNotFound) by the error for a
// load the journal has not, which one of its damaged records may have
// been: records of its boot were skipped as damaged.
var ErrDamaged = errors.New("a damaged record of the journal may have been it")

// ErrLost is wrapped (with bpfprog.ErrNotFound) by the error for a load
// the journal has not because its writer could not journal it: a Lost
// record names its id, or counts kernel records lost in its boot.
var ErrLost = errors.New("the journal service could not journal it")

// ErrLimit is wrapped by the error for a journal whose index would pass
// a bound (MaxIndexed, the memory budget): the programs looked for in it
// are not found because of the limit, not because it has not them. It is
// bpfprog.ErrLimit.
var ErrLimit = fmt.Errorf("the journal is too large to index: %w", bpfprog.ErrLimit)
