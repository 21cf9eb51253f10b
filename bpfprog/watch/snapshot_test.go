package watch

import (
	"errors"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
)

// TestStopError: a watch stopped by an error leaves a snapshot worth
// keeping (an incomplete snapshot inject reads) when it holds a program,
// and says how many; one that holds none is Stop's error as it is; no
// error is no error, whatever was written.
func TestStopError(t *testing.T) {
	kernel := errors.New("reading the events: EBADF")
	space := &outfile.WriteError{Err: errors.New("no space left on device")}
	for _, tc := range []struct {
		name    string
		err     error
		written int
		holds   string // "" if not an *IncompleteError
	}{
		{"no error, nothing written", nil, 0, ""},
		{"no error", nil, 12, ""},
		{"an error before any program", kernel, 0, ""},
		{"an error after one program", kernel, 1, "holds the 1 program read before (an incomplete snapshot)"},
		{"an error after programs", kernel, 3, "holds the 3 programs read before (an incomplete snapshot)"},
		{"the output full after programs", space, 2, "holds the 2 programs read before (an incomplete snapshot)"},
		{"the output full at once", space, 0, ""},
	} {
		err := stopError(tc.err, tc.written)
		if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
			continue
		}
		var inc *IncompleteError
		switch {
		case !errors.As(err, &inc) && tc.holds != "":
			t.Errorf("%s: %T, want an *IncompleteError", tc.name, err)
		case inc != nil && tc.holds == "":
			t.Errorf("%s: %q, want no *IncompleteError", tc.name, inc.Holds())
		case inc != nil && (inc.Holds() != tc.holds || inc.Programs != tc.written || err.Error() != tc.err.Error()):
			t.Errorf("%s: %q (%d programs), %q; want %q, %q", tc.name, inc.Holds(), inc.Programs, err, tc.holds, tc.err)
		}
		// the output's error is still told from the kernel's (cmd's -o message)
		var werr *outfile.WriteError
		if errors.As(err, &werr) != (tc.err == error(space)) {
			t.Errorf("%s: errors.As(WriteError) = %v", tc.name, !(tc.err == error(space)))
		}
	}
}
