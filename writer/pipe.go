package writer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Pipe writes a pipe-mode recording: the 16-byte pipe header, then records.
// Like File, it writes in a goroutine, from its own buffers or, attached
// to the reader, from the reader's.
type Pipe struct {
	bw   *sink
	bo   byteOrder
	held bool
	// dialect is the writer of the file WritePrelude converted.
	dialect perfdata.Dialect
}

// NewPipe writes the pipe header for byte order bo to w and returns a
// writer for the records that follow.
func NewPipe(w io.Writer, bo binary.ByteOrder) (*Pipe, error) {
	p := &Pipe{bo: orderOf(bo)}
	p.bw = newSink(
		func(b []byte, _ int64) error { _, err := w.Write(b); return err },
		func(_, _, _ int64) error { return errors.New("writer: a pipe stream has no input file to copy from") },
		0)
	if _, err := p.bw.Write(perfdata.PipeHeader(bo)); err != nil {
		return nil, err
	}
	return p, nil
}

// Attach has r keep the bytes of the records it hands out until this
// writer has written them; see File.Attach.
func (p *Pipe) Attach(r Retainer) {
	p.held = true
	r.SetRetainer(p.bw.barrier)
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
	if p.held && rec.Offset >= 0 {
		p.bw.hold(rec.Raw)
		if rec.PayloadSize > 0 {
			// read now: the reader moves on past it
			if _, err := io.CopyN(p.bw, rec.Payload, rec.PayloadSize); err != nil {
				return fmt.Errorf("copying %d bytes of data after the %v record at %#x: %w", rec.PayloadSize, rec.Header.Type, rec.Offset, err)
			}
		}
		return p.bw.failed()
	}
	if _, err := p.bw.Write(rec.Raw); err != nil {
		return err
	}
	if rec.PayloadSize > 0 {
		if _, err := io.CopyN(p.bw, rec.Payload, rec.PayloadSize); err != nil {
			return fmt.Errorf("copying %d bytes of data after the %v record at %#x: %w", rec.PayloadSize, rec.Header.Type, rec.Offset, err)
		}
	}
	return p.bw.failed()
}

// WriteRaw writes bytes that are not a record, such as the trailing bytes a
// reader found after a pipe stream's last record.
func (p *Pipe) WriteRaw(b []byte) error {
	_, err := p.bw.Write(b)
	return err
}

// Abort implements RecordWriter.
func (p *Pipe) Abort() { p.bw.abort() }

// Close writes what is queued. It does not close the underlying writer.
func (p *Pipe) Close() error { return p.bw.close() }

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
