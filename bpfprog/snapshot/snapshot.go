// Package snapshot reads, writes and takes snapshot files of the BPF programs of a machine.
//
// It is the snapshot file: a record of the programs loaded on one machine,
// at one time (bpfmeta snapshot, Take) or over a time (bpfmeta watch,
// package bpfprog/watch), that answers as a bpfprog.Source after the
// programs are gone and on another machine. It reads a snapshot (Open, Read:
// an index of the file, not its programs), writes one a program at a time
// (Writer), and takes one of a Source that lists its programs (Take).
// Whatever a file claims, what is read stays within fixed bounds and no
// error quotes the file.
//
// It does not read the kernel (bpfprog/live does) nor follow loads
// (bpfprog/watch does).
package snapshot

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"slices"
	"time"
	"unsafe"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// A snapshot file is JSON Lines, so that it can be written as programs are
// found, and read back when whatever wrote it was killed half-way:
//
//	{"format_version":2,"kind":"snapshot","system":{...},"taken":"2026-12-02T15:37:00Z"}
//	{"program":{"id":97,"tag":"e21be2de8fc54252",...}}
//	...
//	{"end":{"programs":2,"taken_until":"2026-12-02T15:38:00Z"}}
//
// The first line says what the file is and which machine and boot its
// programs are from (doc.Header, kind doc.KindSnapshot); every
// program line has a program in the JSON form every output of bpfmeta
// shares (bpfprog.Program.MarshalJSON); the last line says the file is
// complete. A file without it, or whose last line is cut, is a snapshot
// whose writer did not finish (File.Incomplete says so).
type header struct {
	doc.Header
	System bpfprog.System `json:"system"`
	Taken  time.Time      `json:"taken"`
}

type programLine struct {
	Program json.RawMessage `json:"program,omitempty"`
	End     *End            `json:"end,omitempty"`
}

// End is the last line of a complete snapshot.
type End struct {
	Programs int `json:"programs"`
	// Until is when the writer stopped adding programs (a watch's end).
	Until time.Time `json:"taken_until"`
	// Missed counts programs whose load a watch saw but that were gone
	// before they could be read (0 for a snapshot; always written).
	Missed int `json:"missed"`
}

// Limits on what a snapshot file may hold, whatever it claims: a program
// line, however many functions and entries it lists, is far smaller.
const (
	maxSnapshotLine     = 4 << 20
	maxSnapshotPrograms = 1 << 20
	// maxSnapshotV1 bounds a version 1 file, which must be read whole.
	maxSnapshotV1 = 64 << 20
)

// ErrFormat is wrapped by the errors Open and Read return for input that
// is not a snapshot this package can read.
var ErrFormat = errors.New("not a bpfmeta snapshot")

// ErrNewer is wrapped by the error for a snapshot of a newer format.
var ErrNewer = errors.New("written by a newer bpfmeta")

// File is a snapshot file, read (Open, Read) as a bpfprog.Source and
// bpfprog.Lister. It keeps only an index of the file, and reads a program
// from it when asked: its memory does not grow with the file.
type File struct {
	sys   bpfprog.System // the machine and boot the snapshot was taken on
	Taken time.Time      // when it was taken (a watch: when it started)
	// Incomplete says why the file is not the whole of what its writer
	// meant to write (it was killed, its disk full); "" for a complete one.
	Incomplete string
	// End is the file's last line, when it has one.
	End *End

	file   io.ReaderAt
	closer io.Closer
	// spans index the file's programs by id, 24 bytes each: sorted once
	// read (sorted says whether they still are while reading).
	spans   []span
	sorted  bool
	version int
	// mem is what spans take of the process's memory budget
	// (internal/budget).
	mem budget.Meter
}

// spanSize is the size of a span, for the memory budget.
const spanSize = int64(unsafe.Sizeof(span{}))

// span is where a program is in the file, and when it was loaded
// (LoadedBetween).
type span struct {
	off  int64
	n    int32
	id   uint32
	load time.Duration
}

// System describes the machine and boot the snapshot was taken on.
func (s *File) System() bpfprog.System { return s.sys }

// Lookup returns the program with id from the snapshot if its tag is tag.
func (s *File) Lookup(id uint32, tag perfdata.BPFTag) (*bpfprog.Program, error) {
	i, ok := slices.BinarySearchFunc(s.spans, id, func(sp span, id uint32) int { return cmp.Compare(sp.id, id) })
	if !ok {
		return nil, bpfprog.NotFound(id)
	}
	p, err := s.read(s.spans[i])
	if err != nil {
		return nil, err
	}
	if err := bpfprog.CheckTag(id, tag, p.Tag); err != nil {
		return nil, err
	}
	return p, nil
}

// Describe names the source in messages.
func (s *File) Describe() string { return "the snapshot" }

// WhyNot says why the snapshot has no program, or another, for a load of a
// recording.
func (s *File) WhyNot(err error, unloaded bool) string {
	if errors.Is(err, bpfprog.ErrNotFound) {
		return "not in the snapshot"
	}
	return "the snapshot's program with this id is another one (a snapshot of another boot?)"
}

// Hint says how to take a snapshot that has every program of a recording.
func (s *File) Hint() string {
	return "a program not in the snapshot was loaded after it was taken, or unloaded before: bpfmeta watch -o snap.jsonl -- perf record ... takes one that has every program the recording saw"
}

// Notes says that the snapshot is incomplete, if it is.
func (s *File) Notes() []string {
	if s.Incomplete == "" {
		return nil
	}
	return []string{"is an incomplete snapshot: " + s.Incomplete + "; it holds the programs read before"}
}

// All yields every program of the snapshot, in ascending id order.
func (s *File) All() iter.Seq2[*bpfprog.Program, error] {
	return s.all(func(span) bool { return true })
}

// LoadedBetween yields the programs of the snapshot whose LoadTime is
// within [from, to], in ascending id order, and reads no other: the index
// has every program's load time.
func (s *File) LoadedBetween(from, to time.Duration) iter.Seq2[*bpfprog.Program, error] {
	return s.all(func(sp span) bool { return sp.load >= from && sp.load <= to })
}

// all yields the programs whose spans want says to read.
func (s *File) all(want func(span) bool) iter.Seq2[*bpfprog.Program, error] {
	return func(yield func(*bpfprog.Program, error) bool) {
		for _, sp := range s.spans {
			if !want(sp) {
				continue
			}
			p, err := s.read(sp)
			if !yield(p, err) {
				return
			}
		}
	}
}

// Len is the number of programs in the snapshot.
func (s *File) Len() int { return len(s.spans) }

// read decodes the program at sp.
func (s *File) read(sp span) (*bpfprog.Program, error) {
	b := make([]byte, sp.n)
	if _, err := s.file.ReadAt(b, sp.off); err != nil {
		return nil, fmt.Errorf("snapshot: reading a program at offset %d: %w", sp.off, err)
	}
	var p *bpfprog.Program
	var err error
	if s.version == 1 {
		p, err = bpfprog.DecodeV1(b, s.sys.BootTime)
	} else {
		var l programLine
		if err = json.Unmarshal(b, &l); err == nil {
			p = new(bpfprog.Program)
			err = p.UnmarshalJSON(l.Program)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: the program at offset %d: %w: %v", sp.off, ErrFormat, bpfprog.JSONError(err))
	}
	return p, p.Check()
}

// Close closes the file the snapshot is read from.
func (s *File) Close() error {
	s.mem.Close()
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// MaxSpool bounds a snapshot Open reads from a pipe.
const MaxSpool = 1 << 30

// Open opens and reads the snapshot at path (Read). One that cannot be
// read by offset (a pipe, such as <(bpfmeta snapshot -o -)) is copied to an
// unnamed file in $TMPDIR first, up to MaxSpool bytes, once its first line
// shows it is a snapshot (a device such as /dev/zero is refused at once). A
// perf.data recording given for a snapshot is an error that says so.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return OpenFile(f)
}

// OpenFile is Open of the open file f (standard input, for one), which the
// File closes, or OpenFile when it fails.
func OpenFile(f *os.File) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := st.Size()
	// A regular file of size 0 may have content all the same (procfs,
	// sysfs: /proc/kallsyms): it is read as a stream is.
	if !st.Mode().IsRegular() || size == 0 {
		tmp, n, err := spool(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		f, size = tmp, n
	}
	snap, err := Read(f, size)
	if err != nil {
		var head [8]byte
		f.ReadAt(head[:], 0)
		f.Close()
		return nil, notRecording(head[:], err)
	}
	return snap, nil
}

// notRecording says so when what was given for a snapshot is a recording.
func notRecording(head []byte, err error) error {
	if _, ok := perfdata.ParseMagic(head, nil); ok && errors.Is(err, ErrFormat) {
		return fmt.Errorf("%w: a perf.data recording (-i reads a recording)", ErrFormat)
	}
	return err
}

// maxReadBuffer is the size of the buffers a snapshot is read through.
const maxReadBuffer = 64 << 10

// maxSnapshotHeader bounds a snapshot's first line where it is sniffed:
// it is a few hundred bytes.
const maxSnapshotHeader = 64 << 10

// spool copies a stream to an unnamed file in $TMPDIR, if its first line
// is a snapshot's (or a version 1 file's "{"), and returns the file and its
// size.
func spool(r io.Reader) (*os.File, int64, error) {
	br := bufio.NewReaderSize(r, maxSnapshotHeader)
	first, err := br.ReadSlice('\n')
	if len(first) == 0 && err == io.EOF {
		return nil, 0, fmt.Errorf("snapshot: %w: the file is empty", ErrFormat)
	}
	if err != nil && err != io.EOF {
		if errors.Is(err, bufio.ErrBufferFull) {
			err = fmt.Errorf("snapshot: %w (no line in its first %d KiB)", ErrFormat, maxSnapshotHeader>>10)
		}
		return nil, 0, notRecording(first, err)
	}
	var h header
	if line := bytes.TrimSpace(first); !bytes.Equal(line, []byte("{")) && (json.Unmarshal(line, &h) != nil || h.Kind != doc.KindSnapshot) {
		return nil, 0, notRecording(first, fmt.Errorf("snapshot: %w (its first line is not a snapshot's)", ErrFormat))
	}
	tmp, err := scratch.Unnamed(os.TempDir())
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is TMPDIR's, named here
		}
		return nil, 0, fmt.Errorf("a snapshot read from a pipe is copied to TMPDIR (%s) first: %w (set TMPDIR to a directory you can write)", os.TempDir(), err)
	}
	n, err := io.Copy(tmp, io.LimitReader(io.MultiReader(bytes.NewReader(first), br), MaxSpool+1))
	if err == nil && n > MaxSpool {
		err = fmt.Errorf("more than %d MiB from a pipe", MaxSpool>>20)
	}
	if err != nil {
		tmp.Close()
		return nil, 0, err
	}
	return tmp, n, nil
}

// Read reads the snapshot in file f, of size bytes: it checks every line
// and indexes the programs by id, holding nothing else of the file; Lookup
// then reads the program it is asked for. The File uses f until it is
// closed (closing it closes f, if f is an io.Closer).
func Read(f io.ReaderAt, size int64) (*File, error) {
	s := &File{file: f, sorted: true, mem: budget.Meter{What: "snapshot index"}}
	if c, ok := f.(io.Closer); ok {
		s.closer = c
	}
	var head [64]byte
	n, _ := f.ReadAt(head[:], 0)
	var err error
	// version 1: one JSON object, indented ("{\n  \"format_version\": 1");
	// version 2: JSON Lines
	if bytes.HasPrefix(bytes.TrimLeft(head[:n], " \t\r\n"), []byte("{\n")) {
		err = s.readV1(size)
	} else {
		err = s.readLines(size)
	}
	if err == nil {
		err = s.sortSpans()
	}
	if err != nil {
		s.mem.Close()
	}
	return s, err
}

func (s *File) readLines(size int64) error {
	// The index takes its size from the number of lines, so that it is
	// not copied as it grows. The buffers are no larger than the file: a
	// snapshot is usually a few KiB, and every page of a buffer costs a
	// page fault when first touched (11-15 us in the bench VM).
	bufSize := int(min(size+1, maxReadBuffer))
	n, err := countLines(io.NewSectionReader(s.file, 0, size), bufSize)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	n = min(n, maxSnapshotPrograms+1)
	if err := s.mem.Set(int64(n) * spanSize); err != nil {
		return fmt.Errorf("snapshot: an index of %d programs: %w", n, err)
	}
	s.spans = make([]span, 0, n)
	br := bufio.NewReaderSize(io.NewSectionReader(s.file, 0, size), bufSize)
	var off int64
	lineNo := 0
	for {
		line, cut, err := readLine(br)
		if err != nil {
			return fmt.Errorf("snapshot: line %d: %w", lineNo+1, err)
		}
		if line == nil {
			break
		}
		lineNo++
		start := off
		off += int64(len(line))
		if cut {
			s.Incomplete = fmt.Sprintf("its last line (line %d) is cut: the writer stopped while writing it", lineNo)
			break
		}
		if lineNo == 1 {
			if err := s.header(line); err != nil {
				return err
			}
			continue
		}
		if s.End != nil {
			return fmt.Errorf("snapshot: line %d: %w: a line after the end line", lineNo, ErrFormat)
		}
		if err := s.program(line, start, lineNo); err != nil {
			return err
		}
	}
	switch {
	case lineNo == 0:
		return fmt.Errorf("snapshot: %w: the file is empty", ErrFormat)
	case s.version == 0:
		return fmt.Errorf("snapshot: %w", ErrFormat)
	case s.End == nil && s.Incomplete == "":
		s.Incomplete = "it has no end line: its writer is still running, or was killed or ran out of space before it finished"
	case s.End != nil && s.End.Programs != len(s.spans):
		return fmt.Errorf("snapshot: %w: the end line counts %d programs, the file has %d", ErrFormat, s.End.Programs, len(s.spans))
	}
	return nil
}

// readLine reads one line, its newline included. cut reports a last line
// without a newline; a line longer than maxSnapshotLine is an error, read
// no further than that.
func readLine(br *bufio.Reader) (line []byte, cut bool, err error) {
	for {
		b, err := br.ReadSlice('\n')
		line = append(line, b...)
		switch {
		case len(line) > maxSnapshotLine:
			return nil, false, fmt.Errorf("%w: a line longer than %d MiB, the most bpfmeta reads (a program's line is a few KiB: perf records at most 202 entries of 320 bytes)", ErrFormat, maxSnapshotLine>>20)
		case err == nil:
			return line, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if len(line) == 0 {
				return nil, false, nil
			}
			return line, true, nil
		}
		return nil, false, err
	}
}

func (s *File) header(line []byte) error {
	var h header
	if err := json.Unmarshal(line, &h); err != nil || h.Kind != doc.KindSnapshot {
		return fmt.Errorf("snapshot: %w (its first line is not a snapshot's)", ErrFormat)
	}
	if h.FormatVersion > doc.FormatVersion {
		return fmt.Errorf("snapshot: format version %d, %w (this one reads up to %d)", h.FormatVersion, ErrNewer, doc.FormatVersion)
	}
	if h.FormatVersion < 2 {
		return fmt.Errorf("snapshot: %w: format version %d in a line-by-line file", ErrFormat, h.FormatVersion)
	}
	s.version, s.sys, s.Taken = h.FormatVersion, h.System, h.Taken
	return nil
}

// program indexes one program line, or takes the end line.
func (s *File) program(b []byte, off int64, lineNo int) error {
	var l programLine
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("snapshot: line %d: %w: %v", lineNo, ErrFormat, bpfprog.JSONError(err))
	}
	switch {
	case l.End != nil:
		s.End = l.End
		return nil
	case l.Program == nil:
		return fmt.Errorf("snapshot: line %d: %w: neither a program nor the end", lineNo, ErrFormat)
	}
	var p bpfprog.Program
	if err := p.UnmarshalJSON(l.Program); err != nil {
		return fmt.Errorf("snapshot: line %d: %w: program: %v", lineNo, ErrFormat, bpfprog.JSONError(err))
	}
	return s.add(&p, span{off: off, n: int32(len(b))}, lineNo)
}

func (s *File) add(p *bpfprog.Program, sp span, where int) error {
	if err := p.Check(); err != nil {
		return fmt.Errorf("snapshot: line %d: %w: %v", where, ErrFormat, err)
	}
	if n := len(s.spans); n > 0 && s.sorted && s.spans[n-1].id >= p.ID {
		if s.spans[n-1].id == p.ID {
			return fmt.Errorf("snapshot: line %d: %w: program %d appears twice", where, ErrFormat, p.ID)
		}
		s.sorted = false // a watch writes in the order programs are read
	}
	if len(s.spans) >= maxSnapshotPrograms {
		return fmt.Errorf("snapshot: more than %d programs (bpfmeta reads at most that many)", maxSnapshotPrograms)
	}
	sp.id, sp.load = p.ID, p.LoadTime
	if n := len(s.spans); n == cap(s.spans) {
		// grown here, so that the budget has the old array and the new
		// while both are held
		grown := max(1024, n+n/4)
		if err := s.mem.Set(int64(n+grown) * spanSize); err != nil {
			return fmt.Errorf("snapshot: line %d: an index of %d programs: %w", where, n, err)
		}
		s.spans = slices.Grow(s.spans, grown-n)
		s.mem.Set(int64(cap(s.spans)) * spanSize)
	}
	s.spans = append(s.spans, sp)
	return nil
}

// countLines counts the newlines r holds.
func countLines(r io.Reader, bufSize int) (int, error) {
	buf := make([]byte, bufSize)
	n := 0
	for {
		m, err := r.Read(buf)
		n += bytes.Count(buf[:m], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// sortSpans sorts the index by id, once read, and finds a duplicate id.
func (s *File) sortSpans() error {
	if s.sorted {
		return nil
	}
	slices.SortFunc(s.spans, func(a, b span) int { return cmp.Compare(a.id, b.id) })
	s.sorted = true
	for i := 1; i < len(s.spans); i++ {
		if s.spans[i].id == s.spans[i-1].id {
			return fmt.Errorf("snapshot: %w: program %d appears twice", ErrFormat, s.spans[i].id)
		}
	}
	return nil
}

// readV1 indexes a version 1 snapshot: one JSON object whose "programs"
// array holds the programs.
func (s *File) readV1(size int64) error {
	if size > maxSnapshotV1 {
		return fmt.Errorf("snapshot: a version 1 snapshot of %d bytes (bpfmeta reads those up to %d MiB)", size, maxSnapshotV1>>20)
	}
	br := &budgetReader{r: io.NewSectionReader(s.file, 0, size)}
	br.from(0)
	d := json.NewDecoder(br)
	fail := func(format string, args ...any) error {
		if br.over {
			return s.tooLong(br.start)
		}
		return fmt.Errorf("snapshot: %w: "+format, append([]any{ErrFormat}, args...)...)
	}
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return fail("not a JSON object")
	}
	for br.from(d.InputOffset()); d.More(); br.from(d.InputOffset()) {
		t, err := d.Token()
		if err != nil {
			return fail("%v", bpfprog.JSONError(err))
		}
		key, _ := t.(string)
		br.from(d.InputOffset())
		switch key {
		case "format_version":
			if err := d.Decode(&s.version); err != nil {
				return fail("format_version: %v", err)
			}
			if s.version != 1 {
				return fail("format_version %d in a one-object file", s.version)
			}
		case "kernel_release":
			err = d.Decode(&s.sys.KernelRelease)
		case "boot_id":
			err = d.Decode(&s.sys.BootID)
		case "hostname":
			err = d.Decode(&s.sys.Hostname)
		case "boot_time":
			err = d.Decode(&s.sys.BootTime)
		case "taken":
			err = d.Decode(&s.Taken)
		case "programs":
			err = s.readV1Programs(d, br)
		default:
			var skip json.RawMessage
			err = d.Decode(&skip)
		}
		if err != nil {
			if key != "programs" { // whose errors quote nothing already
				err = bpfprog.JSONError(err)
			}
			if !knownV1Keys[key] {
				key = "(another)" // a key of the file's, not quoted
			}
			return fail("field %s: %v", key, err)
		}
	}
	if s.version != 1 {
		return fail("no format_version")
	}
	s.End = &End{Programs: len(s.spans)}
	return nil
}

// budgetReader is a version 1 snapshot as its json.Decoder reads it: a
// value the decoder is at may take it no further than maxSnapshotLine
// bytes past the value's start, so that it never buffers more, however
// long the value (one program's "funcs":[{},{},...] of 32 MiB).
type budgetReader struct {
	r     io.Reader
	n     int64 // bytes read
	start int64 // where the value the budget is for starts
	limit int64
	over  bool // the decoder asked for more
}

// from gives the value at offset off its budget.
func (b *budgetReader) from(off int64) {
	b.start, b.limit = off, max(b.n, off+maxSnapshotLine)
}

// errOverBudget is what the decoder reads past a value's budget.
var errOverBudget = errors.New("a value longer than bpfmeta reads")

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.n >= b.limit {
		b.over = true
		return 0, errOverBudget
	}
	p = p[:min(int64(len(p)), b.limit-b.n)]
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

// tooLong is the error for a version 1 snapshot's value at offset off
// that is longer than maxSnapshotLine, with the line it starts on.
func (s *File) tooLong(off int64) error {
	line, err := countLines(io.NewSectionReader(s.file, 0, off), maxReadBuffer)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return fmt.Errorf("snapshot: line %d: %w: a value longer than %d MiB, the most bpfmeta reads of one (a program is a few KiB: perf records at most 202 entries of 320 bytes)", line+1, ErrFormat, maxSnapshotLine>>20)
}

// knownV1Keys are the keys of a version 1 snapshot an error may name.
var knownV1Keys = map[string]bool{"format_version": true, "kernel_release": true, "boot_id": true,
	"hostname": true, "boot_time": true, "taken": true, "programs": true}

func (s *File) readV1Programs(d *json.Decoder, br *budgetReader) error {
	if t, err := d.Token(); err != nil || t != json.Delim('[') {
		return errors.New("not an array")
	}
	for i := 0; d.More(); i++ {
		br.from(d.InputOffset())
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return bpfprog.JSONError(err)
		}
		if bytes.Equal(raw, []byte("null")) {
			return fmt.Errorf("program %d is null", i)
		}
		p, err := bpfprog.DecodeV1(raw, s.sys.BootTime)
		if err != nil {
			return fmt.Errorf("program %d: %v", i, bpfprog.JSONError(err))
		}
		// the raw value starts after the separator and spaces InputOffset counts
		off := d.InputOffset() - int64(len(raw))

		if err := s.add(p, span{off: off, n: int32(len(raw))}, i+1); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil {
		return bpfprog.JSONError(err)
	}
	return nil
}
