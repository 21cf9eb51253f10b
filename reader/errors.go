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
	// ErrEmpty: the input is empty (0 bytes), as a perf record that
	// failed leaves its output.
	ErrEmpty = errors.New("empty")
	// ErrUnfinished: a file-mode header whose data size is 0, with records
	// where the feature table should be: perf record writes the data size
	// and the feature sections when it ends, so it was killed (SIGKILL) or
	// is still running.
	ErrUnfinished = errors.New("unfinished")
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
	// File is the file of a directory recording the offsets are in
	// ("data", "data.N"); "" for a single-file recording.
	File string
}

func (e *FormatError) Error() string {
	file := ""
	if e.File != "" {
		file = e.File + ": "
	}
	if e.Outer >= 0 {
		return fmt.Sprintf("%s%s at decompressed offset %#x (data of the compressed record at %#x)", file, e.Msg, e.Offset, e.Outer)
	}
	return fmt.Sprintf("%s%s at %#x", file, e.Msg, e.Offset)
}

func (e *FormatError) Unwrap() error { return e.Err }

func truncated(off int64, format string, args ...any) error {
	return &FormatError{Offset: off, Outer: -1, Msg: fmt.Sprintf(format, args...), Err: ErrTruncated}
}

func corrupt(off int64, format string, args ...any) error {
	return &FormatError{Offset: off, Outer: -1, Msg: fmt.Sprintf(format, args...), Err: ErrCorrupt}
}

// empty is the error for an input of no bytes at all.
func empty() error {
	return &FormatError{Offset: 0, Outer: -1, Msg: "empty input (0 bytes)", Err: ErrEmpty}
}

// dataSizeField is the offset of a file header's data.size.
const dataSizeField = 48

// unfinished is the error for a file-mode recording perf record did not
// finish: perf_session__read_header() warns "The FILE file's data size
// field is 0 which is unexpected. Was the 'perf record' command properly
// terminated?", and perf then reads none of its records.
func unfinished() error {
	return &FormatError{Offset: dataSizeField, Outer: -1, Msg: "the data size field is 0", Err: ErrUnfinished}
}
