package reader

import (
	"errors"
	"fmt"
)

// Errors a FormatError can wrap, for errors.Is.
var (
	// ErrTruncated: the input ends before a record, section or header it
	// announces.
	ErrTruncated = errors.New("truncated")
	// ErrCorrupt: the input is not laid out as perf writes it.
	ErrCorrupt = errors.New("corrupt")
	// ErrNotPerfData: the input does not start with a perf.data magic number.
	ErrNotPerfData = errors.New("not a perf.data recording")
)

// FormatError is an error in the input, with where it is.
type FormatError struct {
	// Offset is the byte offset in the input the problem is at.
	Offset int64
	// Outer is the offset of the COMPRESSED/COMPRESSED2 record whose data
	// has the problem, or -1. When it is set, Offset is an offset into the
	// recording's decompressed stream.
	Outer int64
	Msg   string
	Err   error // ErrTruncated, ErrCorrupt or ErrNotPerfData
}

func (e *FormatError) Error() string {
	if e.Outer >= 0 {
		return fmt.Sprintf("%s at decompressed offset %#x (data of the compressed record at %#x)", e.Msg, e.Offset, e.Outer)
	}
	return fmt.Sprintf("%s at %#x", e.Msg, e.Offset)
}

func (e *FormatError) Unwrap() error { return e.Err }

func truncated(off int64, format string, args ...any) error {
	return &FormatError{Offset: off, Outer: -1, Msg: fmt.Sprintf(format, args...), Err: ErrTruncated}
}

func corrupt(off int64, format string, args ...any) error {
	return &FormatError{Offset: off, Outer: -1, Msg: fmt.Sprintf(format, args...), Err: ErrCorrupt}
}
