package reader

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// IsFileFormat reports whether head (at least 16 bytes) starts a
// file-format recording, which NewStream cannot read: its header says
// where its data ends only after the data was written, and its header
// sections follow the data.
func IsFileFormat(head []byte) bool {
	if len(head) < perfdata.PipeHeaderSize {
		return false
	}
	m, ok := perfdata.ParseMagic(head[:8], nil)
	if !ok {
		return string(head[:8]) == "PERFFILE" || string(head[:8]) == "ELIFFREP"
	}
	return m.Order.Uint64(head[8:]) != perfdata.PipeHeaderSize
}

// SpoolFile is where Spool copies a recording: it writes, then reads back
// the feature table.
type SpoolFile interface {
	io.Writer
	io.ReaderAt
}

// maxSpoolSlack is how many bytes after its last section a file-format
// recording on a stream may have: writers leave a few; a stream that goes
// on is not a recording of that header.
const maxSpoolSlack = 64 << 10

// Spool copies a file-format recording arriving on stream src (cat
// perf.data | ...) into dst, to be read with NewFile, and returns its size.
// It copies no more than the recording's header says there is: up to the
// end of its last section (the feature table, read back from dst, says
// where the features end), and at most 64 KiB after that. A header that
// claims more than limit bytes (the room dst has; 0 for no limit), or a
// stream that ends early or goes on, is an error.
func Spool(dst SpoolFile, src io.Reader, limit int64) (int64, error) {
	br := bufio.NewReaderSize(src, 64<<10)
	head, _ := br.Peek(perfdata.FileHeaderSize)
	m, ok := perfdata.ParseMagic(head, head[min(16, len(head)):min(24, len(head))])
	if !ok || len(head) < perfdata.FileHeaderSize {
		return 0, &FormatError{Offset: 0, Outer: -1, Msg: "no file-format header", Err: ErrNotPerfData}
	}
	h, err := perfdata.DecodeFileHeader(head, m.Order)
	if err != nil {
		return 0, corrupt(0, "%v", err)
	}
	const most = 1 << 62
	end := max(h.Attrs.End(), h.Data.End())
	if end < h.Attrs.Offset || end < h.Data.Offset || end > most {
		return 0, corrupt(0, "the header's sections end past 2^62 bytes")
	}
	tableEnd := h.Data.End() + uint64(h.NumFeatures())*perfdata.SectionSize
	if limit > 0 && max(end, tableEnd) > uint64(limit) {
		return 0, fmt.Errorf("the header says the recording is %d bytes, more than the %d there is room for", max(end, tableEnd), limit)
	}
	copied := int64(0)
	copyTo := func(to uint64) error {
		n, err := io.CopyN(dst, br, int64(to)-copied)
		copied += n
		switch {
		case errors.Is(err, io.EOF) && h.Data.Size == 0:
			return unfinished() // as readLayout says
		case errors.Is(err, io.EOF):
			// "... ends at 0x<to>; the stream ends at 0x<copied>"
			return truncated(copied, "its header says the recording ends at %#x; the stream ends", to)
		}
		return err
	}
	if err := copyTo(max(end, tableEnd)); err != nil {
		return copied, err
	}
	feats, err := featureSections(dst, &h, m.Order, copied)
	if err != nil {
		if h.Data.Size == 0 {
			return copied, unfinished() // as readLayout says
		}
		return copied, err
	}
	featEnd := uint64(0)
	for _, f := range feats {
		featEnd = max(featEnd, f.End())
	}
	if limit > 0 && featEnd > uint64(limit) {
		if h.Data.Size == 0 {
			return copied, unfinished() // as readLayout says
		}
		return copied, fmt.Errorf("the feature table says the recording is %d bytes, more than the %d there is room for", featEnd, limit)
	}
	if featEnd > uint64(copied) {
		if err := copyTo(featEnd); err != nil {
			return copied, err
		}
	}
	n, err := io.CopyN(dst, br, maxSpoolSlack+1)
	copied += n
	if err != nil && !errors.Is(err, io.EOF) {
		return copied, err
	}
	if n > maxSpoolSlack {
		return copied, corrupt(copied-n, "the stream goes on past the end of the last section its header names")
	}
	return copied, nil
}
