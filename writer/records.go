package writer

import (
	"errors"
	"fmt"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/recrun"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Records is a recording read one record at a time, as Copy reads it
// (perfdata.Records). *reader.Reader is one.
type Records = perfdata.Records

// WriteError is an error of the output, as opposed to one of the input
// (outfile.WriteError, where bpfprog/watch finds it too).
type WriteError = outfile.WriteError

// InputError is an error of the input the writer finds as it writes: a
// header section it reads (ids, features, trace data) that ends early or
// holds what no output can, in the words of its offset in the input.
// New returns one as it is; Blame does not make it a *WriteError.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// inputError is an *InputError of a message and its arguments.
func inputError(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}

// Blame is the error of a WriteRecord of a record read from in that
// failed with err: in's own error if reading in failed meanwhile (the
// data a record carries after its header, AUX or trace data, is read
// while the record is written, and may end early), err itself if it is
// an *InputError, else err as a *WriteError.
func Blame(in Records, err error) error {
	if rerr := in.Err(); rerr != nil {
		return rerr
	}
	if ie := (*InputError)(nil); errors.As(err, &ie) {
		return err
	}
	return &WriteError{Err: err}
}

// Copy writes the records of r to w as they come, all of them or, with
// keep, those keep keeps, and returns how many keep left out. An error
// reading r is returned as r.Err returns it; one writing, as a
// *WriteError (Blame). The caller closes w, as after WriteRecord.
func Copy(w *Writer, r Records, keep func(*perfdata.Record) bool) (dropped int, err error) {
	var runs recrun.Source
	if keep == nil { // else keep is asked of every record
		runs = recrun.SourceOf(r)
	}
	for {
		if runs != nil {
			if err := copyRun(w, runs); err != nil {
				return dropped, Blame(r, err)
			}
		}
		if !r.Next() {
			break
		}
		rec := r.Record()
		if keep != nil && !keep(rec) {
			dropped++
			continue
		}
		if err := w.WriteRecord(rec); err != nil {
			return dropped, Blame(r, err)
		}
	}
	return dropped, r.Err()
}

// copyRun writes the run of records at r's position (a *reader.Reader
// hands out runs), as Copy does each of them, in one call of WriteRun.
func copyRun(w *Writer, r recrun.Source) error {
	u := r.Run()
	for {
		h, ok := u.Peek()
		if !ok {
			break
		}
		u.Take(h)
	}
	if u.Len() == 0 {
		return nil
	}
	r.Pass(u)
	return (*runSink)(w).WriteRun(u)
}
