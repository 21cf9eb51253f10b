package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/watch"
	"github.com/bpfmeta/bpfmeta/cmd/internal/childcmd"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/writer"
)

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:      "watch",
		Usage:     "follow BPF program loads while CMD (perf record ...) runs, saving each program's metadata as it loads",
		ArgsUsage: "[-- CMD [ARGS...]]",
		Description: `Follows BPF program loads as they happen, as perf record's side-band thread does
(a perf event with bpf_event set, on every CPU), and reads each new program and
its bpf_metadata_* variables the moment it is loaded, together with every program
already loaded. The snapshot it writes (bpfmeta snapshot's format) lets bpfmeta
inject --snapshot label programs that were loaded and unloaded during a
recording, which the running kernel can no longer tell about.

The snapshot is written as programs are read: the file is there from the start,
mode 0600, and holds every program read so far, so that a watch that is killed
leaves a snapshot inject reads (it says the snapshot is incomplete). An
existing FILE is replaced only with -f, and that is checked before CMD starts.
With -o - the snapshot goes to stdout after CMD's own output.

With -- CMD, it starts CMD once it follows the loads, so that no load by CMD is
missed; passes SIGINT, SIGTERM and SIGHUP on to CMD; stops when CMD exits, and
exits with CMD's status (128+N if signal N ended CMD; 126 if CMD cannot be run,
127 if it is not found). Without CMD it runs until SIGINT, SIGTERM or SIGHUP,
and exits 0. A summary line goes to stderr: programs at start, loaded while
watching, with metadata, and lost (unloaded before they could be read). A
program that shows no metadata when loaded is read again for up to 255 ms:
libbpf binds .rodata to a program only after loading it. Needs root.

With --journal DIR (no CMD, no -o) it is the flight recorder bpfmeta inject
reads by itself: it appends to the journal DIR/HOSTNAME/ the programs loaded
when it starts, then every load and unload, and every load it could not read
(lost), until SIGINT, SIGTERM, SIGHUP or SIGQUIT: each stops it the same way,
the journal synced, a summary printed, exit 0 (SIGHUP is ignored under nohup;
there is no reopen: a segment is begun by size, and by every start). An error
writing the journal (ENOSPC) stops it with one line and the summary, exit 1.
The bpfmeta-watch.service that make install installs runs it on
/var/lib/bpfmeta. The journal is kept in segments of 1/16 of --max-size, the
oldest dropped first (counted, and their programs named, so that inject can
say which fell out); each record is checksummed and synced within a second,
so a SIGKILL or a crash loses at most the last second and leaves the journal
readable; a watch started again continues it in a new segment. The
directories are made mode 0700, the files 0600; a symlink is not followed.
The default --max-size, 128M, holds about 100,000 loads of programs with
metadata (two months of a host that loads one a minute); it is also the
largest, whose index inject holds in at most 9.3 MiB (128M of the smallest
loads and unloads); the smallest is 4M. A journal is read (inject, programs
--journal) only if its directories are root's or the reader's and writable by
nobody else, with no symlink and no segment that is not a regular file.

Examples:
   bpfmeta watch -o progs.jsonl -- perf record -a -o perf.data -- ./workload
   bpfmeta inject --snapshot progs.jsonl -i perf.data -o perf.meta.data
   bpfmeta watch -f -o /var/tmp/progs.jsonl        (until Ctrl-C)
   bpfmeta watch --journal /var/lib/bpfmeta        (bpfmeta-watch.service)`,
		Flags: []cli.Flag{outputFlag("snapshot"), forceFlag(), noClobberFlag(),
			&cli.StringFlag{Name: flagJournal, TakesFile: true,
				Usage: "append every load and unload to the journal in `DIR` (DIR/HOSTNAME/), as a service, instead of a snapshot; no CMD"},
			&cli.StringFlag{Name: flagMaxSize, Value: fmt.Sprintf("%dM", journal.DefaultMaxSize>>20),
				Usage: fmt.Sprintf("keep the host's journal under `SIZE` bytes (K, M: KiB, MiB; %dM to %dM), dropping its oldest segments; %dM hold about 100,000 loads",
					journal.MinMaxSize>>20, journal.MaxMaxSize>>20, journal.DefaultMaxSize>>20)},
			quietFlag(), verboseFlag("name every program that could not be read")},
		Action: func(c *cli.Context) error {
			status, err := runWatch(c)
			if status == 0 {
				return err
			}
			return cliutil.ExitStatusError{Status: status, Err: err} // CMD's
		},
	}
}

// flagMaxSize is watch --max-size.
const flagMaxSize = "max-size"

// watchOpts are watch's options.
type watchOpts struct {
	outputOpts
	verbosity
	argv    []string // CMD and its arguments, after --
	journal string   // --journal's directory
	// journalGiven: watch --journal, whose --max-size is maxSize.
	journalGiven bool
	maxSize      int64
}

// watchOptionsOf reads watch's flags and CMD: the one place they are
// read. With --journal, a CMD, -o, -f or --no-clobber, or a --max-size
// that is not a size, is a usage error (--max-size is read with --journal
// only).
func watchOptionsOf(c *cli.Context) (watchOpts, error) {
	v, err := verbosityOptionsOf(c)
	if err != nil {
		return watchOpts{}, err
	}
	o := watchOpts{outputOpts: outputOptionsOf(c), verbosity: v, argv: c.Args().Slice(),
		journal: c.String(flagJournal), journalGiven: c.IsSet(flagJournal)}
	if len(o.argv) > 0 && o.argv[0] == "--" {
		o.argv = o.argv[1:]
	}
	if !o.journalGiven {
		return o, nil
	}
	switch {
	case len(o.argv) > 0:
		return o, cliutil.Usagef("watch --journal runs no CMD: it runs until SIGINT, SIGTERM, SIGHUP or SIGQUIT")
	case c.IsSet(flagOutput), c.IsSet(flagForce), c.IsSet(flagNoClobber):
		return o, cliutil.Usagef("watch --journal writes no snapshot: -o, -f and --no-clobber go without it")
	}
	if o.maxSize, err = parseSize(c.String(flagMaxSize)); err == nil {
		err = journal.CheckMaxSize(o.maxSize)
	}
	if err != nil {
		return o, cliutil.Usagef("--max-size: %v", err)
	}
	return o, nil
}

// runWatch runs the watch and returns the status to exit with when it is
// not 0 (CMD's), and an error to report.
func runWatch(c *cli.Context) (status int, err error) {
	s := sessionOf(c)
	o, err := watchOptionsOf(c)
	if err != nil {
		return 0, err
	}
	argv := o.argv
	if o.journalGiven {
		return 0, runJournal(s, o)
	}
	// Fail now, not after a long recording, if the programs cannot be
	// read with their addresses or the snapshot cannot be written.
	k, err := live.Open()
	if err != nil {
		return 0, fmt.Errorf("the running kernel: %w", err)
	}
	out, err := openSnapshotOutput(s, o.outputOpts, true)
	if err != nil {
		return 0, err
	}
	defer out.Abort()
	if out.File == nil {
		// stdout: after CMD's own output
		if err := out.Hold(os.TempDir(), "the snapshot"); err != nil {
			return 0, err
		}
	}
	// From here on SIGINT, SIGTERM and SIGHUP stop the watch, or go to CMD.
	sigs := make(chan os.Signal, 4)
	defer s.ClaimSignals(sigs)()
	w, err := watch.StartSnapshot(k, out.Dest())
	var werr *writer.WriteError
	if errors.As(err, &werr) {
		return 0, out.Error(err)
	} else if err != nil {
		return 0, err
	}
	if len(argv) > 0 {
		cmd := childcmd.Command{Argv: argv, Stdin: c.App.Reader, Stdout: c.App.Writer, Stderr: c.App.ErrWriter}
		status, err = cmd.Run(sigs, w.Stopped(), func() {
			fmt.Fprintf(c.App.ErrWriter, "bpfmeta: watch: %s; waiting for %s to exit\n", safetext.Clean(fmt.Sprint(w.Err())), safetext.Quote(argv[0]))
		})
		if err != nil {
			w.Stop()
			return status, fmt.Errorf("watch: %w", err)
		}
	} else {
		if !o.quiet {
			fmt.Fprintf(c.App.ErrWriter, "bpfmeta: watch: following BPF program loads (%d loaded) until Ctrl-C (SIGINT), SIGTERM or SIGHUP\n", w.AtStart())
		}
		select {
		case <-sigs:
		case <-w.Stopped():
		}
	}
	st, _, err := w.Stop()
	if err != nil {
		// What was captured stays (watch.IncompleteError), but on stdout,
		// which gets a snapshot only whole.
		var inc *watch.IncompleteError
		if !errors.As(err, &inc) || out.File == nil {
			return status, fmt.Errorf("watch: %w; no snapshot written", err)
		}
		if cerr := out.Commit(); cerr != nil {
			return status, fmt.Errorf("watch: %w; %v", err, cerr)
		}
		return status, fmt.Errorf("watch: %w; %s %s", err, out.Name, inc.Holds())
	}
	if err := out.Release(); err != nil {
		return status, err
	}
	if err := out.Commit(); err != nil {
		return status, err
	}
	if !o.quiet {
		printWatchSummary(c.App.ErrWriter, out.Name, st, o.verbose)
	}
	return status, nil
}

// runJournal is watch --journal: the flight recorder, until SIGINT,
// SIGTERM, SIGHUP or SIGQUIT, each of which stops it the same way.
func runJournal(s *cliutil.Session, o watchOpts) error {
	k, err := live.Open()
	if err != nil {
		return fmt.Errorf("the running kernel: %w", err)
	}
	sigs := make(chan os.Signal, 4)
	defer s.ClaimSignals(sigs)()
	jw, err := journal.Create(o.journal, k.System(), journal.Options{MaxSize: o.maxSize})
	if err != nil {
		return err
	}
	w, err := watch.StartJournal(k, jw)
	if err != nil {
		jw.Close()
		return err
	}
	if !o.quiet {
		fmt.Fprintf(s.Stderr, "bpfmeta: watch: journal %s: following BPF program loads (%d loaded) until SIGINT, SIGTERM, SIGHUP or SIGQUIT\n", safetext.Quote(jw.Dir()), w.AtStart())
	}
	select {
	case <-sigs:
	case <-w.Stopped():
	}
	st, jst, err := w.Stop()
	if !o.quiet {
		// also after an error (ENOSPC): what was journaled until then
		printWatchSummary(s.Stderr, jw.Dir(), st, o.verbose)
		fmt.Fprintf(s.Stderr, "bpfmeta: watch: journal %s: %d loads, %d unloads and %d lost loads written; %d segments, %d bytes; %d segments (%d loads) dropped by --max-size since it began\n",
			safetext.Quote(jw.Dir()), jst.Loads, jst.Unloads, jst.Lost, jst.Segments, jst.Bytes, jst.DroppedSegments, jst.DroppedLoads)
	}
	if err != nil {
		return fmt.Errorf("watch: journal %s: %w", safetext.Quote(jw.Dir()), err)
	}
	return nil
}

// maxIDsListed is how many lost programs the summary names by id.
const maxIDsListed = 10

// printWatchSummary prints one line, and one more per program that could not
// be read for another reason than being gone (with -v).
func printWatchSummary(w io.Writer, name string, st watch.Stats, verbose bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "bpfmeta: watch: %s: %d BPF programs at start, %d loaded while watching (%d of all unloaded since), %d with metadata",
		name, st.AtStart, st.Loaded, st.Unloaded, st.WithMetadata)
	if st.LateMetadata > 0 {
		fmt.Fprintf(&b, " (%d bound after loading)", st.LateMetadata)
	}
	fmt.Fprintf(&b, "; %d lost (unloaded before they could be read)", st.Lost)
	var lost []string
	for _, m := range st.Missed {
		if m.Unloaded() && len(lost) < maxIDsListed {
			lost = append(lost, fmt.Sprint(m.ID))
		}
	}
	if len(lost) > 0 {
		more := ""
		if st.Lost > len(lost) {
			more = ", ..."
		}
		fmt.Fprintf(&b, ": id %s%s", strings.Join(lost, " "), more)
	}
	if st.LostRecords > 0 {
		fmt.Fprintf(&b, "; the kernel dropped %d perf records: programs loaded and unloaded meanwhile are unknown", st.LostRecords)
	}
	if st.Failed > 0 {
		fmt.Fprintf(&b, "; %d could not be read", st.Failed)
	}
	fmt.Fprintln(w, safetext.Clean(b.String()))
	if !verbose {
		return
	}
	for _, m := range st.Missed {
		if !m.Unloaded() {
			fmt.Fprintf(w, "bpfmeta: watch: %s\n", safetext.Clean(m.Err.Error()))
		}
	}
}
