package reader

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// A directory recording is what perf record --threads writes: a directory
// with a file "data" (the header, attrs and features, with HEADER_DIR_FORMAT,
// and the records perf synthesized) and one file "data.N" per recording
// thread, each a bare stream of records (no header), as perf's
// perf_data__create_dir() makes them. The Reader reads one as a single
// record sequence: the data section of "data", then each data file whole,
// data.0, data.1, ... in ascending N. Records say which file they are in
// (Record.Part) and their offset in it.
//
// perf_data__open_dir() takes every regular file whose name starts with
// "data." in readdir order, and __perf_session__process_dir_events() reads
// them interleaved, 2 MiB at a time, to sort their records by time. bpfmeta
// sorts nothing: it reads one file at a time, in an order that does not
// depend on the file system, and has at most one data file open.

// ErrNoDataFile is Open's error for a directory without a file named
// data: no directory recording. It is an ErrNotPerfData.
var ErrNoDataFile = fmt.Errorf("no file named data: not a directory recording (perf record --threads writes data and data.N): %w", ErrNotPerfData)

// DirFormatVersion is the HEADER_DIR_FORMAT version perf writes and reads
// (PERF_DIR_VERSION).
const DirFormatVersion = 1

// MaxDataFiles bounds the data files of a directory recording: perf writes
// one per recording thread, at most one per CPU (the kernel's NR_CPUS is
// at most 8192).
const MaxDataFiles = 1 << 16

// maxDataFiles is MaxDataFiles, lowered by the tests.
var maxDataFiles = MaxDataFiles

// dirParts is the state of a directory recording's data files.
type dirParts struct {
	dir   *os.File // the directory, for openat: names are looked up in it only
	files []int    // the N of each data.N, ascending
	cur   *os.File // the data file being read (part > 0)
	// others are the first names of what else the directory holds (perf
	// record --kcore's kcore_dir), nOthers how many there are
	others  []string
	nOthers int
	// tail is the offset of data's FINISHED_INIT when it starts the tail
	// synthesis (perf record --tail-synthesize --threads, or --overwrite
	// --threads), else -1; resumed says data is read again from it, after
	// the data files (tailCut); synthesized, that data has records perf
	// synthesized at the start before it; workload counts the records perf
	// writes for its workload whatever it synthesizes.
	tail                 int64
	resumed, synthesized bool
	workload             int
}

// IsDirRecording reports whether the recording was read from a directory.
func (r *Reader) IsDirRecording() bool { return r.dir != nil }

// DataFiles returns the N of each data.N file of a directory recording, in
// the order they are read (Record.Part i is DataFiles()[i-1]); nil for a
// single file.
func (r *Reader) DataFiles() []int {
	if r.dir == nil {
		return nil
	}
	return r.dir.files
}

// PartName is the name of file part of a directory recording ("data", or
// "data.N"), or "" for a single file.
func (r *Reader) PartName(part int) string {
	switch {
	case r.dir == nil:
		return ""
	case part == 0:
		return "data"
	}
	return perfdata.DataFileName(r.dir.files[part-1])
}

// MissingDataFiles returns the N of the data.N files a directory recording
// lacks (the first few) and how many it lacks: perf record --threads
// writes data.0 to data.(threads-1), and perf_data__open_dir() reads
// whatever is there, so a gap is a recording thread's records lost,
// without a word from perf. Which files follow the last one, the recording
// does not say.
func (r *Reader) MissingDataFiles() (first []int, n int) {
	if r.dir == nil {
		return nil, 0
	}
	next := 0
	for _, f := range r.dir.files {
		for ; next < f; next++ {
			if n++; len(first) < maxOthers {
				first = append(first, next)
			}
		}
		next = f + 1
	}
	return first, n
}

// maxOthers is how many names of other entries a directory recording's
// reader keeps.
const maxOthers = 8

// Others returns the names of the entries of a directory recording that
// are neither data nor data.N (the first few, quoted for messages), and
// how many there are: perf record --kcore's kcore_dir, say. The reader
// does not read them.
func (r *Reader) Others() (names []string, n int) {
	if r.dir == nil {
		return nil, 0
	}
	return r.dir.others, r.dir.nOthers
}

// OpenPart returns a new handle on the data file the records handed out now
// are in (a directory recording's part > 0), for a writer that copies from
// it after the reader moved on; the caller closes it.
func (r *Reader) OpenPart() (*os.File, error) {
	if r.dir == nil || r.dir.cur == nil {
		return nil, errors.New("reader: no data file is being read")
	}
	fd, err := unix.Dup(int(r.dir.cur.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), r.dir.cur.Name()), nil
}

// openDir reads the directory recording dir (perf record --threads;
// Open). Its files must be regular files, not symlinks; names in it
// that start with "data." must be data.N (perf would read any of them).
// Closing the Reader closes dir and what it opened; on an error, the caller
// closes dir.
func openDir(dir *os.File, opts Options) (*Reader, error) {
	data, size, err := openRegular(dir, "data")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNoDataFile
		}
		return nil, err
	}
	r, err := NewFile(data, size, opts)
	if err == nil && r.form.format != perfdata.FormatFile {
		err = corrupt(0, "a pipe-mode recording: a directory recording's data file has a file header")
	}
	if err == nil {
		err = checkDirFormat(r)
	}
	if err != nil {
		data.Close()
		return nil, partError("data", err)
	}
	r.files = append(r.files, data)
	r.dir = &dirParts{dir: dir, tail: -1}
	if err := r.dir.list(); err != nil {
		r.dir = nil
		r.Close()
		return nil, err
	}
	return r, nil
}

// checkDirFormat checks the HEADER_DIR_FORMAT feature perf reads the
// directory's layout version from (process_dir_format(); perf_data__open_dir()
// refuses any version but PERF_DIR_VERSION).
func checkDirFormat(r *Reader) error {
	s, ok := r.form.layout.Feature(perfdata.FeatDirFormat)
	if !ok {
		return corrupt(0, "no DIR_FORMAT feature: not the data file of a directory recording")
	}
	if s.Size < 8 {
		return corrupt(s.TableOffset, "DIR_FORMAT feature of %d bytes", s.Size)
	}
	var b [8]byte
	if _, err := r.form.src.ReadAt(b[:], int64(s.Offset)); err != nil {
		return truncated(int64(s.Offset), "DIR_FORMAT feature: %v", err)
	}
	if v := r.form.order.Uint64(b[:]); v != DirFormatVersion {
		return corrupt(int64(s.Offset), "DIR_FORMAT version %d (perf reads version %d)", v, DirFormatVersion)
	}
	return nil
}

// list lists the data.N files of the directory, in ascending N, a batch
// of names at a time, and counts what else it holds. Anything perf would
// read as a data file must be one.
func (d *dirParts) list() error {
	dir := d.dir
	var files []int
	for {
		ents, err := dir.ReadDir(1024)
		for _, e := range ents {
			name := e.Name()
			if !strings.HasPrefix(name, "data.") {
				if name != "data" {
					if d.nOthers++; len(d.others) < maxOthers {
						d.others = append(d.others, quoteName(name))
					}
				}
				continue
			}
			n, err := strconv.Atoi(name[len("data."):])
			if err != nil || n < 0 || perfdata.DataFileName(n) != name {
				return fmt.Errorf("%s: not a data file perf writes (data.N), which perf would read as one", quoteName(name))
			}
			if e.Type() != 0 {
				return notRegular(name, e.Type())
			}
			if len(files) == maxDataFiles {
				return fmt.Errorf("more than %d data files (perf writes one a recording thread, at most one a CPU)", maxDataFiles)
			}
			files = append(files, n)
		}
		if err == io.EOF || len(ents) == 0 && err == nil {
			break
		}
		if err != nil {
			return err
		}
	}
	slices.Sort(files)
	d.files = files
	return nil
}

// openRegular opens name in dir for reading, if it is a regular file: not a
// symlink (O_NOFOLLOW), and not a FIFO or device, which O_NONBLOCK keeps
// the open from waiting on.
func openRegular(dir *os.File, name string) (f *os.File, size int64, err error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP {
		return nil, 0, notRegular(name, fs.ModeSymlink)
	}
	if err != nil {
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f = os.NewFile(uintptr(fd), name)
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = notRegular(name, st.Mode().Type())
	}
	if err == nil {
		// back to blocking reads: os.File would otherwise poll a regular file
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

func notRegular(name string, t fs.FileMode) error {
	what := "not a regular file"
	switch {
	case t&fs.ModeSymlink != 0:
		what = "a symlink, which bpfmeta does not follow in a directory recording"
	case t&fs.ModeNamedPipe != 0:
		what = "a FIFO, not a regular file"
	case t&fs.ModeDevice != 0:
		what = "a device, not a regular file"
	case t.IsDir():
		what = "a directory, not a regular file"
	}
	return fmt.Errorf("%s: %s", quoteName(name), what)
}

// quoteName quotes a name read from a directory for a message: it may hold
// anything.
func quoteName(name string) string { return safetext.Quote(name) }

// partError names the file of a directory recording an error is in.
func partError(name string, err error) error {
	var fe *FormatError
	if errors.As(err, &fe) && fe.File == "" {
		fe.File = name
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// nextPart moves to the next data file of a directory recording, if there
// is one: each is a record stream of its own, from offset 0 to its end,
// with its own zstd stream (perf compresses each thread's records apart).
func (r *Reader) nextPart() (bool, error) {
	d := r.dir
	if d != nil && r.part >= len(d.files) && d.tail >= 0 && !d.resumed {
		return true, r.resumeTail()
	}
	if d == nil || r.part >= len(d.files) || d.resumed {
		return false, nil
	}
	if err := r.finish(); err != nil {
		return false, err
	}
	r.z.inner, r.z.innerR, r.z.innerOff = r.z.inner[:0], 0, 0
	if d.cur != nil {
		d.cur.Close()
		d.cur = nil
	}
	r.part++
	name := perfdata.DataFileName(d.files[r.part-1])
	f, size, err := openRegular(d.dir, name)
	if err != nil {
		return false, err
	}
	d.cur = f
	r.end = size
	r.s.restart(io.NewSectionReader(f, 0, size), 0)
	return true, nil
}

// tailCut tells whether rec, just read from a directory recording's data,
// is the FINISHED_INIT that starts its tail synthesis: perf record
// --tail-synthesize --threads (and --overwrite --threads) synthesizes
// nothing at the start, writes the data.N files while it records, and at
// the end the BPF_METADATA of the programs loaded meanwhile, FINISHED_INIT
// and the tail synthesis into data (record__synthesize_final_bpf_metadata(),
// write_finished_init(rec, true), record__synthesize(rec, true)). The
// reader hands out data's records from that FINISHED_INIT on after the
// data files', as perf wrote them: data is cut there, and read again from
// it once the data files are read (resumeTail). A FINISHED_INIT after other
// records of data is the one of a recording synthesized at its start.
func (r *Reader) tailCut(rec *perfdata.Record) bool {
	d := r.dir
	if d == nil || r.part != 0 || d.synthesized || rec.Outer >= 0 {
		return false
	}
	switch rec.Header.Type {
	case perfdata.RecordBPFMetadata:
		// perf's (or bpfmeta's) records of the programs loaded during
		// the recording, right before FINISHED_INIT
		return false
	case perfdata.RecordComm, perfdata.RecordNamespaces:
		// __cmd_record() writes its workload's COMM (and NAMESPACES)
		// before it synthesizes anything, at the start or the tail
		if d.workload++; d.workload <= 2 {
			return false
		}
	case perfdata.RecordFinishedInit:
		d.synthesized = true
		if len(d.files) == 0 {
			return false
		}
		d.tail = rec.Offset
		r.s.drop()
		return true
	}
	d.synthesized = true
	return false
}

// resumeTail goes back to data's tail synthesis, after the data files.
func (r *Reader) resumeTail() error {
	d := r.dir
	if err := r.finish(); err != nil {
		return err
	}
	r.z.inner, r.z.innerR, r.z.innerOff = r.z.inner[:0], 0, 0
	if d.cur != nil {
		d.cur.Close()
		d.cur = nil
	}
	d.resumed = true
	r.part = 0
	r.end = r.form.layout.DataEnd()
	r.s.restart(io.NewSectionReader(r.form.src, d.tail, r.end-d.tail), d.tail)
	return nil
}

// closeDir closes what a directory recording's reader opened.
func (r *Reader) closeDir() error {
	d := r.dir
	if d == nil {
		return nil
	}
	if d.cur != nil {
		d.cur.Close()
		d.cur = nil
	}
	return d.dir.Close()
}
