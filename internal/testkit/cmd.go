package testkit

import (
	"io"
	"os"
	"os/exec"
	"testing"
)

// Pipes returns pipes to cmd's standard input and from its standard
// output (exec.Cmd's StdinPipe and StdoutPipe), for a test that feeds a
// command and reads it as it runs; an error fails the test.
func Pipes(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	return in, out
}

// PipeOf returns the read end of a pipe that b is written to (then
// closed), closed when the test ends: a stdin that cannot seek.
func PipeOf(t testing.TB, b []byte) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	go func() {
		w.Write(b)
		w.Close()
	}()
	return r
}
