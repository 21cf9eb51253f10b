package writer_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/recrun"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// where is a record's place in a recording.
type where struct {
	off, outer int64
	part       int
}

// marker is a new record written after a record (FINISHED_ROUND, which
// every output takes as it is), into the same data file.
func marker(part int) *perfdata.Record {
	raw := make([]byte, perfdata.EventHeaderSize)
	h := perfdata.EventHeader{Type: perfdata.RecordFinishedRound, Size: perfdata.EventHeaderSize}
	h.Encode(raw, le)
	return &perfdata.Record{Offset: -1, Outer: -1, Header: h, Raw: raw, Part: part}
}

// copyInRuns writes r to w as inject does: runs of records (i%7 at a time
// for the i-th run) with WriteRun, the records between them with
// WriteRecord, each SAMPLE followed by a new record (not among a pipe
// stream's HEADER_ATTRs, which a file needs before its data); it returns
// where those are.
func copyInRuns(r *reader.Reader, w *writer.Writer) (map[where]bool, error) {
	marked := map[where]bool{}
	for i := 0; ; i++ {
		runs := recrun.SourceOf(r)
		u := runs.Run()
		for u.Len() < i%7 {
			h, ok := u.Peek()
			if !ok {
				break
			}
			u.Take(h)
		}
		runs.Pass(u)
		if err := recrun.SinkOf(w).WriteRun(u); err != nil {
			return nil, err
		}
		if !r.Next() {
			break
		}
		rec := r.Record()
		if err := w.WriteRecord(rec); err != nil {
			return nil, err
		}
		if !rec.Compressed() && rec.Header.Type == perfdata.RecordSample {
			marked[where{rec.Offset, rec.Outer, rec.Part}] = true
			if err := w.WriteRecord(marker(rec.Part)); err != nil {
				return nil, err
			}
		}
	}
	return marked, r.Err()
}

// copyMarked writes r to w a record at a time, with the new records
// copyInRuns added where it added them.
func copyMarked(r *reader.Reader, w *writer.Writer, marked map[where]bool) error {
	for r.Next() {
		rec := r.Record()
		if err := w.WriteRecord(rec); err != nil {
			return err
		}
		if marked[where{rec.Offset, rec.Outer, rec.Part}] {
			if err := w.WriteRecord(marker(rec.Part)); err != nil {
				return err
			}
		}
	}
	return r.Err()
}

// TestWriteRun: records written a run at a time (recrun.Sink.WriteRun), with
// new records between the runs, give the output that writing each of
// them with WriteRecord gives, byte for byte: every corpus recording and
// directory recording, into a file (or directory) in its format and as a
// pipe stream (or a file from a stream), from the reader's buffers or
// copied.
func TestWriteRun(t *testing.T) {
	ins := testkit.CorpusFiles(t)
	for _, name := range testkit.ThreadsNames(t) {
		ins = append(ins, testkit.ThreadsDir(name))
	}
	for _, in := range ins {
		for _, format := range []perfdata.Format{0, perfdata.FormatPipe, perfdata.FormatFile} {
			for _, attach := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%v/attach=%v", filepath.Base(in), format, attach), func(t *testing.T) {
					opts := optsFor(attach)
					opts.Format = format
					var marked map[where]bool
					dir := t.TempDir()
					through := func(run func(*reader.Reader, *writer.Writer) error) string {
						out, err := rectest.Through(t, in, dir, reader.Options{Decompress: true}, opts, run)
						switch {
						case err == nil:
						case strings.Contains(in, "CORRUPTED") && errors.Is(err, reader.ErrCorrupt):
							return ""
						case errors.Is(err, writer.ErrFileFormat), strings.Contains(err.Error(), "directory recording"),
							strings.Contains(err.Error(), "attrs before the data"): // a stream no file can hold
							t.Skip(err)
						default:
							t.Fatal(err)
						}
						return out
					}
					got := through(func(r *reader.Reader, w *writer.Writer) (err error) {
						marked, err = copyInRuns(r, w)
						return err
					})
					if got == "" {
						return
					}
					want := through(func(r *reader.Reader, w *writer.Writer) error { return copyMarked(r, w, marked) })
					if st, err := os.Stat(want); err == nil && st.IsDir() {
						testkit.SameDir(t, got, want)
					} else if a, b := testkit.ReadFile(t, got), testkit.ReadFile(t, want); !bytes.Equal(a, b) {
						t.Errorf("in runs: %s", testkit.FirstDiff(a, b))
					}
				})
			}
		}
	}
}

// TestWriteRunOneStream: a directory recording written as one pipe
// stream in runs is the stream written a record at a time.
func TestWriteRunOneStream(t *testing.T) {
	for _, name := range testkit.ThreadsNames(t) {
		t.Run(name, func(t *testing.T) {
			var marked map[where]bool
			write := func(run func(*reader.Reader, *writer.Writer) error) []byte {
				r := rectest.Open(t, testkit.ThreadsDir(name), reader.Options{Decompress: true})
				var out bytes.Buffer
				w, err := writer.New(&out, r, writer.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Abort()
				if err := run(r, w); err != nil {
					t.Skip(err) // two zstd streams: written only as a directory
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				return out.Bytes()
			}
			got := write(func(r *reader.Reader, w *writer.Writer) (err error) {
				marked, err = copyInRuns(r, w)
				return err
			})
			want := write(func(r *reader.Reader, w *writer.Writer) error { return copyMarked(r, w, marked) })
			if !bytes.Equal(got, want) {
				t.Errorf("in runs: %s", testkit.FirstDiff(got, want))
			}
		})
	}
}
