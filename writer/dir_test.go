package writer_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// TestDirIdentity: a directory recording copied record by record is the
// input, every file byte for byte, the empty ones too.
func TestDirIdentity(t *testing.T) {
	for _, name := range testkit.ThreadsNames(t) {
		t.Run(name, func(t *testing.T) {
			in := testkit.ThreadsDir(name)
			src := testkit.CopyDir(t, in)
			// an empty data file, which perf skips and a copy keeps
			if err := os.WriteFile(filepath.Join(src, "data.5"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			out := rectest.Rewrite(t, src, writer.Options{}, nil)
			testkit.SameDir(t, out, src)
			if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("the directory's mode: %v, %v", st.Mode(), err)
			}
			if st, err := os.Stat(filepath.Join(out, "data.0")); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("data.0's mode: %v, %v", st.Mode(), err)
			}
		})
	}
}

// TestDirInsert: records added after a record of data.N go into data.N;
// new records of Part 0 into data, after its records.
func TestDirInsert(t *testing.T) {
	in := testkit.ThreadsDir("perf6.1_x86_64_threads_bpf.data")
	marker := func(part int) *perfdata.Record {
		raw := make([]byte, 16)
		perfdata.EventHeader{Type: perfdata.RecordFinishedRound, Size: 16}.Encode(raw, le)
		raw[8] = byte(part)
		return &perfdata.Record{Offset: -1, Outer: -1, Header: perfdata.EventHeader{Type: perfdata.RecordFinishedRound, Size: 16}, Raw: raw, Part: part}
	}
	last := -1
	out := rectest.Rewrite(t, in, writer.Options{}, func(w *writer.Writer, rec *perfdata.Record) error {
		if err := w.WriteRecord(rec); err != nil {
			return err
		}
		if rec.Part != last { // after the first record of each file
			last = rec.Part
			if err := w.WriteRecord(marker(rec.Part)); err != nil {
				return err
			}
			return w.WriteRecord(marker(0))
		}
		return nil
	})
	r := rectest.Open(t, out, reader.Options{})
	var got []string
	first := map[int]bool{}
	for r.Next() {
		rec := r.Record()
		if rec.Header.Type == perfdata.RecordFinishedRound && len(rec.Raw) == 16 {
			got = append(got, r.PartName(rec.Part)+":"+string('0'+rec.Raw[8]))
		} else if !first[rec.Part] && rec.Offset != 0 && rec.Part > 0 {
			t.Errorf("%s starts with a record at %#x", r.PartName(rec.Part), rec.Offset)
		}
		first[rec.Part] = true
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"data:0", "data:0", "data:0", "data:0", "data.0:1", "data.1:2"}
	if !slices.Equal(got, want) {
		t.Errorf("the added records are in %q, want %q", got, want)
	}
}

// TestDirToOne: a directory recording as one file or stream has its
// records in reading order and no DIR_FORMAT feature (perf's
// process_dir_format() fails on it outside a directory); compressed
// records of several files (one zstd stream each) are refused.
func TestDirToOne(t *testing.T) {
	for _, name := range testkit.ThreadsNames(t) {
		for _, format := range []perfdata.Format{perfdata.FormatFile, perfdata.FormatPipe} {
			t.Run(name+"/"+format.String(), func(t *testing.T) {
				in := testkit.ThreadsDir(name)
				r := rectest.Open(t, in, reader.Options{Decompress: true})
				f, err := os.Create(filepath.Join(t.TempDir(), "out"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				w, err := writer.New(f, r, writer.Options{Format: format})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Abort()
				var want [][]byte
				for r.Next() {
					rec := r.Record()
					if err = w.WriteRecord(rec); err != nil {
						break
					}
					if !rec.Compressed() {
						want = append(want, bytes.Clone(rec.Raw))
					}
				}
				if err == nil {
					err = r.Err()
				}
				if err == nil {
					err = w.Close()
				}
				compressed := strings.Contains(name, "zstd")
				if compressed {
					if err == nil || !strings.Contains(err.Error(), "two zstd streams") {
						t.Fatalf("compressed records of several files: error %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				back := rectest.Open(t, f.Name(), reader.Options{})
				if l := back.Layout(); l != nil {
					if _, ok := l.Feature(perfdata.FeatDirFormat); ok {
						t.Error("the file has DIR_FORMAT")
					}
					if len(l.Features)+1 != len(r.Layout().Features) {
						t.Errorf("%d features, the input's data %d", len(l.Features), len(r.Layout().Features))
					}
				}
				i := 0
				for back.Next() {
					rec := back.Record()
					switch rt := rec.Header.Type; {
					case format == perfdata.FormatPipe && (rt == perfdata.RecordHeaderAttr || rt == perfdata.RecordHeaderFeature || rt == perfdata.RecordHeaderBuildID && i == 0):
						if rt == perfdata.RecordHeaderFeature && perfdata.Feature(le.Uint64(rec.Raw[8:])) == perfdata.FeatDirFormat {
							t.Error("the stream has a DIR_FORMAT HEADER_FEATURE")
						}
					case i >= len(want) || !bytes.Equal(rec.Raw, want[i]):
						t.Fatalf("record %d (%v at %#x) is not the input's", i, rt, rec.Offset)
					default:
						i++
					}
				}
				if err := back.Err(); err != nil {
					t.Fatal(err)
				}
				if i != len(want) {
					t.Errorf("%d records, want %d", i, len(want))
				}
			})
		}
	}
}

var le = binary.LittleEndian

// TestPipeDirFormatToFile: a stream that has a DIR_FORMAT HEADER_FEATURE
// record (perf reads one) written as a file leaves the feature out: with
// it, the file would be the data file of a directory recording, whose
// records are elsewhere, and no reader would take it as a recording.
func TestPipeDirFormatToFile(t *testing.T) {
	b := testkit.CorpusBytes(t, "quipper_perf4.16_x86_64_header_feature_records.pipe.data")
	bo := binary.LittleEndian
	feat := make([]byte, 24)
	perfdata.EventHeader{Type: perfdata.RecordHeaderFeature, Size: uint16(len(feat))}.Encode(feat, bo)
	bo.PutUint64(feat[8:], uint64(perfdata.FeatDirFormat))
	bo.PutUint64(feat[16:], 1) // the version
	in := filepath.Join(t.TempDir(), "in.pipe.data")
	stream := append(append(bytes.Clone(b[:perfdata.PipeHeaderSize]), feat...), b[perfdata.PipeHeaderSize:]...)
	if err := os.WriteFile(in, stream, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := rectest.Through(t, in, t.TempDir(), reader.Options{}, writer.Options{Format: perfdata.FormatFile}, func(r *reader.Reader, w *writer.Writer) error {
		return rectest.Copy(r, w, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	back := rectest.Open(t, out, reader.Options{})
	if _, ok := back.Layout().Feature(perfdata.FeatDirFormat); ok {
		t.Error("the file has DIR_FORMAT")
	}
	n := 0
	for back.Next() {
		n++
	}
	if err := back.Err(); err != nil || n == 0 {
		t.Errorf("the file: %d records, %v", n, err)
	}
}
