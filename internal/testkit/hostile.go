package testkit

// Hostile inputs: recordings that claim more than they hold, decompress to
// far more than they are, or carry bytes a terminal must never see. The
// generators write as they go, so that a test's own memory stays small
// whatever size it asks for, and files are sparse where they are large.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Terminal is text a terminal acts on: ESC sequences that move the cursor
// and recolour, a C1 CSI byte (invalid UTF-8 alone), BEL, a carriage
// return and a newline that start a fake line, and DEL.
const Terminal = "x\n\x1b[31mbpfmeta: all good\x1b[0m\r\x9b2J\a\x7f"

// Compressed writes records (a NewRecords sequence) as one COMPRESSED
// record, continuing the stream's one zstd stream and flushing it at the
// end as perf record does. cut keeps only the first half of the payload,
// with the record's size made to match: a payload that ends inside a zstd
// block.
func (s *Stream) Compressed(records []byte, cut bool) {
	payload := s.compress(func(enc *zstd.Encoder) { enc.Write(records) })
	if cut {
		payload = payload[:len(payload)/2]
	}
	s.compressedRecord(payload)
}

// maxCompressedPayload is perf 6.1's max_record_size for a COMPRESSED
// record's payload: PERF_SAMPLE_MAX_SIZE (65,536) less the header, less 1,
// so that the record's size, 65,535 bytes at most, fits its u16 (and is
// then not a multiple of 8).
const maxCompressedPayload = 65536 - perfdata.EventHeaderSize - 1

// maxCompressed2Payload is perf 7.2's max_record_size for a COMPRESSED2
// record's data: PERF_SAMPLE_MAX_SIZE less the 16-byte header and data_size,
// less 8, so that the record padded to a multiple of 8 (65,528 bytes at
// most) fits its u16 (zstd_compress() in builtin-record.c; before that
// fix, which perf 7.2.13 has, perf from 6.16 on reserved 1 byte, framed a
// flush that filled several records as one, and overflowed the u16).
const maxCompressed2Payload = 65536 - 16 - 8

// maxPayload is the most compressed bytes one of the stream's compressed
// records holds, as perf record caps them.
func (s *Stream) maxPayload() int {
	if s.Compressed2 {
		return maxCompressed2Payload
	}
	return maxCompressedPayload
}

// compressedCapped writes records as perf's
// zstd_compress_stream_to_records() does when they compress to more than
// one record holds: compressed records of the most perf puts in one
// (maxCompressedPayload, or maxCompressed2Payload with Compressed2), and
// what ZSTD_flushStream() could not write into them stays in the
// compressor, carried to the start of the next call's first record
// (whatever records the caller writes in between). It says whether it
// carried anything: the last record it wrote ends inside a zstd block.
// Output that fits one record is written as Compressed writes it.
// flushCompressed writes what is carried.
func (s *Stream) compressedCapped(records []byte) (carried bool) {
	out := append(s.zcarry, s.compress(func(enc *zstd.Encoder) { enc.Write(records) })...)
	s.zcarry = nil
	most := s.maxPayload()
	if len(out) <= most {
		s.compressedRecord(out)
		return false
	}
	for len(out) >= most {
		s.compressedRecord(out[:most])
		out = out[most:]
	}
	s.zcarry = out
	return len(out) > 0
}

// CompressedBlockStart writes a compressed record that holds only the
// first n bytes of the zstd block records compress to, and nothing that
// ends in it: what a stream cut right after such a record ends with. perf
// decompresses nothing from that record.
func (s *Stream) CompressedBlockStart(records []byte, n int) {
	out := append(s.zcarry, s.compress(func(enc *zstd.Encoder) { enc.Write(records) })...)
	if len(s.zcarry) > 0 || n >= len(out) {
		panic("testkit: CompressedBlockStart needs a stream between blocks and n inside its block")
	}
	s.compressedRecord(out[:n])
}

// flushCompressed writes the compressed bytes compressedCapped carried, if
// any, as one COMPRESSED record.
func (s *Stream) flushCompressed() {
	if len(s.zcarry) > 0 {
		s.compressedRecord(s.zcarry)
		s.zcarry = nil
	}
}

// BusyCompressed writes rounds rounds of what a busy perf 6.1 -z recording
// (perf 7.2's, with Compressed2) holds: per round, 8,000 SAMPLEs of random
// ips and times (256 KB that compress to more than a record holds) through
// compressedCapped, then a FINISHED_ROUND between the compressed records,
// so that every round's last zstd block starts in one compressed record
// and ends in the next, after the FINISHED_ROUND. With finish, the last
// carried bytes are written too (perf writes them with the next
// ring-buffer flush); without, the stream ends inside a block, as one cut
// there does. It returns the number of SAMPLEs written (without finish,
// the last ones are lost).
func (s *Stream) BusyCompressed(rounds int, finish bool) (samples int) {
	rnd := rand.New(rand.NewPCG(36, 1))
	for range rounds {
		recs := NewRecords(s.Order)
		for range 8000 {
			recs.SampleAt(0xffffffffc0000000|rnd.Uint64()>>24, rnd.Uint64())
		}
		if !s.compressedCapped(recs.Bytes()) {
			panic("testkit: BusyCompressed's records fit one compressed record")
		}
		s.Record(perfdata.RecordFinishedRound, nil)
		samples += 8000
	}
	if finish {
		s.flushCompressed()
	}
	return samples
}

// CompressedBomb writes one COMPRESSED record whose payload decompresses
// to n bytes of FINISHED_ROUND records: a few KiB that claim hundreds of
// MiB.
func (s *Stream) CompressedBomb(n int64) { s.CompressedBombOf(perfdata.RecordFinishedRound, n) }

// CompressedBombOf is CompressedBomb of records of type t, a header alone
// each.
func (s *Stream) CompressedBombOf(t perfdata.RecordType, n int64) {
	round := make([]byte, 64<<10)
	for i := 0; i < len(round); i += perfdata.EventHeaderSize {
		perfdata.EventHeader{Type: t, Size: perfdata.EventHeaderSize}.Encode(round[i:], s.Order)
	}
	payload := s.compress(func(enc *zstd.Encoder) {
		for left := n; left > 0; left -= int64(len(round)) {
			enc.Write(round[:min(left, int64(len(round)))])
		}
	})
	s.compressedRecord(payload)
}

func (s *Stream) compress(write func(*zstd.Encoder)) []byte {
	if s.zenc == nil {
		opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1)}
		if s.ZstdWindow > 0 {
			opts = append(opts, zstd.WithWindowSize(s.ZstdWindow))
		}
		var err error
		if s.zenc, err = zstd.NewWriter(&s.zout, opts...); err != nil {
			panic(err)
		}
	}
	write(s.zenc)
	if err := s.zenc.Flush(); err != nil {
		panic(err)
	}
	payload := bytes.Clone(s.zout.Bytes())
	s.zout.Reset()
	return payload
}

func (s *Stream) compressedRecord(payload []byte) {
	if !s.Compressed2 {
		if perfdata.EventHeaderSize+len(payload) > perfdata.MaxRecordSize {
			panic(fmt.Sprintf("testkit: a compressed payload of %d bytes does not fit a record", len(payload)))
		}
		s.Record(perfdata.RecordCompressed, payload)
		return
	}
	// as perf's process_comp_header(): data_size, then the data padded
	// with zeros to a multiple of 8
	size := (16 + len(payload) + 7) &^ 7
	if size > perfdata.MaxRecordSize {
		panic(fmt.Sprintf("testkit: a compressed payload of %d bytes does not fit a record", len(payload)))
	}
	body := make([]byte, size-perfdata.EventHeaderSize)
	s.Order.PutUint64(body, uint64(len(payload)))
	copy(body[8:], payload)
	s.Record(perfdata.RecordCompressed2, body)
}

// CompressedFeature is the HEADER_COMPRESSED feature perf record -z
// writes (version, type zstd, level, ratio, mmap_len): perf reads no
// COMPRESSED record without it, and decompresses each into a buffer of
// mmap_len bytes (perf_session__process_compressed_event()).
func CompressedFeature(bo binary.ByteOrder) FileFeature {
	h := make([]byte, 20)
	for i, v := range []uint32{2, 1, 1, 10, 528384} { // perf's default mmap of 516 KiB and a page
		bo.PutUint32(h[4*i:], v)
	}
	return FileFeature{Bit: perfdata.FeatCompressed, Head: h, Size: int64(len(h))}
}

// WriteBuildIDs writes HEADER_BUILD_ID records of about 4 KiB each (a
// long file name) to w until about n bytes are written: the records a pipe
// recording of a machine with many binaries starts with.
func WriteBuildIDs(w io.Writer, bo binary.ByteOrder, n int64) error {
	const nameLen = 4096 - 8 - 4 - 24
	rec := make([]byte, 4096)
	perfdata.EventHeader{Type: perfdata.RecordHeaderBuildID, Size: uint16(len(rec))}.Encode(rec, bo)
	bo.PutUint32(rec[8:], ^uint32(0)) // pid -1: the kernel
	rec[12+20] = 20                   // build ID size
	for i := 36; i < 36+nameLen-1; i++ {
		rec[i] = 'a' + byte(i%26)
	}
	for written := int64(0); written < n; written += int64(len(rec)) {
		rec[12]++ // build IDs differ
		if _, err := w.Write(rec); err != nil {
			return err
		}
	}
	return nil
}

// FileFeature is a feature section of a file WriteFile makes: Head, then
// zeros up to Size bytes (sparse on disk).
type FileFeature struct {
	Bit  perfdata.Feature
	Head []byte
	Size int64
}

// WriteFile writes a file-mode recording with one attr (StreamAttr, no
// ids), the data section records (a NewRecords sequence), and the feature
// sections in feats (in ascending order of Bit).
func WriteFile(path string, bo binary.ByteOrder, records []byte, feats []FileFeature) error {
	const attrEntry = 128 + perfdata.SectionSize
	h := perfdata.FileHeader{
		Magic:    perfdata.PipeMagic(bo),
		Size:     perfdata.FileHeaderSize,
		AttrSize: attrEntry,
		Attrs:    perfdata.Section{Offset: perfdata.FileHeaderSize, Size: attrEntry},
	}
	h.Data = perfdata.Section{Offset: h.Attrs.End(), Size: uint64(len(records))}
	for _, f := range feats {
		h.Features[f.Bit/64] |= 1 << (f.Bit % 64)
	}
	head := make([]byte, h.Data.Offset)
	h.Encode(head, bo)
	copy(head[h.Attrs.Offset:], StreamAttr(bo))

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	table := make([]byte, len(feats)*perfdata.SectionSize)
	off := int64(h.Data.End()) + int64(len(table))
	for i, ft := range feats {
		off = (off + 7) &^ 7
		perfdata.EncodeSection(table[i*perfdata.SectionSize:], bo, perfdata.Section{Offset: uint64(off), Size: uint64(ft.Size)})
		if _, err := f.WriteAt(ft.Head, off); err != nil {
			return err
		}
		off += ft.Size
	}
	for _, w := range []struct {
		b   []byte
		off int64
	}{{head, 0}, {records, int64(h.Data.Offset)}, {table, int64(h.Data.End())}} {
		if _, err := f.WriteAt(w.b, w.off); err != nil {
			return err
		}
	}
	if err := f.Truncate(off); err != nil {
		return err
	}
	return f.Close()
}

// CutTracingData is a pipe stream (with no HEADER_ATTR) of one
// HEADER_TRACING_DATA record at 0x10 that announces size bytes of trace
// data and ends after have of them.
func CutTracingData(bo binary.ByteOrder, size uint32, have int) []byte {
	s := NewRecords(bo)
	s.Write(perfdata.PipeHeader(bo))
	body := make([]byte, 8) // u32 size, padding
	bo.PutUint32(body, size)
	s.Record(perfdata.RecordHeaderTracingData, body)
	s.Write(make([]byte, have))
	return s.Bytes()
}

// TracingData returns the start of trace data as perf's
// tracing_data_get() writes it (version 0.6, little-endian, no event
// formats) whose one ftrace format file is formatLen bytes long: the
// section is len(head)+formatLen+16 bytes, and the format file zeros.
// The kallsyms, printk and cmdline sizes that follow the format file are
// zeros, which is what FileFeature's zero fill gives.
func TracingData(formatLen int64) (head []byte, size int64) {
	var b bytes.Buffer
	b.WriteString("\x17\x08Dtracing0.6\x00")
	b.WriteByte(0)                                           // little-endian
	b.WriteByte(8)                                           // sizeof(long)
	binary.Write(&b, binary.LittleEndian, uint32(4096))      // page size
	b.WriteString("header_page\x00")                         //
	binary.Write(&b, binary.LittleEndian, uint64(0))         //
	b.WriteString("header_event\x00")                        //
	binary.Write(&b, binary.LittleEndian, uint64(0))         //
	binary.Write(&b, binary.LittleEndian, uint32(1))         // one ftrace format file
	binary.Write(&b, binary.LittleEndian, uint64(formatLen)) // of formatLen bytes
	// then: the file, u32 systems, u32 kallsyms, u32 printk, u64 cmdlines
	return b.Bytes(), int64(b.Len()) + formatLen + 4 + 4 + 4 + 8
}
