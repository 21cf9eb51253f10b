package reader_test

// Recordings that claim more than they hold: the reader's memory stays
// bounded by a record and its fixed buffers, and what it cannot read in
// full is an error at the offset of the record that lost data.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// memoryBound is the most heap the reader may hold for any input: the
// issue's bound for the whole process.
const memoryBound = 64 << 20

// heapWatch samples the heap in use while a test reads, and keeps its peak.
type heapWatch struct{ peak uint64 }

func (h *heapWatch) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapInuse)
}

// TestZstdBomb: one COMPRESSED record of a few KiB that decompresses to
// 200 MiB of FINISHED_ROUND records is read in bounded memory with no
// limit of expansion, every record handed out (perf 6.1 fails it for its
// 528 KiB buffer); with the default limit, it is refused once past 64 MiB
// (TestZstdBombRefused).
func TestZstdBomb(t *testing.T) {
	const decoded = 200 << 20
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(bo.String(), func(t *testing.T) {
			s := testkit.NewStream(bo)
			s.CompressedBomb(decoded)
			in := s.Bytes()
			t.Logf("%d bytes that decompress to %d MiB", len(in), decoded>>20)
			runtime.GC()
			var h heapWatch
			h.sample()
			r := rectest.Stream(t, in, reader.Options{Decompress: true, MaxExpansion: -1})
			rounds := 0
			for r.Next() {
				if r.Record().Header.Type == perfdata.RecordFinishedRound {
					if rounds++; rounds%(1<<20) == 0 {
						h.sample()
					}
				}
			}
			h.sample()
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if rounds != decoded/perfdata.EventHeaderSize {
				t.Errorf("%d FINISHED_ROUND records, want %d", rounds, decoded/perfdata.EventHeaderSize)
			}
			if h.peak > memoryBound {
				t.Errorf("peak heap %d MiB, want < %d MiB", h.peak>>20, memoryBound>>20)
			}
			t.Logf("peak heap %.1f MiB", float64(h.peak)/(1<<20))
		})
	}
}

// TestZstdBombRefused: compressed records that expand far beyond what
// perf record -z writes are refused, with the ratio measured, once past
// 64 MiB (records counted as 32 bytes at least: 2 Mi FINISHED_ROUNDs), and
// read to the end under a limit raised above their ratio.
func TestZstdBombRefused(t *testing.T) {
	s := testkit.NewStream(binary.LittleEndian)
	s.CompressedBomb(200 << 20)
	for _, c := range []struct {
		most int
		want int // records handed out, -1 for all
	}{{0, 64 << 20 / 32}, {50, 64 << 20 / 32}, {1 << 20, -1}} {
		r := rectest.Stream(t, s.Bytes(), reader.Options{Decompress: true, MaxExpansion: c.most})
		rounds := 0
		for r.Next() {
			rounds++
		}
		err := r.Err()
		if c.want < 0 {
			if err != nil {
				t.Errorf("MaxExpansion %d: %v", c.most, err)
			}
			continue
		}
		if !errors.Is(err, reader.ErrExpansion) || !strings.Contains(err.Error(), "expand ") {
			t.Errorf("MaxExpansion %d: error %v, want ErrExpansion with the ratio", c.most, err)
		}
		// the check is made per block decoded (128 KiB)
		if rounds < c.want || rounds > c.want+1<<20 {
			t.Errorf("MaxExpansion %d: %d records handed out, want about %d", c.most, rounds, c.want)
		}
	}
}

// compressedRecording is a pipe recording with two COMPRESSED records, the
// second cut (when cut) in the middle of its zstd block: sizes that agree
// with each other, data that does not. It returns the second record's offset.
func compressedRecording(bo binary.ByteOrder, cut bool) ([]byte, int64) {
	s := testkit.NewStream(bo)
	for i := range 2 {
		recs := testkit.NewRecords(bo)
		for j := range 200 {
			recs.Sample(0xffffffffc0000000 + uint64(i*1000+j)*16)
		}
		recs.Record(perfdata.RecordFinishedRound, nil)
		if i == 1 {
			off := int64(s.Len())
			s.Compressed(recs.Bytes(), cut)
			return s.Bytes(), off
		}
		s.Compressed(recs.Bytes(), false)
	}
	panic("unreachable")
}

// TestCompressedCut: a stream whose last COMPRESSED payload is cut inside
// its zstd block is truncated, an error naming that record's offset, in a
// pipe stream and in a file, and never a clean end (perf loses the block's
// records without a word).
func TestCompressedCut(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		whole, _ := compressedRecording(bo, false)
		in, off := compressedRecording(bo, true)
		n, err := countRecords(t, whole, false)
		if err != nil || n != 1+2+2*201 {
			t.Fatalf("%v: the whole recording: %d records, %v", bo, n, err)
		}
		for _, file := range []bool{false, true} {
			n, err := countRecords(t, in, file)
			var fe *reader.FormatError
			if !errors.As(err, &fe) || !errors.Is(err, reader.ErrTruncated) || fe.Offset != off ||
				!strings.Contains(err.Error(), "are lost") {
				t.Errorf("%v file %v: a cut payload: %d records, error %v; want one naming the record at %#x", bo, file, n, err, off)
			}
		}
	}
}

// countRecords reads a pipe-mode recording as a stream, or from a file of
// the same bytes.
func countRecords(t *testing.T, in []byte, file bool) (int, error) {
	r := openBytes(t, in, file)
	defer r.Close()
	n := 0
	for r.Next() {
		n++
	}
	return n, r.Err()
}

// TestCompressedTail: data that decompresses to half a record at the end
// of the recording lost the record's other half: an error, not a clean end.
func TestCompressedTail(t *testing.T) {
	bo := binary.LittleEndian
	recs := testkit.NewRecords(bo)
	recs.Sample(0x1000)
	s := testkit.NewStream(bo)
	s.Compressed(recs.Bytes()[:20], false)
	n, err := countRecords(t, s.Bytes(), false)
	if !errors.Is(err, reader.ErrTruncated) {
		t.Errorf("half a record in compressed data: %d records, error %v, want a truncation", n, err)
	}
}

// TestCompressedGarbage: a payload that is no zstd data, or holds a
// reserved block type, is an error at its record.
func TestCompressedGarbage(t *testing.T) {
	bo := binary.LittleEndian
	for name, payload := range map[string][]byte{
		"not zstd":       []byte("these bytes are not zstd data"),
		"reserved block": {0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x07, 0x00, 0x00},
		"huge block":     {0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0xf8, 0xff, 0xff},
	} {
		s := testkit.NewStream(bo)
		off := int64(s.Len())
		s.Record(perfdata.RecordCompressed, payload)
		n, err := countRecords(t, s.Bytes(), false)
		var fe *reader.FormatError
		if !errors.As(err, &fe) || fe.Offset != off && fe.Outer != off {
			t.Errorf("%s: %d records, error %v; want one at %#x", name, n, err, off)
		}
	}
}

// FuzzDecompress: COMPRESSED records with any payloads, split anywhere
// between records, are read to their end or to an error at a record of
// theirs; never a panic or a hang.
func FuzzDecompress(f *testing.F) {
	bo := binary.LittleEndian
	recs := testkit.NewRecords(bo)
	for i := range 50 {
		recs.Sample(0x1000 + uint64(i))
	}
	s := testkit.NewRecords(bo)
	s.Compressed(recs.Bytes(), false)
	f.Add(s.Bytes()[perfdata.EventHeaderSize:], uint16(100), uint16(200))
	bomb := testkit.NewRecords(bo)
	bomb.CompressedBomb(1 << 20)
	f.Add(bomb.Bytes()[perfdata.EventHeaderSize:], uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, payload []byte, cut1, cut2 uint16) {
		if len(payload) > 3*(perfdata.MaxRecordSize-perfdata.EventHeaderSize) {
			return
		}
		a := min(int(cut1), len(payload))
		b := min(a+int(cut2), len(payload))
		st := testkit.NewStream(bo)
		var offs []int64
		for _, p := range [][]byte{payload[:a], payload[a:b], payload[b:]} {
			if len(p) == 0 || len(p) > perfdata.MaxRecordSize-perfdata.EventHeaderSize {
				continue
			}
			offs = append(offs, int64(st.Len()))
			st.Record(perfdata.RecordCompressed, p)
		}
		r := rectest.Stream(t, st.Bytes(), reader.Options{Decompress: true})
		for n := 0; r.Next(); n++ {
			if n > 1<<22 {
				t.Fatal("more records than the payloads can hold")
			}
		}
		var fe *reader.FormatError
		if err := r.Err(); err != nil && errors.As(err, &fe) && fe.Outer >= 0 {
			found := false
			for _, o := range offs {
				found = found || o == fe.Outer
			}
			if !found {
				t.Fatalf("an error in the data of a record at %#x, which is none of %v: %v", fe.Outer, offs, err)
			}
		}
	})
}

// TestCompressedSplit: records split anywhere between COMPRESSED payloads,
// and between the decoder's buffers, come out whole, byte for byte and in
// order: each after the COMPRESSED record its data ends in, before the
// next top-level record (perf's decomp_last_rem), with that record as
// Outer. Payloads of up to 768 KiB of records cross the decoder's buffers;
// runs of small ones are fed to it ahead of the reader.
func TestCompressedSplit(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, seed := range []uint64{1, 2, 3} {
			rng := rand.New(rand.NewPCG(seed, 0))
			inner := testkit.NewRecords(bo)
			var sizes []int
			for inner.Len() < 4<<20 {
				body := make([]byte, 8*rng.IntN(2000))
				for i := range body {
					if rng.IntN(256) == 0 {
						body[i] = byte(rng.Uint32())
					}
				}
				before := inner.Len()
				inner.Record(perfdata.RecordComm, body)
				sizes = append(sizes, inner.Len()-before)
			}
			all := inner.Bytes()
			s := testkit.NewStream(bo)
			type want struct {
				raw   []byte
				outer int64 // -1: a top-level FINISHED_ROUND
			}
			var wants []want
			rec, recEnd := 0, sizes[0] // the next record to end, and where
			for pos := 0; pos < len(all); {
				n := 1 + rng.IntN(4<<10)
				if rng.IntN(8) == 0 {
					n = 1 + rng.IntN(768<<10)
				}
				n = min(n, len(all)-pos)
				off := int64(s.Len())
				s.Compressed(all[pos:pos+n], false)
				pos += n
				for rec < len(sizes) && recEnd <= pos {
					wants = append(wants, want{all[recEnd-sizes[rec] : recEnd], off})
					if rec++; rec < len(sizes) {
						recEnd += sizes[rec]
					}
				}
				s.Record(perfdata.RecordFinishedRound, nil)
				wants = append(wants, want{nil, -1})
			}
			for _, file := range []bool{false, true} {
				r := openBytes(t, s.Bytes(), file)
				i := 0
				for r.Next() {
					rec := r.Record()
					switch t := rec.Header.Type; {
					case t == perfdata.RecordCompressed || t == perfdata.RecordHeaderAttr || t == perfdata.RecordHeaderFeature:
						continue
					case i >= len(wants):
					case wants[i].outer < 0 && t == perfdata.RecordFinishedRound && !rec.Compressed():
						i++
						continue
					case wants[i].outer == rec.Outer && bytes.Equal(rec.Raw, wants[i].raw):
						i++
						continue
					}
					t.Fatalf("%v seed %d file %v: record %d: %v of %d bytes at %#x in the COMPRESSED record at %#x; want %d bytes in the one at %#x",
						bo, seed, file, i, rec.Header.Type, len(rec.Raw), rec.Offset, rec.Outer, len(wants[i].raw), wants[i].outer)
				}
				if err := r.Err(); err != nil {
					t.Fatalf("%v seed %d file %v: %v", bo, seed, file, err)
				}
				if i != len(wants) {
					t.Errorf("%v seed %d file %v: %d of %d records", bo, seed, file, i, len(wants))
				}
				r.Close()
			}
		}
	}
}

// openBytes reads a pipe-mode recording as a stream, or from a file of the
// same bytes.
func openBytes(t *testing.T, in []byte, file bool) *reader.Reader {
	t.Helper()
	var r *reader.Reader
	var err error
	if file {
		path := filepath.Join(t.TempDir(), "in.data")
		if err := os.WriteFile(path, in, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err = reader.Open(path, reader.Options{Decompress: true})
	} else {
		r, err = reader.NewStream(bytes.NewReader(in), reader.Options{Decompress: true})
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestZstdWindow: a frame that declares zstd's largest default window (512
// MiB), and fills it with 500 MiB of run-length blocks from 16 KiB of
// input, is an error at its record, in bounded memory: the decoder keeps
// a window's worth of history.
func TestZstdWindow(t *testing.T) {
	bo := binary.LittleEndian
	payload := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 19 << 3} // window 2^(10+19)
	const blocks = 4000
	for i := range blocks {
		last := 0
		if i == blocks-1 {
			last = 1
		}
		h := uint32(128<<10)<<3 | 1<<1 | uint32(last) // an RLE block of 128 KiB
		payload = append(payload, byte(h), byte(h>>8), byte(h>>16), 0x08)
	}
	s := testkit.NewStream(bo)
	off := int64(s.Len())
	s.Record(perfdata.RecordCompressed, payload)
	runtime.GC()
	var h heapWatch
	h.sample()
	r := openBytes(t, s.Bytes(), false)
	defer r.Close()
	for r.Next() {
		h.sample()
	}
	h.sample()
	var fe *reader.FormatError
	if err := r.Err(); !errors.As(err, &fe) || fe.Offset != off && fe.Outer != off || !strings.Contains(err.Error(), "window") {
		t.Errorf("error %v, want one about the window at %#x", err, off)
	}
	if h.peak > memoryBound {
		t.Errorf("peak heap %d MiB, want < %d MiB", h.peak>>20, memoryBound>>20)
	}
}

// TestPayloadCut: a pipe stream that ends inside the data a record carries
// (TRACING_DATA, AUXTRACE) is the reader's truncation error, whether the
// consumer copies the data (a writer: the read fails with it, and Err
// reports it) or leaves it to Next to skip. Found by FuzzInject: inject
// reported the cut as an error of its output.
func TestPayloadCut(t *testing.T) {
	in := testkit.CutTracingData(binary.LittleEndian, 1<<20, 100)
	const want = "AUX or trace data of the TRACING_DATA record at 0x10 ends after 100 of 1048576 bytes"
	for _, copyData := range []bool{true, false} {
		r := rectest.Stream(t, in, reader.Options{})
		if !r.Next() {
			t.Fatalf("no first record: %v", r.Err())
		}
		if copyData {
			_, err := io.Copy(io.Discard, r.Record().Payload)
			var fe *reader.FormatError
			if !errors.As(err, &fe) || !errors.Is(err, reader.ErrTruncated) || !strings.Contains(err.Error(), want) {
				t.Errorf("copying the data: %v, want the reader's truncation error %q", err, want)
			}
			if r.Err() == nil {
				t.Errorf("copying the data failed, and Err() is nil")
			}
		}
		if r.Next() {
			t.Fatalf("a record after the cut")
		}
		if err := r.Err(); !errors.Is(err, reader.ErrTruncated) || !strings.Contains(err.Error(), want) {
			t.Errorf("copy %v: Err() = %v, want %q", copyData, err, want)
		}
		r.Close()
	}
}

// TestPipeAttrSize: a pipe's HEADER_ATTR records each claiming an attr of
// nearly 64 KiB (4,000 of them would have been 260 MB kept, twice over by
// convert) are an error at the first, as a file's attr_size over
// perfdata.MaxAttrSize is; the largest attr a file could hold again is read.
func TestPipeAttrSize(t *testing.T) {
	bo := binary.LittleEndian
	stream := func(attrSize, n int) []byte {
		s := testkit.NewRecords(bo)
		s.Write(perfdata.PipeHeader(bo))
		for range n {
			attr := testkit.StreamAttr(bo)
			attr = append(attr, make([]byte, attrSize-len(attr))...)
			bo.PutUint32(attr[4:], uint32(attrSize))
			s.Record(perfdata.RecordHeaderAttr, attr)
		}
		return s.Bytes()
	}
	biggest := perfdata.MaxAttrSize - perfdata.SectionSize
	if n, err := countRecords(t, stream(biggest, 3), false); err != nil || n != 3 {
		t.Errorf("attrs of %d bytes: %d records, %v; want 3, no error", biggest, n, err)
	}
	n, err := countRecords(t, stream(65520, 40), false)
	var ce *reader.FormatError
	if !errors.As(err, &ce) || ce.Offset != 16 || n != 0 {
		t.Errorf("attrs of 65520 bytes: %d records, %v; want a corrupt record at 0x10", n, err)
	}
}

// TestPipeDamagedTail: a pipe stream whose record header is damaged (a
// type perf does not know, a size below 8) where records follow lost
// those records: an error at the damaged one. Text after the stream, as a
// shell redirect captures perf record's status lines, is not (the corpus
// has such a file, read in TestCorpus).
func TestPipeDamagedTail(t *testing.T) {
	bo := binary.LittleEndian
	head := testkit.NewStream(bo) // HEADER_ATTR
	head.Sample(0x1000)
	damaged := head.Len()
	for _, tc := range []struct {
		name string
		tail []byte
		err  bool
	}{
		{"text", []byte("[ perf record: Woken up 1 times to write data ]\n"), false},
		{"a size of 0, then records", func() []byte {
			s := testkit.NewRecords(bo)
			s.Write(bo.AppendUint64(nil, 1000)) // type 1000, size 0
			for range 100 {
				s.Sample(0x1000)
			}
			return s.Bytes()
		}(), true},
		{"text with a NUL", []byte("[ perf record: \x00 ]\n"), true},
	} {
		n, err := countRecords(t, append(bytes.Clone(head.Bytes()), tc.tail...), false)
		var fe *reader.FormatError
		switch {
		case !tc.err && (err != nil || n != 2):
			t.Errorf("%s: %d records, %v; want 2, no error", tc.name, n, err)
		case tc.err && (!errors.As(err, &fe) || fe.Offset != int64(damaged) || n != 2):
			t.Errorf("%s: %d records, %v; want 2, then an error at %#x", tc.name, n, err, damaged)
		}
	}
}

// compressedShapes are the compressed records perf record caps: perf
// 6.1's COMPRESSED of 65,535 bytes at most (not a multiple of 8, so every
// record after one is unaligned), perf 7.2's COMPRESSED2 of 65,528 (data
// padded to a multiple of 8).
var compressedShapes = []struct {
	name   string
	c2     bool
	typ    perfdata.RecordType
	capped uint16 // the size of a record perf filled
}{
	{"COMPRESSED", false, perfdata.RecordCompressed, 65535},
	{"COMPRESSED2", true, perfdata.RecordCompressed2, 65528},
}

// TestCompressedAcrossRecords: perf caps a compressed record (perf 6.1's
// COMPRESSED at 65,535 bytes, perf 7.2's COMPRESSED2 at 65,528) and
// carries what does not fit to the next one, after a FINISHED_ROUND, so
// that a zstd block starts in one record and ends in the next; perf reads
// every record of such a stream, and so does the reader, in a pipe stream
// and in a file. Only a stream that ends inside a block is cut
// (TestCompressedCutAcrossRecords).
func TestCompressedAcrossRecords(t *testing.T) {
	for _, c := range compressedShapes {
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			s := testkit.NewStream(bo)
			s.Compressed2 = c.c2
			samples := s.BusyCompressed(3, true)
			in := s.Bytes()
			for _, file := range []bool{false, true} {
				r := openBytes(t, in, file)
				got, capped := 0, 0
				for r.Next() {
					rec := r.Record()
					switch {
					case rec.Header.Type == perfdata.RecordSample && rec.Outer >= 0:
						got++
					case rec.Header.Type == c.typ && rec.Header.Size == c.capped:
						capped++
					}
				}
				if err := r.Err(); err != nil || got != samples || capped < 3 {
					t.Errorf("%s %v file %v: %d of %d SAMPLEs, %d records of %d bytes, %v", c.name, bo, file, got, samples, capped, c.capped, err)
				}
				r.Close()
			}
		}
	}
}

// busyCut writes, as s's records, a busy compressed stream that ends
// inside a zstd block: after the capped record the block starts in
// (nothing false), or after a record that holds only the block's start
// and decompresses to nothing (nothing true).
func busyCut(s *testkit.Stream, nothing bool) {
	s.BusyCompressed(2, nothing)
	if nothing {
		recs := testkit.NewRecords(s.Order)
		for i := range 1000 {
			recs.SampleAt(0xffffffffc0000000+uint64(i)*7919, uint64(i))
		}
		s.CompressedBlockStart(recs.Bytes(), 100)
	}
}

// lastCompressed is the offset of the last compressed record of type t in
// in, whose records start at off.
func lastCompressed(in []byte, off int, bo binary.ByteOrder, t perfdata.RecordType) int64 {
	last := int64(-1)
	for off < len(in) {
		h := perfdata.DecodeEventHeader(in[off:], bo)
		if h.Type == t {
			last = int64(off)
		}
		off += int(h.Size)
	}
	return last
}

// TestCompressedCutAcrossRecords: a stream whose last block was to end in
// a compressed record that never came is truncated, an error at the
// record the block starts in that says how many bytes of records are
// lost, and what perf does: it loses them too, silently when the last
// compressed record decompressed to something, else stopping at that
// record with "Couldn't decompress data" (TestCompressedCutPerf checks
// both against perf).
func TestCompressedCutAcrossRecords(t *testing.T) {
	bo := binary.LittleEndian
	for _, c := range compressedShapes {
		for _, nothing := range []bool{false, true} {
			s := testkit.NewStream(bo)
			s.Compressed2 = c.c2
			busyCut(s, nothing)
			in := s.Bytes()
			// the block starts in the last compressed record: a capped one,
			// or the one with the block's start only
			last := lastCompressed(in, perfdata.PipeHeaderSize, bo, c.typ)
			perf := "perf loses them too, and says nothing"
			if nothing {
				perf = "perf loses them too, and stops at this record with \"Couldn't decompress data\""
			}
			for _, file := range []bool{false, true} {
				n, err := countRecords(t, in, file)
				var fe *reader.FormatError
				if !errors.As(err, &fe) || !errors.Is(err, reader.ErrTruncated) || fe.Offset != last ||
					!strings.Contains(err.Error(), "up to 131072 bytes of them, are lost") || !strings.Contains(err.Error(), perf) {
					t.Errorf("%s, nothing %v, file %v: %d records, error %v; want one at %#x that says %q", c.name, nothing, file, n, err, last, perf)
				}
			}
		}
	}
}

// TestCompressedCutPerf: what cutBlock says perf does with a stream cut
// inside a zstd block is what perf does (perf 6.1 with COMPRESSED, perf
// 7.2 with COMPRESSED2): with a last compressed record that decompressed
// to something, perf reads to the end without a word and has the SAMPLEs
// the reader handed out before its error; with one that decompresses to
// nothing, perf fails with "Couldn't decompress data" (and exits 0).
func TestCompressedCutPerf(t *testing.T) {
	bo := binary.LittleEndian
	for _, c := range compressedShapes {
		t.Run(c.name, func(t *testing.T) {
			perf := testkit.PerfStock(t)
			if c.c2 {
				perf = testkit.PerfModern(t)
			}
			for _, nothing := range []bool{false, true} {
				s := testkit.NewRecords(bo)
				s.Compressed2 = c.c2
				busyCut(s, nothing)
				path := filepath.Join(t.TempDir(), "cut.data")
				if err := testkit.WriteFile(path, bo, s.Bytes(), []testkit.FileFeature{testkit.CompressedFeature(bo)}); err != nil {
					t.Fatal(err)
				}
				r, err := reader.Open(path, reader.Options{Decompress: true})
				if err != nil {
					t.Fatal(err)
				}
				samples := 0
				for r.Next() {
					if r.Record().Header.Type == perfdata.RecordSample {
						samples++
					}
				}
				rerr := r.Err()
				r.Close()
				if !errors.Is(rerr, reader.ErrTruncated) {
					t.Fatalf("nothing %v: %v, want a truncation", nothing, rerr)
				}
				// perf report exits 0 after "failed to process sample"
				out, err := exec.Command(perf, "report", "--stats", "-i", path).CombinedOutput()
				failed := bytes.Contains(out, []byte("failed to process"))
				if nothing {
					if !failed || !bytes.Contains(out, []byte("Couldn't decompress data")) ||
						!strings.Contains(rerr.Error(), "Couldn't decompress data") {
						t.Errorf("a last record that decompresses to nothing: perf %v\n%s\nbpfmeta: %v", err, out, rerr)
					}
					continue
				}
				st, ok := testkit.ParseStats(string(out))
				if err != nil || failed || !ok || st.Counts["SAMPLE"] != samples || !strings.Contains(rerr.Error(), "says nothing") {
					t.Errorf("a block cut after records decompressed: perf %v, %d SAMPLEs; bpfmeta %d SAMPLEs, %v\n%s", err, st.Counts["SAMPLE"], samples, rerr, out)
				}
			}
		})
	}
}
