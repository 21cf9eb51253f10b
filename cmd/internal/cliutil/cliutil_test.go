package cliutil

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestRunStatus: Session.Run maps a command's error to the documented exit
// status, printing it once as "bpfmeta: ...".
func TestRunStatus(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		stderr string
	}{
		{nil, ExitOK, ""},
		{errors.New("no\x1b[2Jgood"), ExitFailure, "bpfmeta: no\\x1b[2Jgood\n"},
		{fmt.Errorf("wrapped: %w", Usagef("bad %s", "flag")), ExitUsage, "bpfmeta: wrapped: bad flag\n"},
		{ExitStatusError{Status: 7}, 7, ""},
		{ExitStatusError{Status: 127, Err: errors.New("cmd not found")}, 127, "bpfmeta: cmd not found\n"},
	} {
		var stdout, stderr bytes.Buffer
		s := NewSession(strings.NewReader(""), &stdout, &stderr)
		app := &cli.App{Name: "bpfmeta", ExitErrHandler: func(*cli.Context, error) {},
			Action: func(*cli.Context) error { return tc.err }}
		if got := s.Run(app, []string{"bpfmeta"}); got != tc.status || stderr.String() != tc.stderr {
			t.Errorf("%v: status %d, stderr %q; want %d, %q", tc.err, got, stderr.String(), tc.status, tc.stderr)
		}
	}
}

// A stream's progress counts bytes; Abort (a signal) and Done erase the
// line once drawn.
func TestProgress(t *testing.T) {
	var w bytes.Buffer
	off := int64(130 << 20)
	p := &Progress{W: &w, Prefix: "bpfmeta", Name: "stdin", Offset: func() int64 { return off }}
	p.Update() // starts the delay
	p.next = p.start
	p.Update()
	if got := w.String(); got != "\rbpfmeta: stdin: 130 MB read\033[K" {
		t.Errorf("stream progress %q", got)
	}
	w.Reset()
	p.Abort()
	p.Done()
	if got := w.String(); got != "\r\033[K" {
		t.Errorf("Abort and Done wrote %q, want the line erased once", got)
	}
	var zero Progress
	zero.Update()
	zero.Done()
	if zero.Active() {
		t.Errorf("the zero Progress is active")
	}
}
