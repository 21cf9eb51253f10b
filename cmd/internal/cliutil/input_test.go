package cliutil

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/recrun"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestInputHandsOutRuns: an Input, as the commands hand it to inject.Run
// and writer.Copy, passes its records on a run at a time, as the reader it
// embeds does (a wrapper that hid the runs would make inject take 2-3x
// the user time: every record by Next).
func TestInputHandsOutRuns(t *testing.T) {
	r, err := reader.Open(testkit.CorpusFile(t, "mstange_perf6.16_x86_64_sleep.data"), reader.Options{Decompress: true})
	if err != nil {
		t.Fatal(err)
	}
	in := &Input{Reader: r, Name: "sleep.data"}
	defer in.Close()
	runs := recrun.SourceOf(in)
	if runs == nil {
		t.Fatal("an Input hands out no runs")
	}
	passed := 0
	for {
		u := runs.Run()
		for {
			h, ok := u.Peek()
			if !ok {
				break
			}
			u.Take(h)
		}
		runs.Pass(u)
		passed += u.Len()
		if !in.Next() {
			break
		}
	}
	if err := in.Err(); err != nil {
		t.Fatal(err)
	}
	if c := in.Counts(); passed == 0 || passed*2 < int(c.Records) {
		t.Errorf("%d of %d records passed in runs", passed, c.Records)
	}
}

// TestOpenInputMessages: what -i names that is no recording is said as
// the commands say it (a snapshot is told from other text in a regular
// file only, not in a FIFO or on stdin), and what is one is opened as its
// kind (Dir, File).
func TestOpenInputMessages(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const snapshot = `{"format_version":1,"kind":"snapshot"}` + "\n"
	const text = "hello, this is a text file, no recording\n"
	fifo := filepath.Join(tmp, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Write([]byte(snapshot))
			w.Close()
		}
	}()
	noData := filepath.Join(tmp, "nodata")
	textData := filepath.Join(tmp, "textdata")
	for _, d := range []string{noData, textData} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write("textdata/data", text)
	threads := testkit.ThreadsDir(testkit.ThreadsNames(t)[0])
	notRecording := " is not a perf.data recording (it does not start with perf's magic number)"
	for _, c := range []struct {
		path, want string
	}{
		{filepath.Join(tmp, "missing"), ": no such file or directory"},
		{write("empty", ""), " is empty (0 bytes): no recording in it, nothing to do"},
		{write("text", text), notRecording},
		{write("snap", snapshot), " is a bpfmeta snapshot, not a recording (inject reads one with --snapshot FILE)"},
		{fifo, notRecording},
		{noData, " is a directory with no file named data: not a recording, nor a directory recording (perf record --threads writes data and data.N)"},
		{textData, ": data: no perf.data magic number (PERFILE2, 2ELIFREP or PERFFILE) at 0x0"},
		{filepath.Join(threads, "data"), " is the data file of a directory recording (perf record --threads), whose records are in the data.N files beside it: read the directory with -i"},
	} {
		s := NewSession(strings.NewReader(""), io.Discard, io.Discard)
		in, err := s.OpenInput(c.path, true, reader.Options{})
		if err == nil {
			in.Close()
		}
		if want := safetext.Quote(c.path) + c.want; err == nil || err.Error() != want {
			t.Errorf("-i %s:\n got %v\nwant %s", c.path, err, want)
		}
	}

	s := NewSession(strings.NewReader(snapshot), io.Discard, io.Discard)
	if _, err := s.OpenInput("-", true, reader.Options{}); err == nil || err.Error() != "stdin: no perf.data magic number (PERFILE2, 2ELIFREP or PERFFILE) at 0x0" {
		t.Errorf("a snapshot on stdin: %v", err)
	}

	data, err := os.Open(filepath.Join(threads, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	for _, c := range []struct {
		what  string
		s     *Session
		path  string
		dir   string
		file  *os.File
		fname string
	}{
		{"a file", NewSession(nil, io.Discard, io.Discard), testkit.CorpusFile(t, "autofdo_perf5.6_x86_64_small.data"), "", nil, testkit.CorpusFile(t, "autofdo_perf5.6_x86_64_small.data")},
		{"a directory", NewSession(nil, io.Discard, io.Discard), threads, threads, nil, ""},
		{"a data file on stdin", NewSession(data, io.Discard, io.Discard), "-", "", data, ""},
	} {
		in, err := c.s.OpenInput(c.path, true, reader.Options{})
		if err != nil {
			t.Errorf("%s: %v", c.what, err)
			continue
		}
		if f := in.File(); in.Dir != c.dir || c.file != nil && f != c.file || c.fname != "" && (f == nil || f.Name() != c.fname) || c.file == nil && c.fname == "" && f != nil {
			t.Errorf("%s: Dir %q, File %v", c.what, in.Dir, f)
		}
		in.Close()
	}
}
