package testkit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RecordMode is how a test records: into a file or a pipe stream, with or
// without -z. Pipe-mode streams are written to the output file as they come.
type RecordMode string

const (
	RecordFile     RecordMode = "file"
	RecordPipe     RecordMode = "pipe"
	recordZstd     RecordMode = "zstd"
	RecordPipeZstd RecordMode = "pipe-zstd"
)

// RecordModes lists every mode.
var RecordModes = []RecordMode{RecordFile, RecordPipe, recordZstd, RecordPipeZstd}

// Pipe reports whether the mode records a pipe stream.
func (m RecordMode) Pipe() bool { return strings.HasPrefix(string(m), "pipe") }

// compressed reports whether the mode records with -z.
func (m RecordMode) compressed() bool { return strings.HasSuffix(string(m), "zstd") }

// RecordTimeout bounds a recording's start and end.
const RecordTimeout = 90 * time.Second

// PerfRun is a running `perf record`. Its workload, a shell, creates a file
// once perf records (perf enables its events, and starts the side-band thread
// that reads programs loaded while recording, before it starts the
// workload), then runs the test's shell command, or waits until Stop.
type PerfRun struct {
	Perf, Out   string
	Mode        RecordMode
	ready, done string
	cmd         *exec.Cmd
	log         bytes.Buffer
	waitErr     error
	waitedC     chan struct{}
}

// PerfOptions say how to record.
type PerfOptions struct {
	Mode RecordMode // RecordFile when empty
	// SystemWide records every CPU (-a) instead of the workload's tasks.
	SystemWide bool
	// Workload is a shell command perf's workload runs once recording; when
	// it is empty, the workload waits until Stop.
	Workload string
	// Args are more arguments for perf record.
	Args []string
}

// StartPerf starts `perf record -N -B [-a] [-z] ARGS -o OUT -- sh -c ...`.
// -N -B: no build-id cache or pass (perf 6.1 aborts in its build-id pass when
// it meets a newer perf's libraries, and build ids play no part here).
func StartPerf(t testing.TB, perf, out string, o PerfOptions) *PerfRun {
	t.Helper()
	if o.Mode == "" {
		o.Mode = RecordFile
	}
	r := &PerfRun{Perf: perf, Out: out, Mode: o.Mode, ready: out + ".ready", done: out + ".done",
		waitedC: make(chan struct{})}
	script := fmt.Sprintf("touch '%s'; while [ ! -e '%s' ]; do sleep 0.02; done", r.ready, r.done)
	if o.Workload != "" {
		script = fmt.Sprintf("touch '%s'; %s", r.ready, o.Workload)
	}
	args := []string{"record", "-N", "-B"}
	if o.SystemWide {
		args = append(args, "-a")
	}
	if o.Mode.compressed() {
		args = append(args, "-z")
	}
	args = append(args, o.Args...)
	if o.Mode.Pipe() {
		args = append(args, "-o", "-")
	} else {
		args = append(args, "-o", out)
	}
	args = append(args, "--", "sh", "-c", script)
	r.cmd = exec.Command(perf, args...)
	r.cmd.Stderr = &r.log
	if o.Mode.Pipe() {
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close() // perf has its own descriptor
		r.cmd.Stdout = f
	} else {
		r.cmd.Stdout = &r.log
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("%s record: %v", perf, err)
	}
	go func() {
		r.waitErr = r.cmd.Wait()
		close(r.waitedC)
	}()
	t.Cleanup(func() {
		os.WriteFile(r.done, nil, 0o644)
		select {
		case <-r.waitedC:
		case <-time.After(RecordTimeout):
			r.cmd.Process.Kill()
			<-r.waitedC
		}
		os.Remove(r.ready)
		os.Remove(r.done)
	})
	return r
}

// args are perf's arguments.
func (r *PerfRun) args() []string { return r.cmd.Args[1:] }

// WaitReady waits until perf records (its workload has started).
func (r *PerfRun) WaitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(RecordTimeout)
	for {
		if _, err := os.Stat(r.ready); err == nil {
			return
		}
		select {
		case <-r.waitedC:
			t.Fatalf("%s record ended before its workload started: %v\n%s", r.Perf, r.waitErr, r.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s record did not start its workload within %v:\n%s", r.Perf, RecordTimeout, r.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop ends a waiting workload and waits for perf to finish the recording.
func (r *PerfRun) Stop(t testing.TB) {
	t.Helper()
	if err := os.WriteFile(r.done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.Wait(t)
}

// Wait waits for perf to finish the recording.
func (r *PerfRun) Wait(t testing.TB) {
	t.Helper()
	select {
	case <-r.waitedC:
	case <-time.After(RecordTimeout):
		r.cmd.Process.Kill()
		<-r.waitedC
		t.Fatalf("%s record did not finish within %v:\n%s", r.Perf, RecordTimeout, r.log.String())
	}
	if r.waitErr != nil {
		t.Fatalf("%s %s: %v\n%s", r.Perf, strings.Join(r.args(), " "), r.waitErr, r.log.String())
	}
}

// Log is what perf printed (and, for a file, wrote to stdout).
func (r *PerfRun) Log() string { return r.log.String() }

// TempPath returns a path for a new file in a directory of the test that
// perf, running as another program, can write.
func TempPath(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(t.TempDir(), name)
}

// Kill ends perf record with SIGKILL, as a crash or the OOM killer would,
// and waits for it: it leaves its output unfinished.
func (r *PerfRun) Kill(t testing.TB) {
	t.Helper()
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatalf("killing %s record: %v", r.Perf, err)
	}
	// its workload outlives it, holding its stderr: end it too
	os.WriteFile(r.done, nil, 0o644)
	<-r.waitedC
}

// Signal sends perf record sig (SIGUSR2: --switch-output starts a new file).
func (r *PerfRun) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signalling %s record: %v", r.Perf, err)
	}
}
