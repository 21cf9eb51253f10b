package journal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// How a journal's files are reached. A journal is read by the rules its
// writer writes it by (outfile.JournalDir, outfile.ReadJournalDir): its
// directories and segments are root's or the reader's and writable by
// nobody else, none is reached through a symlink, a segment is opened
// O_NOFOLLOW|O_NONBLOCK relative to its directory's descriptor and read
// only if fstat(2) then says it is a regular file (a FIFO put in its place
// after the listing does not block the reader). A journal that breaks a
// rule is refused, the error naming the path and the rule.
//
// And a read of one costs by what the journal holds, not by how many
// names it has: its directories are read in batches, to at most
// MaxDirEntries entries; a tree has at most MaxHosts host directories;
// empty segments (a writer whose start failed) are skipped by their size,
// unopened; of a host's segments the newest MaxSegments, and MaxHostBytes
// bytes of them, are read, and the older ones skipped with a warning; and
// a segment is read to the size it had when opened (newSegmentReader),
// however fast its writer appends.
const (
	// MaxDirEntries bounds the entries of one of a journal's directories
	// that are read: more, and it is not a journal bpfmeta writes.
	MaxDirEntries = 1 << 20
	// MaxHosts bounds the host directories of a journal's tree.
	MaxHosts = 1 << 12
	// MaxSegments bounds the segments of a host that are read: a writer
	// keeps at most MaxSize/SegmentSize+1 of them, 4097 at most
	// (Options.fill), 17 with the sizes of watch --journal; a writer
	// started again adds one per start until the size limit drops them.
	MaxSegments = 1 << 14
	// MaxHostBytes bounds the bytes of a host's segments that are read:
	// the largest MaxSize a writer accepts.
	MaxHostBytes = MaxMaxSize
	// dirBatch is how many directory entries are read at a time.
	dirBatch = 1024
)

// The bounds the reader applies: the constants above, lowered by tests.
var (
	maxDirEntries = MaxDirEntries
	maxHosts      = MaxHosts
	maxSegments   = MaxSegments
	maxHostBytes  = int64(MaxHostBytes)
)

// segFile is a segment file found in a host's directory.
type segFile struct {
	seq  uint64
	size int64
}

// listing is what listSegments found of a host's segments: those to
// read, oldest first, and what was skipped.
type listing struct {
	segs []segFile
	// empty counts the empty segment files skipped; skipped and
	// skippedBytes the older segments past MaxSegments or MaxHostBytes.
	empty, skipped int
	skippedBytes   int64
}

// warning says what the listing skipped that may have held loads, "" if
// nothing.
func (l *listing) warning(dir string) string {
	if l.skipped == 0 {
		return ""
	}
	return fmt.Sprintf("%s: its %d oldest segments (%d bytes) are not read: a journal is read to its newest %d segments and %d MiB",
		dir, l.skipped, l.skippedBytes, maxSegments, maxHostBytes>>20)
}

// listSegments lists the segments of the host directory d by the rules
// above: a name of a segment that is a symlink or not a regular file
// refuses the host; an empty one is skipped; the newest MaxSegments and
// MaxHostBytes are kept.
func listSegments(d *os.File) (*listing, error) {
	l := &listing{}
	entries := 0
	for {
		names, err := d.Readdirnames(dirBatch)
		entries += len(names)
		if entries > maxDirEntries {
			return nil, fmt.Errorf("%s: more than %d entries: not a journal bpfmeta writes", d.Name(), maxDirEntries)
		}
		for _, n := range names {
			if err := l.add(d, n); err != nil {
				return nil, err
			}
		}
		if err == io.EOF || len(names) == 0 {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name(), err)
		}
	}
	l.trim()
	slices.Reverse(l.segs)
	return l, nil
}

// add adds the entry name of d if it is a segment, lstat'ed.
func (l *listing) add(d *os.File, name string) error {
	seq, ok := parseSegmentName(name)
	if !ok {
		return nil
	}
	var st unix.Stat_t
	err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		return nil // dropped meanwhile by a running writer
	case err != nil:
		return &fs.PathError{Op: "lstat", Path: d.Name() + "/" + name, Err: err}
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return &fs.PathError{Op: "open", Path: d.Name() + "/" + name, Err: errors.New("a symlink, not followed: a journal's segment is read only where it is")}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return &fs.PathError{Op: "open", Path: d.Name() + "/" + name, Err: fmt.Errorf("not a regular file (mode %#o)", st.Mode)}
	case st.Size == 0:
		l.empty++
		return nil
	}
	l.segs = append(l.segs, segFile{seq: seq, size: st.Size})
	if len(l.segs) >= 2*maxSegments {
		l.trim()
	}
	return nil
}

// trim keeps the newest segments within the bounds, newest first.
func (l *listing) trim() {
	slices.SortFunc(l.segs, func(a, b segFile) int { return compareSeq(b.seq, a.seq) })
	var bytes int64
	for i, s := range l.segs {
		if i == maxSegments || bytes+s.size > maxHostBytes {
			for _, o := range l.segs[i:] {
				l.skipped++
				l.skippedBytes += o.size
			}
			l.segs = l.segs[:i]
			return
		}
		bytes += s.size
	}
}

// treeEntries reads the names of the journal directory d: whether it
// holds a segment (it is one host's), else the names of the directories
// that could be hosts' and of the symlinks among them.
func treeEntries(d *os.File) (hasSegment bool, dirs, links []string, err error) {
	entries := 0
	for {
		ents, rerr := d.ReadDir(dirBatch)
		if entries += len(ents); entries > maxDirEntries {
			return false, nil, nil, fmt.Errorf("%s: more than %d entries: not a journal bpfmeta writes", d.Name(), maxDirEntries)
		}
		for _, e := range ents {
			if _, ok := parseSegmentName(e.Name()); ok {
				return true, nil, nil, nil
			}
			if checkHost(e.Name()) != nil {
				continue
			}
			switch e.Type() {
			case fs.ModeDir:
				if len(dirs) == maxHosts {
					return false, nil, nil, fmt.Errorf("%s: more than %d directories: not a journal bpfmeta writes (a tree has one per host)", d.Name(), maxHosts)
				}
				dirs = append(dirs, e.Name())
			case fs.ModeSymlink:
				links = append(links, e.Name())
			}
		}
		if rerr == io.EOF || len(ents) == 0 {
			return false, dirs, links, nil
		}
		if rerr != nil {
			return false, nil, nil, fmt.Errorf("%s: %w", d.Name(), rerr)
		}
	}
}

// holdsSegment reports whether the directory name of the tree d holds a
// segment file (is a host's), reading its names only: it is checked by
// the rules once it is known to be a host's.
func holdsSegment(d *os.File, name string) (bool, error) {
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil // not a directory now, or unreadable: no host's
	}
	sub := os.NewFile(uintptr(fd), d.Name()+"/"+name)
	defer sub.Close()
	for entries := 0; entries <= maxDirEntries; {
		names, err := sub.Readdirnames(dirBatch)
		for _, n := range names {
			if _, ok := parseSegmentName(n); ok {
				return true, nil
			}
		}
		if entries += len(names); err != nil || len(names) == 0 {
			return false, nil
		}
	}
	return false, nil
}

// openTree finds the hosts of the journal tree j.dir: its directories that
// hold segments, each by the rules. A tree with none is no journal; one
// with a symlink where a host directory could be is refused.
func (j *Journal) openTree(dirs, links []string) error {
	for _, name := range dirs {
		ok, err := holdsSegment(j.dir, name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		h := newHost(name, j.dir, name)
		d, err := h.openDir()
		if err != nil {
			return err
		}
		// checked: opened again, and checked again, when it is read
		h.dir = nil
		d.Close()
		j.hosts[name] = h
	}
	switch {
	case len(j.hosts) == 0 && len(links) > 0:
		return fmt.Errorf("%s: %w: no segment file, and no host directory holding one (%s is a symlink, not followed)", j.Path, ErrFormat, safetext.Quote(hostPath(j.Path, links[0])))
	case len(j.hosts) == 0:
		return fmt.Errorf("%s: %w: no segment file, and no host directory holding one", j.Path, ErrFormat)
	case len(links) > 0:
		return &fs.PathError{Op: "open", Path: hostPath(j.Path, links[0]), Err: errors.New("a symlink, not followed: a journal's host directory is read only where it is")}
	}
	return nil
}

// openDir opens the host's directory by the rules, once.
func (h *Host) openDir() (*os.File, error) {
	if h.dir != nil {
		return h.dir, nil
	}
	d, err := outfile.ReadSubDir(h.parent, h.sub, h.Dir)
	if err != nil {
		return nil, err
	}
	h.dir = d
	return d, nil
}

// listed lists the host's segments once (listSegments).
func (h *Host) listed() (*listing, error) {
	if h.listing != nil {
		return h.listing, nil
	}
	d, err := h.openDir()
	if err != nil {
		return nil, err
	}
	if _, err := d.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Name(), err)
	}
	l, err := listSegments(d)
	if err != nil {
		return nil, err
	}
	h.listing = l
	return l, nil
}

// Warnings say what the hosts read so far skipped of their journals by
// the bounds above.
func (j *Journal) Warnings() []string {
	var out []string
	for _, name := range j.Hosts() {
		if h := j.hosts[name]; h.listing != nil {
			if w := h.listing.warning(h.Dir); w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

// Close closes the journal's directories.
func (j *Journal) Close() error {
	var errs []error
	for _, h := range j.hosts {
		if h.dir != nil && h.dir != j.dir {
			errs = append(errs, h.dir.Close())
		}
		h.dir = nil
	}
	errs = append(errs, j.dir.Close())
	return errors.Join(errs...)
}

// hostPath is the path of a host's directory in messages.
func hostPath(top, name string) string {
	return strings.TrimSuffix(top, "/") + "/" + name
}
