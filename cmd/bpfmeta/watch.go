package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog"
)

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:      "watch",
		Usage:     "follow BPF program loads and save each program's metadata as it loads, while CMD runs",
		ArgsUsage: "[-- CMD [ARGS...]]",
		Description: "Follows BPF program loads as they happen, as perf record's side-band thread does (a\n" +
			"perf event with bpf_event set, on every CPU), and reads each new program and its\n" +
			"bpf_metadata_* variables the moment it is loaded, together with every program already\n" +
			"loaded. The snapshot it writes (the format of bpfmeta snapshot) lets bpfmeta inject\n" +
			"--snapshot label programs that were loaded and unloaded during a recording, which the\n" +
			"running kernel can no longer tell about.\n\n" +
			"With -- CMD, it starts CMD (typically perf record ...) once it follows the loads, so\n" +
			"that no load by CMD is missed; passes SIGINT and SIGTERM on to CMD; stops when CMD\n" +
			"exits and exits with CMD's status (its exit code, or 128+N if signal N ended it).\n" +
			"Without CMD it runs until SIGINT or SIGTERM, and exits 0. Either way it then writes the\n" +
			"snapshot, atomically (an existing FILE is replaced only with -f; with -o - it goes to\n" +
			"stdout after CMD's own output), and a summary line to stderr: programs at start, loaded\n" +
			"while watching, with metadata, and lost (unloaded before they could be read, by id).\n" +
			"A program that shows no metadata when loaded is read again for up to 255 ms: libbpf\n" +
			"binds .rodata to a program only after loading it. Needs root.\n\n" +
			"Examples:\n" +
			"  bpfmeta watch -o progs.json -- perf record -a -o perf.data -- ./workload\n" +
			"  bpfmeta inject --snapshot progs.json -i perf.data -o perf.meta.data\n" +
			"  bpfmeta watch -f -o /var/tmp/progs.json        (until Ctrl-C)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the snapshot to `FILE` (- for standard output)", TakesFile: true},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace FILE if it exists"},
		},
		Action: func(c *cli.Context) error {
			status, err := watch(c)
			if status == 0 {
				return err
			}
			return exitStatusError{status: status, err: err} // CMD's
		},
	}
}

// Exit statuses for a CMD that could not be started, as env(1) and the
// shells have them, and the base of a status for a CMD ended by a signal.
const (
	exitCannotExec = 126
	exitNotFound   = 127
	exitSignalBase = 128
)

// watch runs the watch and returns the status to exit with when it is not
// 0 (CMD's), and an error to report.
func watch(c *cli.Context) (status int, err error) {
	out, argv, force := c.String("output"), c.Args().Slice(), c.Bool("force")
	if out == "" {
		return 0, usagef("watch: -o FILE is required (-o - for standard output)")
	}
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	name := out
	// Fail now, not after a long recording, if the snapshot cannot be written.
	var file *atomicFile
	if out == "-" {
		name = "stdout"
	} else {
		if !force {
			if _, err := os.Lstat(out); err == nil {
				return 0, fmt.Errorf("watch: %s exists (-f replaces it)", out)
			}
		}
		if file, err = createAtomic(out); err != nil {
			return 0, fmt.Errorf("watch: %w", err)
		}
		defer func() {
			if file != nil {
				file.abort()
			}
		}()
	}

	// From here on SIGINT and SIGTERM stop the watch, or go to CMD.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	live, err := bpfprog.NewLive()
	if err != nil {
		return 0, fmt.Errorf("watch: %w", err)
	}
	w, err := bpfprog.NewWatcher(live, bpfprog.WatchOptions{})
	if err != nil {
		return 0, fmt.Errorf("watch: %w", err)
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
		fmt.Fprintf(stderr, "bpfmeta: watch: following BPF program loads (%d loaded); SIGINT or SIGTERM stops\n", w.Stats().AtStart)
		select {
		case <-sigs:
		case <-stopped:
		}
	}
	cancel()
	<-stopped
	if runErr != nil {
		return status, fmt.Errorf("watch: %w; no snapshot written", runErr)
	}

	dst := stdout
	if file != nil {
		dst = file
	}
	if err := writeWatchSnapshot(dst, live.System(), w.Programs()); err != nil {
		return status, fmt.Errorf("watch: %s: %w", name, err)
	}
	if file != nil {
		err := file.commit(force)
		file = nil
		if err != nil {
			return status, fmt.Errorf("watch: %w", err)
		}
	}
	printWatchSummary(stderr, name, w.Stats())
	return status, nil
}

// runCommand starts CMD, passes the signals on to it until it exits, and
// returns its exit status. It says at once if the watch fails meanwhile, but
// lets CMD run on.
func runCommand(c *cli.Context, argv []string, sigs <-chan os.Signal, stopped <-chan struct{}, runErr *error) (int, error) {
	stderr := c.App.ErrWriter
	select {
	case s := <-sigs:
		return exitSignalBase + int(s.(syscall.Signal)), fmt.Errorf("watch: %v before %s was started", s, argv[0])
	default:
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.App.Reader, c.App.Writer, stderr
	if err := cmd.Start(); err != nil {
		status := exitCannotExec
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			status = exitNotFound
		}
		return status, fmt.Errorf("watch: %w", err)
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
			fmt.Fprintf(stderr, "bpfmeta: watch: %v; waiting for %s to exit\n", *runErr, argv[0])
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

func writeWatchSnapshot(w io.Writer, sys bpfprog.System, progs []*bpfprog.Program) error {
	sw, err := bpfprog.NewSnapshotWriter(w, sys, time.Now())
	if err != nil {
		return err
	}
	for _, p := range progs {
		if err := sw.Add(p); err != nil {
			return err
		}
	}
	return sw.Close()
}

// printWatchSummary prints one line, and one more per program that could not
// be read for another reason than being gone.
func printWatchSummary(w io.Writer, name string, st bpfprog.WatchStats) {
	var b strings.Builder
	fmt.Fprintf(&b, "bpfmeta: watch: %s: %d BPF program(s) at start, %d loaded while watching (%d of the %d unloaded since), %d with metadata",
		name, st.AtStart, st.Loaded, st.Unloaded, st.AtStart+st.Loaded, st.WithMetadata)
	if st.LateMetadata > 0 {
		fmt.Fprintf(&b, " (%d bound after loading)", st.LateMetadata)
	}
	lost := st.Lost()
	fmt.Fprintf(&b, "; %d lost (unloaded before they could be read)", len(lost))
	if len(lost) > 0 {
		b.WriteString(": id")
		for _, m := range lost {
			b.WriteString(" " + strconv.FormatUint(uint64(m.ID), 10))
		}
	}
	if st.LostRecords > 0 {
		fmt.Fprintf(&b, "; the kernel dropped %d perf record(s): programs loaded and unloaded meanwhile are unknown", st.LostRecords)
	}
	var failed []bpfprog.MissedProgram
	for _, m := range st.Missed {
		if !m.Unloaded() {
			failed = append(failed, m)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(&b, "; %d could not be read", len(failed))
	}
	fmt.Fprintln(w, b.String())
	for _, m := range failed {
		fmt.Fprintf(w, "bpfmeta: watch: %s\n", strings.TrimPrefix(m.Err.Error(), "bpfprog: "))
	}
}
