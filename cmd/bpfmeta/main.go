// Command bpfmeta adds PERF_RECORD_BPF_METADATA records to perf.data
// recordings made by perf versions that do not write them, and inspects
// the BPF programs and metadata of a running system or a recording.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes, as a Unix tool's: 0 success, 1 failure, 2 usage error.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: tests call it with their own streams.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	if err := app.Run(args); err != nil {
		var st exitStatusError
		if errors.As(err, &st) {
			if st.err != nil {
				fmt.Fprintf(stderr, "bpfmeta: %v\n", st.err)
			}
			return st.status
		}
		var uerr usageError
		fmt.Fprintf(stderr, "bpfmeta: %v\n", err)
		if errors.As(err, &uerr) {
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}

// usageError marks errors in how the command was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitStatusError makes run exit with status, after printing err if it
// is not nil: bpfmeta watch -- CMD exits with CMD's status.
type exitStatusError struct {
	status int
	err    error
}

func (e exitStatusError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("exit status %d", e.status)
}

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	cmds := commands()
	for _, c := range cmds {
		// "bpfmeta dump help" is a stray argument, not a help command.
		c.HideHelpCommand = true
		c.OnUsageError = commandUsageError
	}
	return &cli.App{
		Name:  "bpfmeta",
		Usage: "add BPF program metadata (PERF_RECORD_BPF_METADATA) to perf.data recordings",
		Description: "perf record >= 6.16 writes, for every BPF function in a recording, the program's\n" +
			"read-only bpf_metadata_* variables (version, build, ...). bpfmeta adds these\n" +
			"records to recordings made by older perf, taking the metadata from the running\n" +
			"kernel or from a snapshot, exactly where and as perf record would have written them.",
		// --version is handled by noCommand, so that -v stays free for
		// the commands' --verbose.
		HideVersion:          true,
		EnableBashCompletion: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "version", Usage: "print the version (as bpfmeta version)"},
		},
		Reader:          stdin,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// Errors are printed once, by run, as "bpfmeta: ...".
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{err}
		},
		// Runs when no command matched.
		Action:   noCommand,
		Commands: cmds,
	}
}

// commandUsageError makes a command's flag errors usage errors (exit 2,
// one line) instead of urfave/cli's "Incorrect Usage" and the whole help.
func commandUsageError(c *cli.Context, err error, _ bool) error {
	return usagef("%s: %v (bpfmeta %s -h shows the options)", c.Command.Name, err, c.Command.Name)
}

// noCommand shows the help without arguments, and for "help [COMMAND]";
// anything else is not a command.
func noCommand(c *cli.Context) error {
	args := c.Args()
	if c.Bool("version") {
		if args.Present() {
			return usagef("--version takes no arguments")
		}
		_, err := fmt.Fprintln(c.App.Writer, versionText())
		return err
	}
	switch {
	case !args.Present():
		return cli.ShowAppHelp(c)
	case args.First() == "help" && args.Len() == 1:
		return cli.ShowAppHelp(c)
	case args.First() == "help" && args.Len() == 2 && c.App.Command(args.Get(1)) != nil:
		return cli.ShowCommandHelp(c, args.Get(1))
	case args.First() == "help":
		return usagef("help: no command %q (bpfmeta -h lists them)", strings.Join(args.Tail(), " "))
	}
	return usagef("no command %q (bpfmeta -h lists them)", args.First())
}
