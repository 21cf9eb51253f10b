package outfile

// WriteError is an error of the output, as opposed to one of the input:
// writer.Copy, inject.Run and bpfprog/watch's Snapshotter and journal
// return the input's (or the kernel's) errors as they are, and their
// output's wrapped in one, so that a caller knows which of the two to name
// (errors.As). writer.WriteError is this type.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }
