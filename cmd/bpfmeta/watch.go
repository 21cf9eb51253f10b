package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/watch"
	"github.com/bpfmeta/bpfmeta/internal/childcmd"
	"github.com/bpfmeta/bpfmeta/internal/cliutil"
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

Examples:
   bpfmeta watch -o progs.jsonl -- perf record -a -o perf.data -- ./workload
   bpfmeta inject --snapshot progs.jsonl -i perf.data -o perf.meta.data
   bpfmeta watch -f -o /var/tmp/progs.jsonl        (until Ctrl-C)`,
		Flags: []cli.Flag{outputFlag("snapshot"), forceFlag(), quietFlag(),
			verboseFlag("name every program that could not be read")},
		Action: func(c *cli.Context) error {
			status, err := runWatch(c)
			if status == 0 {
				return err
			}
			return cliutil.ExitStatusError{Status: status, Err: err} // CMD's
		},
	}
}

// runWatch runs the watch and returns the status to exit with when it is
// not 0 (CMD's), and an error to report.
func runWatch(c *cli.Context) (status int, err error) {
	s := sessionOf(c)
	argv := c.Args().Slice()
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	// Fail now, not after a long recording, if the programs cannot be
	// read with their addresses or the snapshot cannot be written.
	k, err := live.New()
	if err != nil {
		return 0, err
	}
	if err := k.Check(); err != nil {
		return 0, fmt.Errorf("the running kernel: %w", err)
	}
	out, err := openSnapshotOutput(c, true)
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
		if !c.Bool("quiet") {
			fmt.Fprintf(c.App.ErrWriter, "bpfmeta: watch: following BPF program loads (%d loaded) until Ctrl-C (SIGINT), SIGTERM or SIGHUP\n", w.AtStart())
		}
		select {
		case <-sigs:
		case <-w.Stopped():
		}
	}
	st, written, err := w.Stop()
	if err != nil {
		if written == 0 || out.File == nil {
			return status, fmt.Errorf("watch: %w; no snapshot written", err)
		}
		// What was captured stays: an incomplete snapshot inject reads.
		if cerr := out.Commit(); cerr != nil {
			return status, fmt.Errorf("watch: %w; %v", err, cerr)
		}
		return status, fmt.Errorf("watch: %w; %s holds the %s read before (an incomplete snapshot)", err, out.Name, plural(written, "program"))
	}
	if err := out.Release(); err != nil {
		return status, err
	}
	if err := out.Commit(); err != nil {
		return status, err
	}
	if !c.Bool("quiet") {
		printWatchSummary(c.App.ErrWriter, out.Name, st, c.Bool("verbose"))
	}
	return status, nil
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
