package writer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Pipe writes a pipe-mode recording: the 16-byte pipe header, then records.
type Pipe struct {
	bw *bufio.Writer
	bo byteOrder
	// dialect is the writer of the file WritePrelude converted.
	dialect perfdata.Dialect
}

// NewPipe writes the pipe header for byte order bo to w and returns a
// writer for the records that follow.
func NewPipe(w io.Writer, bo binary.ByteOrder) (*Pipe, error) {
	p := &Pipe{bw: bufio.NewWriterSize(w, writeBufSize), bo: orderOf(bo)}
	if _, err := p.bw.Write(perfdata.PipeHeader(bo)); err != nil {
		return nil, err
	}
	return p, nil
}

// WriteRecord implements RecordWriter.
func (p *Pipe) WriteRecord(rec *perfdata.Record) error {
	if rec.Outer >= 0 {
		return nil
	}
	if p.dialect == perfdata.DialectSimpleperf && rec.Header.Type == perfdata.RecordHeaderTracingData {
		// simpleperf keeps the trace data inside its record (header | u32
		// size | data, padded to 64); a stream frames it as perf does.
		if len(rec.Raw) < 12 {
			return fmt.Errorf("simpleperf TRACING_DATA record at %#x: %d bytes", rec.Offset, len(rec.Raw))
		}
		n := p.bo.Uint32(rec.Raw[8:])
		if uint64(n) > uint64(len(rec.Raw)-12) {
			return fmt.Errorf("simpleperf TRACING_DATA record at %#x: %d bytes of data in %d", rec.Offset, n, len(rec.Raw))
		}
		return p.tracingRecord(rec.Raw[12 : 12+n])
	}
	return writeRecord(p.bw, rec)
}

// WriteRaw writes bytes that are not a record, such as the trailing bytes a
// reader found after a pipe stream's last record.
func (p *Pipe) WriteRaw(b []byte) error {
	_, err := p.bw.Write(b)
	return err
}

// Close flushes the stream. It does not close the underlying writer.
func (p *Pipe) Close() error { return p.bw.Flush() }

// byteOrder is what binary.LittleEndian and binary.BigEndian both are.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func orderOf(bo binary.ByteOrder) byteOrder {
	if bo == binary.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}
