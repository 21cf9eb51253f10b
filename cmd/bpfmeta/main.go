// Command bpfmeta adds BPF programs' metadata to perf.data recordings, and inspects it.
//
// It adds PERF_RECORD_BPF_METADATA records to perf.data recordings made by
// perf versions that do not write them, and inspects the BPF programs and
// metadata of a running system or a recording.
//
// This package is the command line: flags, wiring and printing. What the
// commands do is in the packages they call.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/cmd/internal/cliapp"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// Exit statuses, as docs/commands.md and the man page list them. A signal N
// that ends bpfmeta ends it as it ends any process: the shell reports
// 128+N (130 for SIGINT, 141 for SIGPIPE, 143 for SIGTERM). bpfmeta watch
// -- CMD exits with CMD's status, or childcmd.ExitCannotExec (126) or
// ExitNotFound (127).
const (
	exitOK      = cliutil.ExitOK
	exitFailure = cliutil.ExitFailure
	exitUsage   = cliutil.ExitUsage
)

// memoryLimit is the soft limit of the Go heap (GOMEMLIMIT overrides it):
// what bpfmeta keeps is bounded by the memory budget (budget.Limit, its
// read buffers outside the heap included), and near the limit the garbage
// collector runs before the heap doubles (GOGC), so that the process's
// peak stays close to what it holds. Measured on inputs that fill the
// budget (show, show --json, inject): 40 MiB peaked at 45-48 MiB; 32 MiB
// at 3-6 MiB less for up to 2.4 times the CPU, 48 MiB at 3-5 MiB more for
// little less CPU.
const memoryLimit = 40 << 20

func main() {
	if err := cliutil.CheckLimits(); err != nil {
		fmt.Fprintf(os.Stderr, "bpfmeta: %v\n", err)
		os.Exit(exitFailure)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	budget.Process().SetLimit(budget.Limit)
	s := cliutil.NewProcessSession()
	s.Exit(run(os.Args, s))
}

// run is main without the process: tests call it with a session of their
// own streams.
func run(args []string, s *cliutil.Session) int {
	app := newApp(s)
	if n := len(args); n > 1 && args[n-1] == cliapp.CompletionFlag {
		// the shell asks what can follow (bpfmeta completion's scripts)
		for _, w := range cliapp.Complete(app, args[1:n-1], completeArgs) {
			fmt.Fprintln(s.Stdout, w)
		}
		return exitOK
	}
	return s.Run(app, cliapp.ReorderFlags(app, args, "watch"))
}

// completeArgs are the words a command's arguments can be, where they
// are not files (nil: the shell completes file names).
func completeArgs(cmd string) []string {
	if cmd == "completion" {
		return cliapp.CompletionShells
	}
	return nil
}

// appDescription is bpfmeta -h's text, and the man page's DESCRIPTION.
const appDescription = `perf record >= 6.17 writes, for every JITed BPF function in a recording, the
program's read-only bpf_metadata_* variables (version, build, ...) as a
PERF_RECORD_BPF_METADATA record. bpfmeta adds these records to recordings made
by older perf (distributions ship perf 6.1 to 6.12), taking the
metadata from the running kernel or from a snapshot, exactly where and as perf
record would have written them; it also shows them without a modern perf.
(Since 6.18, perf writes them only when built against libbpf >= 1.7.)

The commands that read a recording take it as -i FILE or as their argument
(- for stdin; without either, stdin, or ./perf.data when stdin is a terminal),
those that write one -o FILE (- for stdout, where the recording is in pipe
format).`

// appHelpNotes end bpfmeta -h; the man page has them as sections of their
// own (manSections).
const appHelpNotes = `Exit status: 0 success; 1 failure (the message says why; no output file is
left); 2 usage error; 128+N when signal N ended bpfmeta (130 SIGINT, 141
SIGPIPE, 143 SIGTERM); bpfmeta watch -- CMD exits with CMD's status (126 when
CMD cannot be run, 127 when it is not found).

Environment: TMPDIR, where a file-format recording read from a pipe, a
snapshot read from a pipe, and the output --strict holds back, are kept
meanwhile (unnamed files, gone with bpfmeta); GOMEMLIMIT, the Go heap's soft
limit (default 40MiB; a malformed value stops the Go runtime, with its
trace, before bpfmeta starts).`

// manSections are the man page's sections after the commands.
var manSections = []cliapp.ManSection{
	{Title: "Exit status", Items: [][2]string{
		{"0", "success"},
		{"1", "failure: the message says why; no output file is left behind"},
		{"2", "usage error (an unknown flag or command, a missing value, stray arguments, an output that is the input or inside it)"},
		{"128+N", "signal N ended bpfmeta before its output was complete (130 SIGINT, 141 SIGPIPE: stdout was closed, 143 SIGTERM): one line says so and the output is removed; a signal after the output is complete changes nothing. SIGINT and SIGTERM stop bpfmeta even when it started with them ignored (a script's background job), as they stop perf record"},
		{"CMD's", "bpfmeta watch -- CMD exits with CMD's status; 126 when CMD cannot be run, 127 when it is not found"},
	}},
	{Title: "Environment", Items: [][2]string{
		{"TMPDIR", "where a file-format recording read from a pipe, a snapshot read from a pipe, and the output --strict holds back are kept while bpfmeta runs (unnamed files, gone when it ends)"},
		{"GOMEMLIMIT", "the Go heap's soft limit (default 40MiB): what bpfmeta keeps is bounded by its memory budget of 40 MiB; a malformed value stops the Go runtime, with its trace, before bpfmeta starts"},
	}},
	{Title: "Files", Items: [][2]string{
		{"./perf.data", "the recording a reading command reads when stdin is a terminal and no FILE is given, as perf report does"},
		{"PREFIX/share/doc/bpfmeta/README.md", "the README, which make install installs with docs/ beside it: docs/json.md describes the JSON of show --json, programs --json and snapshots; docs/safety.md, running as root"},
		{".NAME.tmpXXXXXXXXXX", "a new output NAME is written as an unnamed file in its directory (O_TMPFILE), linked as NAME when complete, and nothing is left of it on any failure or signal; where the file system has no O_TMPFILE, and for a directory recording, it is written under this name beside NAME instead, renamed when complete and removed on any failure or signal"},
	}},
	{Title: "Examples", Text: `Record with the distribution's perf, add the metadata, and print it:
    perf record -o perf.data -a -- sleep 1
    bpfmeta inject -i perf.data -o perf.meta.data
    bpfmeta show perf.meta.data

In a pipeline:
    perf record -o - -a -- sleep 1 | bpfmeta inject | bpfmeta show

Keep the metadata of programs unloaded before inject runs:
    bpfmeta watch -o watch.jsonl -- perf record -o watched.data -- sleep 1
    bpfmeta inject --snapshot watch.jsonl -i watched.data -o watched.meta.data

Give perf before 6.17 a recording it reads:
    bpfmeta strip -i perf.meta.data -o perf.stripped.data`},
	{Title: "See also", Text: "perf-record(1), perf-inject(1), perf-script(1), bpftool-prog(8)"},
}

func newApp(s *cliutil.Session) *cli.App {
	cmds := commands()
	for _, c := range cmds {
		// "bpfmeta dump help" is a stray argument, not a help command.
		c.HideHelpCommand = true
		c.OnUsageError = commandUsageError
		c.Before = quietAndVerbose
		cliapp.SetHelp("bpfmeta", c)
	}
	app := &cli.App{
		Name:        "bpfmeta",
		Usage:       "add BPF program metadata (PERF_RECORD_BPF_METADATA) to perf.data recordings",
		UsageText:   "bpfmeta COMMAND [options]   (bpfmeta COMMAND -h explains one)",
		Description: appDescription + "\n\n" + appHelpNotes,
		Reader:      s.Stdin,
		Writer:      s.Stdout,
		ErrWriter:   s.Stderr,
		// --version is handled by noCommand, so that -v stays free for
		// the commands' --verbose.
		HideVersion:     true,
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: flagVersion, Usage: "print the version (as bpfmeta version)", DisableDefaultText: true},
			// moved after the command by cliapp.ReorderFlags
			&cli.BoolFlag{Name: flagQuiet, Aliases: []string{"q"}, Usage: "the command's -q: bpfmeta -q COMMAND is bpfmeta COMMAND -q", DisableDefaultText: true},
			&cli.BoolFlag{Name: flagVerbose, Aliases: []string{"v"}, Usage: "the command's -v", DisableDefaultText: true},
		},
		// Errors are printed once, by run, as "bpfmeta: ...".
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return cliutil.Usagef("%s (bpfmeta -h shows the options)", flagError(c.App.Flags, err))
		},
		// Runs when no command matched.
		Action:   noCommand,
		Commands: cmds,
		Metadata: map[string]any{sessionKey: s},
	}
	cliapp.SetAppHelp(app)
	return app
}

// commands lists the commands, the main job first; each has a file.
func commands() []*cli.Command {
	return []*cli.Command{
		injectCommand(),
		showCommand(),
		annotateCommand(),
		stripCommand(),
		snapshotCommand(),
		watchCommand(),
		programsCommand(),
		dumpCommand(),
		convertCommand(),
		versionCommand(),
		completionCommand(),
		manCommand(),
	}
}

// sessionKey is where a command finds its session in the app's Metadata.
const sessionKey = "session"

func sessionOf(c *cli.Context) *cliutil.Session {
	return c.App.Metadata[sessionKey].(*cliutil.Session)
}

// commandUsageError makes a command's flag errors usage errors (exit 2,
// one line) instead of urfave/cli's "Incorrect Usage" and the whole help.
func commandUsageError(c *cli.Context, err error, _ bool) error {
	return cliutil.Usagef("%s: %s (bpfmeta %s -h shows the options)", c.Command.Name, flagError(c.Command.Flags, err), c.Command.Name)
}

// flagError is the message for an error of the flag package parsing
// flags: the flag named as it is written (the package names every flag
// -name, --name here), a flag that does not exist with the nearest that
// does.
func flagError(flags []cli.Flag, err error) string {
	long := func(flag string) string {
		if name := strings.TrimLeft(flag, "-"); len(name) > 1 {
			return "--" + name
		}
		return flag
	}
	msg := err.Error()
	if flag, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		flag = long(flag)
		msg = "no flag " + safetext.Quote(flag)
		if sug := cliapp.SuggestFlag(flags, flag); sug != "" {
			msg += "; did you mean " + sug + "?"
		}
	} else if flag, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		msg = long(flag) + " needs a value"
	}
	return msg
}

// flagVersion is bpfmeta --version.
const flagVersion = "version"

// appOpts are the options of bpfmeta itself (without a command): its -q
// and -v are moved after the command (cliapp.ReorderFlags).
type appOpts struct {
	version bool
}

func appOptionsOf(c *cli.Context) appOpts {
	return appOpts{version: c.Bool(flagVersion)}
}

// noCommand handles what names no command: --version, help, a bare
// bpfmeta (the usage, and exit 2, as any usage error), and typos (a
// suggestion).
func noCommand(c *cli.Context) error {
	args := c.Args()
	if appOptionsOf(c).version {
		if args.Present() {
			return cliutil.Usagef("--version takes no arguments")
		}
		_, err := fmt.Fprintln(c.App.Writer, cliapp.Version("bpfmeta"))
		return err
	}
	switch {
	case !args.Present():
		// bpfmeta -h's help (cli.ShowAppHelp's template), on stderr
		tmpl := c.App.CustomAppHelpTemplate
		if tmpl == "" {
			tmpl = cli.AppHelpTemplate
		}
		cli.HelpPrinter(c.App.ErrWriter, tmpl, c.App)
		return cliutil.Usagef("no command given (bpfmeta -h lists them)")
	case args.First() == "help" && args.Len() == 1:
		return cli.ShowAppHelp(c)
	case args.First() == "help" && args.Len() == 2 && c.App.Command(args.Get(1)) != nil:
		return cli.ShowCommandHelp(c, args.Get(1))
	case args.First() == "help":
		return cliutil.Usagef("help: no command %s (bpfmeta -h lists them)", safetext.Quote(strings.Join(args.Tail(), " ")))
	}
	msg := fmt.Sprintf("no command %s", safetext.Quote(args.First()))
	if cli.SuggestCommand != nil {
		if sug := cli.SuggestCommand(c.App.Commands, args.First()); sug != "" {
			msg += "; d" + strings.TrimPrefix(sug, "D") // "Did you mean ...?"
		}
	}
	return cliutil.Usagef("%s (bpfmeta -h lists them)", msg)
}

// noArgs fails a command that takes no arguments but got some.
func noArgs(c *cli.Context, how string) error {
	if c.Args().Present() {
		return cliutil.Usagef("%s takes no arguments (%s); got %s", c.Command.Name, how, safetext.Quote(c.Args().First()))
	}
	return nil
}
