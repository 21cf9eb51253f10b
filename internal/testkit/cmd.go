package testkit

import (
	"io"
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
