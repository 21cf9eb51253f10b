// Package sources is the table of the metadata sources a command names, and which it reads.
//
// It is the table of the metadata sources a command names by a flag (Rows),
// and the one rule of which it reads (Open): the running kernel with the
// journal of the programs gone from it (bpfprog/journal: the one a flag
// names, or the default one when it exists), or the source a flag names
// instead of them (a snapshot). A new source is one row.
package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// A Row is a metadata source a command names by a flag.
type Row struct {
	// Flag is the flag's name, without "--".
	Flag string
	// Usage is the flag's usage in a command that reads a source that
	// ReplacesKernel instead of instead ("the running kernel"), and that
	// takes "-" for standard input there if stdin.
	Usage func(instead string, stdin bool) string
	// What names the kind of source in messages: "a snapshot".
	What string
	// ReplacesKernel: the source is read instead of the running kernel
	// and its journal (and by annotate instead of a recording's own
	// records); it is opened only when its flag is given, with kernel nil.
	// Otherwise it is read with the running kernel, for the programs gone
	// from it, and opened whenever the kernel is, its Arg's Path "" when
	// its flag is not given.
	ReplacesKernel bool
	// Stdin: the source may be read from standard input, named "-".
	Stdin bool
	// Open opens the source arg names. One that does not replace the
	// kernel returns kernel (the running kernel, with the sources of the
	// rows before it) with its own programs added: a Lister too. close is
	// nil when there is nothing to close.
	Open func(arg Arg, kernel bpfprog.Lister, env *Env) (src bpfprog.Source, close func(), err error)
}

// Rows are the sources, in the order commands list their flags.
var Rows = []Row{
	{
		Flag: "snapshot",
		Usage: func(instead string, stdin bool) string {
			dash := ""
			if stdin {
				dash = "; - for stdin"
			}
			return "take the metadata from snapshot `FILE` (bpfmeta snapshot, watch" + dash + ") instead of " + instead
		},
		What:           "a snapshot",
		ReplacesKernel: true,
		Stdin:          true,
		Open:           openSnapshot,
	},
	{
		Flag: "journal",
		Usage: func(string, bool) string {
			return "take the metadata of programs no longer loaded from the journal in `DIR` (bpfmeta watch --journal; default " + journal.DefaultDir + " when it exists)"
		},
		What: "the journal",
		Open: openJournal,
	},
}

// Arg is what a source's flag names.
type Arg struct {
	Path string // as given: "" when the flag is not; "-": standard input (Row.Stdin)
	// Set: the flag is given, if only as "" (--journal "" and --snapshot
	// FILE do not go together; --snapshot "" names no snapshot).
	Set  bool
	Name string   // how messages name it: the path quoted, or standard input's name
	File *os.File // standard input, for "-" (Open sets it from Env.Stdin)
}

// Env is what opening a source takes from the command that opens it.
type Env struct {
	// Stdin returns standard input, for the source of r named "-", or
	// the error that says why it cannot be read (the command reads
	// something else from it, it is a terminal).
	Stdin func(r *Row) (*os.File, error)
	// DefaultJournal is the journal read with the running kernel when no
	// flag names one, if it exists (journal.DefaultDir).
	DefaultJournal string
	// Warn is told, as a sentence, what is skipped: a default journal
	// that breaks a rule is not read; what a journal's bounds kept from
	// being read (when it is closed). Its text is safe to print.
	Warn func(string)
}

// Opened is an open source and how messages name it.
type Opened struct {
	// Source is the source itself, not wrapped: what it is beyond a
	// bpfprog.Source (a Lister, a Finder...) is asked of it.
	Source  bpfprog.Source
	Name    string
	closers []func()
}

// Close closes the sources, the last opened first.
func (o *Opened) Close() {
	for i := len(o.closers) - 1; i >= 0; i-- {
		o.closers[i]()
	}
	o.closers = nil
}

// A UsageError says that the flags name sources that do not go together.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// An OpenError is the error of opening the source a flag names (Arg.Name).
type OpenError struct {
	Name string
	Err  error
}

func (e *OpenError) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// Open opens the source args name (by Row.Flag; a flag not given is not
// there): the one of a row that ReplacesKernel, or else the running kernel
// (live.Open: a run that can read no program fails before it writes
// anything) with the rows that do not, the journal. Two flags that do not
// go together are a *UsageError; a source a flag names that cannot be
// opened, an *OpenError.
func Open(args map[string]Arg, env *Env) (*Opened, error) {
	return open(Rows, args, env)
}

func open(rows []Row, args map[string]Arg, env *Env) (*Opened, error) {
	var instead *Row
	var with []*Row // given, read with the kernel
	for i := range rows {
		r := &rows[i]
		switch a := args[r.Flag]; {
		case !r.ReplacesKernel && a.Set:
			with = append(with, r)
		case !r.ReplacesKernel || a.Path == "":
		case instead != nil:
			return nil, &UsageError{fmt.Sprintf("--%s and --%s: each names the source read instead of the running kernel; give one", instead.Flag, r.Flag)}
		default:
			instead = r
		}
	}
	if instead != nil {
		if len(with) > 0 {
			return nil, &UsageError{fmt.Sprintf("--%s and --%s: %s is read with the running kernel, not with %s", with[0].Flag, instead.Flag, with[0].What, instead.What)}
		}
		a := args[instead.Flag]
		if instead.Stdin && a.Path == "-" {
			f, err := env.Stdin(instead)
			if err != nil {
				return nil, err
			}
			a.File = f
		}
		src, closeSrc, err := instead.Open(a, nil, env)
		if err != nil {
			return nil, &OpenError{Name: a.Name, Err: err}
		}
		o := &Opened{Source: src, Name: a.Name}
		o.add(closeSrc)
		return o, nil
	}
	k, err := live.Open()
	if err != nil {
		return nil, fmt.Errorf("the running kernel: %w; or inject from a snapshot taken as root (--snapshot)", err)
	}
	var kernel bpfprog.Lister = k
	o := &Opened{}
	for _, r := range rows {
		if r.ReplacesKernel {
			continue
		}
		src, closeSrc, err := r.Open(args[r.Flag], kernel, env)
		if err != nil {
			o.Close()
			return nil, err
		}
		o.add(closeSrc)
		l, ok := src.(bpfprog.Lister)
		if !ok {
			o.Close()
			return nil, fmt.Errorf("--%s: %s lists no programs, and the running kernel it is read with does", r.Flag, r.What)
		}
		kernel = l
	}
	o.Source, o.Name = kernel, Name(kernel)
	return o, nil
}

// Instead reports whether args name a source that is read instead of the
// running kernel (a Row that ReplacesKernel, with a path), whether or not
// it goes with the other flags given: annotate reads it instead of a
// recording's own records.
func Instead(args map[string]Arg) bool {
	return slices.ContainsFunc(Rows, func(r Row) bool { return r.ReplacesKernel && args[r.Flag].Path != "" })
}

func (o *Opened) add(close func()) {
	if close != nil {
		o.closers = append(o.closers, close)
	}
}

// Name is how messages name src, as it names itself (bpfprog.Describer).
func Name(src bpfprog.Source) string {
	if d, ok := src.(bpfprog.Describer); ok {
		return d.Describe()
	}
	return "the source"
}

// openSnapshot opens the snapshot file arg names, or standard input's.
func openSnapshot(arg Arg, _ bpfprog.Lister, _ *Env) (bpfprog.Source, func(), error) {
	var snap *snapshot.File
	var err error
	if arg.File != nil {
		snap, err = snapshot.OpenFile(arg.File)
	} else {
		snap, err = snapshot.Open(arg.Path)
	}
	if err != nil {
		return nil, nil, err
	}
	return snap, func() { snap.Close() }, nil
}

// openJournal is kernel with the journal arg names, or the default one if
// it exists, for the programs kernel no longer has. The default one is
// read only by the rules of every journal (journal.Open): one that breaks
// them, or is none, is skipped with a warning, as if it were not there.
func openJournal(arg Arg, kernel bpfprog.Lister, env *Env) (bpfprog.Source, func(), error) {
	var j *journal.Journal
	if dir := arg.Path; dir != "" {
		var err error
		if j, err = journal.Open(dir); err != nil {
			return nil, nil, JournalError(err)
		}
	} else if dir = env.DefaultJournal; dir != "" {
		if _, err := os.Lstat(dir); err == nil {
			if j, err = journal.Open(dir); err != nil {
				j = nil
				env.Warn("the journal " + safetext.Quote(dir) + " is not read: " + safetext.Clean(JournalError(err).Error()))
			}
		}
	}
	return journal.WithKernel(kernel, j), func() { CloseJournal(j, env.Warn) }, nil
}

// JournalError is an error of journal.Open or of reading a journal: it
// names the path that broke a rule (a host's directory, a segment), which
// may not be the journal's.
func JournalError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", safetext.Quote(pe.Path), pe.Err)
	}
	return err
}

// CloseJournal closes j (nil: none), telling warn first what its bounds
// kept from being read.
func CloseJournal(j *journal.Journal, warn func(string)) {
	if j == nil {
		return
	}
	for _, w := range j.Warnings() {
		warn("the journal " + safetext.Clean(w))
	}
	j.Close()
}
