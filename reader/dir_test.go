package reader_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestDirPerfCounts: the reader hands out every record perf 7.2 processes
// in a directory recording (perf record --threads, perf 6.1 and 7.2, plain
// and -z), as many of each type, and as many compressed records.
func TestDirPerfCounts(t *testing.T) {
	if *testkit.Update {
		testkit.PerfModern(t)
		testkit.Regen(t, testkit.ThreadsDir())
	}
	for _, name := range testkit.ThreadsNames(t) {
		t.Run(name, func(t *testing.T) {
			want := testkit.ReadCounts(t, testkit.ThreadsDir(name)+".counts")
			r := rectest.Open(t, testkit.ThreadsDir(name), reader.Options{Decompress: true})
			if !r.IsDirRecording() || len(r.DataFiles()) == 0 {
				t.Fatalf("not read as a directory recording: data files %v", r.DataFiles())
			}
			got, outer := countTypes(r)
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			for _, rt := range []perfdata.RecordType{perfdata.RecordCompressed, perfdata.RecordCompressed2} {
				if outer[rt] != want.Outer[rt] {
					t.Errorf("outer %v records: %d, %s counts %d", rt, outer[rt], want.Perf, want.Outer[rt])
				}
			}
			for rt, n := range got {
				if n != want.Types[rt] {
					t.Errorf("%v records: %d, %s counts %d", rt, n, want.Perf, want.Types[rt])
				}
			}
			for rt, n := range want.Types {
				if got[rt] == 0 {
					t.Errorf("%v records: none, %s counts %d", rt, want.Perf, n)
				}
			}
		})
	}
}

// TestDirParts: the records of a directory recording come file by file,
// data then data.N in ascending N, each file's top-level records covering
// it (data: its data section) from start to end with no gap; but for a
// recording synthesized at its tail, whose data's records from the
// FINISHED_INIT that starts the tail synthesis come after the data.N
// files', as perf wrote them.
func TestDirParts(t *testing.T) {
	for _, name := range testkit.ThreadsNames(t) {
		t.Run(name, func(t *testing.T) {
			r := rectest.Open(t, testkit.ThreadsDir(name), reader.Options{Decompress: true})
			ends := []int64{r.Layout().DataOffset()} // where the next record of each part starts
			for _, n := range r.DataFiles() {
				if r.PartName(len(ends)) != perfdata.DataFileName(n) {
					t.Fatalf("part %d is named %s", len(ends), r.PartName(len(ends)))
				}
				ends = append(ends, 0)
			}
			part, resumed := 0, false
			for r.Next() {
				rec := r.Record()
				if rec.Compressed() {
					continue
				}
				switch {
				case rec.Part == 0 && part == len(ends)-1 && part > 0 && !resumed && rec.Header.Type == perfdata.RecordFinishedInit:
					resumed = true // data's tail synthesis
				case rec.Part < part:
					t.Fatalf("a %v record of part %d after part %d", rec.Header.Type, rec.Part, part)
				}
				part = rec.Part
				if rec.Offset != ends[part] {
					t.Fatalf("%s: record at %#x, the last ended at %#x", r.PartName(part), rec.Offset, ends[part])
				}
				ends[part] += int64(len(rec.Raw)) + rec.PayloadSize
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if want := strings.Contains(name, "_tail"); resumed != want {
				t.Errorf("data's tail synthesis handed out after the data files: %v, want %v", resumed, want)
			}
			if ends[0] != r.Layout().DataEnd() {
				t.Errorf("data: the records end at %#x, the data section at %#x", ends[0], r.Layout().DataEnd())
			}
			for i, n := range r.DataFiles() {
				st, err := os.Stat(filepath.Join(testkit.ThreadsDir(name), perfdata.DataFileName(n)))
				if err != nil {
					t.Fatal(err)
				}
				if ends[i+1] != st.Size() {
					t.Errorf("%s: the records end at %#x, the file at %#x", perfdata.DataFileName(n), ends[i+1], st.Size())
				}
			}
		})
	}
}

// readDirAll reads the recording at path to its end, in at most 10 s (a FIFO
// must not make it wait), and returns the error that stopped it.
func readDirAll(t *testing.T, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		r, err := reader.Open(path, reader.Options{Decompress: true})
		if err != nil {
			done <- err
			return
		}
		defer r.Close()
		for r.Next() {
		}
		done <- r.Err()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: reading it hangs", path)
		return nil
	}
}

// TestDirHostile: directories perf would not have written get an error
// naming the file, and nothing hangs.
func TestDirHostile(t *testing.T) {
	const base = "perf6.1_x86_64_threads_bpf.data"
	single := testkit.CorpusFile(t, "mstange_perf6.16_x86_64_sleep.data")
	for _, c := range []struct {
		name string
		make func(t *testing.T, dir string)
		want string // in the error
		is   error
	}{
		{"symlinked data.N", func(t *testing.T, dir string) {
			must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "data.2")))
		}, `data.2: a symlink`, nil},
		{"symlink to a data file", func(t *testing.T, dir string) {
			must(t, os.Rename(filepath.Join(dir, "data.1"), filepath.Join(dir, "other")))
			must(t, os.Symlink("other", filepath.Join(dir, "data.1")))
		}, `data.1: a symlink`, nil},
		{"symlinked data", func(t *testing.T, dir string) {
			must(t, os.Rename(filepath.Join(dir, "data"), filepath.Join(dir, "other")))
			must(t, os.Symlink("other", filepath.Join(dir, "data")))
		}, `data: a symlink`, nil},
		{"FIFO data.N", func(t *testing.T, dir string) {
			must(t, syscall.Mkfifo(filepath.Join(dir, "data.7"), 0o600))
		}, `data.7: a FIFO`, nil},
		{"FIFO data", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "data")))
			must(t, syscall.Mkfifo(filepath.Join(dir, "data"), 0o600))
		}, `data: a FIFO`, nil},
		{"directory data.N", func(t *testing.T, dir string) {
			must(t, os.Mkdir(filepath.Join(dir, "data.3"), 0o700))
		}, `data.3: a directory`, nil},
		{"no data", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "data")))
		}, `no file named data`, reader.ErrNotPerfData},
		{"data of a single-file recording", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "data"), testkit.ReadFile(t, single), 0o600))
		}, `data: no DIR_FORMAT feature`, reader.ErrCorrupt},
		{"DIR_FORMAT version 2", func(t *testing.T, dir string) {
			setDirVersion(t, filepath.Join(dir, "data"), 2)
		}, `DIR_FORMAT version 2`, reader.ErrCorrupt},
		{"a name perf would read", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "data.old"), nil, 0o600))
		}, `data.old: not a data file perf writes`, nil},
		{"a leading zero", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "data.01"), nil, 0o600))
		}, `data.01: not a data file perf writes`, nil},
		{"a control character", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "data.\x1b[2J"), nil, 0o600))
		}, `data.\x1b[2J`, nil},
		{"cut data.N", func(t *testing.T, dir string) {
			must(t, os.Truncate(filepath.Join(dir, "data.1"), 100))
		}, `data.1: truncated FORK record: size 64, 36 bytes left at 0x40`, reader.ErrTruncated},
		{"garbage data.N", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "data.9"), make([]byte, 64), 0o600))
		}, `data.9: bad record size 0`, reader.ErrCorrupt},
		{"too many data files", func(t *testing.T, dir string) {
			t.Cleanup(reader.SetMaxDataFiles(3))
			for _, n := range []int{2, 3} {
				must(t, os.WriteFile(filepath.Join(dir, perfdata.DataFileName(n)), nil, 0o600))
			}
		}, `more than 3 data files`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testkit.CopyDir(t, testkit.ThreadsDir(base))
			c.make(t, dir)
			err := readDirAll(t, dir)
			if err == nil {
				t.Fatal("read without an error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to say %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q is not %v", err, c.is)
			}
			if strings.ContainsRune(err.Error(), 0x1b) {
				t.Errorf("error %q has a raw control character", err)
			}
		})
	}
}

// TestDirOpenFiles: the reader has at most one data file open, however
// many there are: 2,000 here (hard links to one), read in order.
func TestDirOpenFiles(t *testing.T) {
	dir := testkit.CopyDir(t, testkit.ThreadsDir("perf6.1_x86_64_threads_bpf.data"))
	const n = 2000
	for i := 2; i < n; i++ {
		must(t, os.Link(filepath.Join(dir, "data.1"), filepath.Join(dir, perfdata.DataFileName(i))))
	}
	before := testkit.OpenFDs(t)
	r := rectest.Open(t, dir, reader.Options{Decompress: true})
	most, part, records := 0, 0, 0
	for r.Next() {
		records++
		if p := r.Record().Part; p != part {
			if p != part+1 {
				t.Fatalf("part %d after %d", p, part)
			}
			part = p
			most = max(most, testkit.OpenFDs(t)-before)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if part != n {
		t.Errorf("read %d data files, want %d", part, n)
	}
	if most > 3 { // the directory, data, one data file
		t.Errorf("%d files open while reading", most)
	}
	t.Logf("%d records in %d files, at most %d open", records, n+1, most)
}

// TestDirZstdWindows: the data files of a directory recording are a zstd
// stream each, read with one decoder: a stream whose frame declares a 32
// MiB window costs that window once, not once a file (it took 45 ms and
// 32 MiB a file, 16 files adding up past 64 MiB).
func TestDirZstdWindows(t *testing.T) {
	dir := testkit.CopyDir(t, testkit.ThreadsDir("perf6.1_x86_64_threads_bpf.data"))
	bo := binary.LittleEndian
	round := make([]byte, perfdata.EventHeaderSize)
	perfdata.EventHeader{Type: perfdata.RecordFinishedRound, Size: perfdata.EventHeaderSize}.Encode(round, bo)
	// a frame of a 2^25-byte window that perf never ends: one raw block,
	// not the last, of one FINISHED_ROUND record
	payload := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 15 << 3}
	h := uint32(len(round)) << 3 // raw, not last
	payload = append(append(payload, byte(h), byte(h>>8), byte(h>>16)), round...)
	rec := make([]byte, perfdata.EventHeaderSize)
	perfdata.EventHeader{Type: perfdata.RecordCompressed, Size: uint16(len(rec) + len(payload))}.Encode(rec, bo)
	rec = append(rec, payload...)
	const files = 16
	for i := 2; i < 2+files; i++ {
		must(t, os.WriteFile(filepath.Join(dir, perfdata.DataFileName(i)), rec, 0o600))
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := rectest.Open(t, dir, reader.Options{Decompress: true})
	rounds := 0
	for r.Next() {
		if rec := r.Record(); rec.Part >= 2 && rec.Header.Type == perfdata.RecordFinishedRound {
			rounds++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	runtime.ReadMemStats(&after)
	if rounds != files {
		t.Errorf("%d records decompressed from %d data files, want one each", rounds, files)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 3*(32<<20) {
		t.Errorf("%d MiB allocated reading %d streams of a 32 MiB window, want one window's", got>>20, files)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// setDirVersion writes v as the DIR_FORMAT version of the data file at path.
func setDirVersion(t *testing.T, path string, v uint64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := reader.OpenFile(f, reader.Options{}) // Open refuses a data file
	if err != nil {
		t.Fatal(err)
	}
	s, ok := r.Layout().Feature(perfdata.FeatDirFormat)
	r.Close()
	if !ok {
		t.Fatal("no DIR_FORMAT")
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if _, err := f.WriteAt(b[:], int64(s.Offset)); err != nil {
		t.Fatal(err)
	}
}
