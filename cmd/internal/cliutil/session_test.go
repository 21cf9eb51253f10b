package cliutil

import (
	"bytes"
	"testing"
	"time"
)

// The handlers are installed beside the start: what acts on them waits.
func TestHandlersInstalledBeforeUse(t *testing.T) {
	s := NewProcessSession()
	untrack := s.track(new(nopAborter))
	defer untrack()
	// track returned after the installing goroutine set the guard; under
	// -race a track that did not wait is a reported race besides.
	if s.guard == nil {
		t.Fatal("Track returned before the signal handlers were installed")
	}
}

type nopAborter struct{ _ byte }

func (*nopAborter) Abort() {}

func TestStreamsWaitForHandlers(t *testing.T) {
	ready := make(chan struct{})
	var out, errb bytes.Buffer
	streams := []struct {
		name string
		w    interface{ Write([]byte) (int, error) }
		buf  *bytes.Buffer
	}{
		{"stdout", &stdoutWriter{W: &out, ready: ready}, &out},
		{"stderr", &stderrWriter{W: &errb, ready: ready}, &errb},
	}
	done := make(chan string, len(streams))
	for _, s := range streams {
		go func() {
			s.w.Write([]byte("x"))
			done <- s.name
		}()
	}
	select {
	case name := <-done:
		t.Fatalf("a write to %s went through before SIGPIPE was handled", name)
	case <-time.After(50 * time.Millisecond):
	}
	close(ready)
	for range streams {
		<-done
	}
	for _, s := range streams {
		if s.buf.String() != "x" {
			t.Errorf("%s: wrote %q", s.name, s.buf.String())
		}
	}
}
