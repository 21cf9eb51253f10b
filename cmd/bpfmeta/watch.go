package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/watch"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
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
			return exitStatusError{status: status, err: err} // CMD's
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
	// Fail now, not after a long recording, if the snapshot cannot be
	// written.
	out, err := openOutput(c, nil, textOutput, true)
	if err != nil {
		return 0, err
	}
	defer out.abort()
	if out.file == nil {
		// stdout: after CMD's own output
		if err := out.hold("the snapshot"); err != nil {
			return 0, err
		}
	}
	dst := out.dest()

	// From here on SIGINT, SIGTERM and SIGHUP stop the watch, or go to CMD.
	sigs := make(chan os.Signal, 4)
	defer s.claimSignals(sigs)()

	live, err := bpfprog.NewLive()
	if err != nil {
		return 0, err
	}
	sw, err := bpfprog.NewSnapshotWriter(dst, live.System(), time.Now())
	if err != nil {
		return 0, out.writeError(err)
	}
	written := 0
	w, err := watch.New(live, watch.Options{Emit: func(p *bpfprog.Program) error {
		if err := sw.Add(p); err != nil {
			return err
		}
		written++
		return nil
	}})
	if err != nil {
		return 0, err
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runErr error
	stopped := make(chan struct{})
	go func() {
		runErr = w.Run(ctx)
		close(stopped)
	}()

	if len(argv) > 0 {
		status, err = runCommand(c, argv, sigs, stopped, &runErr)
		if err != nil {
			cancel()
			<-stopped
			return status, err
		}
	} else {
		if !c.Bool("quiet") {
			fmt.Fprintf(c.App.ErrWriter, "bpfmeta: watch: following BPF program loads (%d loaded); SIGINT, SIGTERM or SIGHUP stops\n", w.Stats().AtStart)
		}
		select {
		case <-sigs:
		case <-stopped:
		}
	}
	cancel()
	<-stopped
	st := w.Stats()
	endErr := sw.Close(bpfprog.SnapshotEnd{Until: time.Now(), Missed: st.Lost + st.Failed})
	if runErr != nil || endErr != nil {
		err := errors.Join(runErr, endErr)
		if written == 0 || out.file == nil {
			return status, fmt.Errorf("watch: %w; no snapshot written", err)
		}
		// What was captured stays: an incomplete snapshot inject reads.
		if cerr := out.commit(); cerr != nil {
			return status, fmt.Errorf("watch: %w; %v", err, cerr)
		}
		return status, fmt.Errorf("watch: %w; %s holds the %s read before (an incomplete snapshot)", err, out.name, plural(written, "program"))
	}
	if err := out.release(); err != nil {
		return status, err
	}
	if err := out.commit(); err != nil {
		return status, err
	}
	if !c.Bool("quiet") {
		printWatchSummary(c.App.ErrWriter, out.name, st, c.Bool("verbose"))
	}
	return status, nil
}

// runCommand starts CMD, passes the signals on to it until it exits, and
// returns its exit status. It says at once if the watch fails meanwhile, but
// lets CMD run on.
func runCommand(c *cli.Context, argv []string, sigs <-chan os.Signal, stopped <-chan struct{}, runErr *error) (int, error) {
	stderr := c.App.ErrWriter
	select {
	case s := <-sigs:
		return exitSignalBase + int(s.(syscall.Signal)), fmt.Errorf("watch: %v before %s was started", s, safetext.Quote(argv[0]))
	default:
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.App.Reader, c.App.Writer, stderr
	if err := cmd.Start(); err != nil {
		status := exitCannotExec
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			status = exitNotFound
		}
		return status, fmt.Errorf("watch: %s: %v", safetext.Quote(argv[0]), errors.Unwrap(err))
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	for {
		select {
		case s := <-sigs:
			// An error means CMD has just exited: exited tells.
			cmd.Process.Signal(s)
		case <-stopped:
			fmt.Fprintf(stderr, "bpfmeta: watch: %s; waiting for %s to exit\n", safetext.Clean(fmt.Sprint(*runErr)), safetext.Quote(argv[0]))
			stopped = nil
		case <-exited:
			return exitStatus(cmd.ProcessState), nil
		}
	}
}

// exitStatus is a shell's $? for a process: its exit code, or 128+N if
// signal N ended it.
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitSignalBase + int(ws.Signal())
	}
	return ps.ExitCode()
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
