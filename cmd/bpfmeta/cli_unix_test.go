package main

// bpfmeta behaves as a Unix tool: help, exit codes, one-line errors that
// name the file and the offset, outputs that appear complete or not at all,
// inputs that are never written, stdin and stdout.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// readingCommand is a command that reads a recording, with the arguments
// that make it run without the kernel.
type readingCommand struct {
	name   string
	args   []string
	writes bool // takes -o for a recording
}

func readingCommands(snapshot string) []readingCommand {
	return []readingCommand{
		{"dump", []string{"dump"}, false},
		{"dump --stats", []string{"dump", "--stats"}, false},
		{"show", []string{"show"}, false},
		{"show --json", []string{"show", "--json"}, false},
		{"convert", []string{"convert"}, true},
		{"strip", []string{"strip", "-q"}, true},
		{"inject", []string{"inject", "-q", "--snapshot", snapshot}, true},
	}
}

// writingCommands are the reading commands that write a recording.
func writingCommands(snapshot string) []readingCommand {
	var ws []readingCommand
	for _, c := range readingCommands(snapshot) {
		if c.writes {
			ws = append(ws, c)
		}
	}
	return ws
}

func with(args []string, more ...string) []string {
	return append(append([]string(nil), args...), more...)
}

// emptySnapshot writes a snapshot without programs: inject runs without
// the kernel and resolves nothing.
func emptySnapshot(t testing.TB) string {
	t.Helper()
	return snapshotFile(t, &bpfprog.List{
		Sys: bpfprog.System{KernelRelease: "6.18.0-test", BootID: "00000000-0000-0000-0000-000000000000", Hostname: "bpfmeta-test"},
	})
}

func snapshotFile(t testing.TB, s *bpfprog.List) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := snapshot.Take(&b, s); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCLIHelp: every command explains itself with examples on -h and
// --help, on stdout, exit 0.
func TestCLIHelp(t *testing.T) {
	type helpCase struct {
		args []string
		name string // the command the help is about, "" for bpfmeta
	}
	cases := []helpCase{{[]string{"-h"}, ""}, {[]string{"--help"}, ""}, {[]string{"help"}, ""}}
	for _, c := range commands() {
		if c.Hidden {
			continue
		}
		cases = append(cases,
			helpCase{[]string{c.Name, "-h"}, c.Name},
			helpCase{[]string{c.Name, "--help"}, c.Name},
			helpCase{[]string{"help", c.Name}, c.Name})
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := bpfmeta(t, nil, tc.args...)
			if r.code != exitOK || r.stderr != "" {
				t.Fatalf("%v, want exit 0 and nothing on stderr", r)
			}
			if tc.name == "" {
				for _, c := range commands() {
					if !c.Hidden && !strings.Contains(r.stdout, "   "+c.Name+" ") {
						t.Errorf("the help does not list the command %s:\n%s", c.Name, r.stdout)
					}
				}
				return
			}
			for _, want := range []string{"NAME:\n   bpfmeta " + tc.name + " - ", "USAGE:", "DESCRIPTION:", "Examples:", "OPTIONS:", "-h, --help"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the help does not have %q:\n%s", want, r.stdout)
				}
			}
			_, examples, _ := strings.Cut(r.stdout, "Examples:")
			examples, _, _ = strings.Cut(examples, "OPTIONS:")
			if strings.Count(examples, "bpfmeta "+tc.name) < 2 {
				t.Errorf("fewer than two examples of bpfmeta %s:\n%s", tc.name, examples)
			}
			if strings.Contains(r.stdout, "COMMANDS:") {
				t.Errorf("a command without subcommands lists COMMANDS:\n%s", r.stdout)
			}
		})
	}
}

// TestHelpGolden: the help of bpfmeta and of every command is
// testdata/help/NAME.txt (go test -update rewrites them): a change to what
// -h says shows in review, next to the README and man page it must agree
// with.
func TestHelpGolden(t *testing.T) {
	names := []string{""}
	for _, c := range commands() {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	for _, name := range names {
		args, file := []string{"-h"}, "bpfmeta"
		if name != "" {
			args, file = []string{name, "-h"}, name
		}
		r := bpfmeta(t, nil, args...)
		testkit.Golden(t, filepath.Join(cliGoldenDir, "help", file+".txt"), []byte(r.stdout))
	}
	// and the messages of the common mistakes
	var msgs strings.Builder
	for _, args := range [][]string{{}, {"injct"}, {"inject", "--nosuch"}, {"programs", "--json", "--journal", "x"}, {"show", "a.data", "b.data"}, {"show", "-i", "a.data", "b.data"}, {"show", "--jsn"}, {"inject", "--snap", "x"}, {"dump", "--stat"}, {"strip", "-q", "-v"}, {"completion", "tcsh"}} {
		r := bpfmeta(t, nil, args...)
		fmt.Fprintf(&msgs, "$ bpfmeta %s\nexit %d\n%s\n", strings.Join(args, " "), r.code, lastLine(r.stderr))
	}
	testkit.Golden(t, filepath.Join(cliGoldenDir, "help", "usage-errors.txt"), []byte(msgs.String()))
}

// TestCLIUsageErrors: unknown flags, missing flag values and stray
// arguments are usage errors: exit 2, one line "bpfmeta: ...", nothing on
// stdout, no output file.
func TestCLIUsageErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.data")
	in := corpusPath(t, smallFile)
	snap := emptySnapshot(t)
	cases := [][]string{
		{"--bogus"},
		{"no-such-command"},
		{"help", "no-such-command"},
		{"programs", "--bogus"},
		{"watch", "--bogus"},
		{"programs", "--json", "--journal", "x"},
		{"snapshot", "--bogus"},
		{"snapshot", "-o", out, "stray"},
		{"injct"}, // did you mean inject?
		{"snapshot", "-o"},
		{"show", "--prog"},
		{"inject", "--snapshot"},
	}
	for _, c := range readingCommands(snap) {
		cases = append(cases,
			with(c.args, "--bogus"),
			with(c.args, "-x"),
			with(c.args, "-i", in, "stray"),
			with(c.args, "-i", in, "help"),
			with(c.args, "-i", in, "h"),
			with(c.args, "stray", "-i", in),
			with(c.args, "-i"),
			with(c.args, "-i", in, "--max-expansion", "-1"),
			with(c.args, "-i", in, "--max-expansion", "many"))
		if c.writes {
			cases = append(cases, with(c.args, "-i", in, "-o", out, "stray"), with(c.args, "-i", in, "-o"))
		}
	}
	for _, args := range cases {
		name := strings.NewReplacer(in, filepath.Base(in), out, "OUT", snap, "SNAP").Replace(strings.Join(args, " "))
		t.Run(name, func(t *testing.T) {
			r := bpfmeta(t, nil, args...)
			if r.code != exitUsage {
				t.Errorf("%v, want exit 2", r)
			}
			oneLine(t, "usage error", r)
			if r.stdout != "" {
				t.Errorf("stdout has %d bytes, want nothing", len(r.stdout))
			}
			if names := testkit.DirNames(t, dir); len(names) != 0 {
				t.Errorf("the output directory has %v after a usage error", names)
			}
			// a flag is named as it is written: --name, not the flag
			// package's -name
			if last := args[len(args)-1]; strings.HasPrefix(last, "--") && !strings.Contains(r.stderr, last) {
				t.Errorf("the message does not name %s: %v", last, r)
			}
		})
	}
}

// TestCLIBare: bpfmeta alone prints its usage on stderr and exits 2, as a
// usage error; a mistyped command gets a suggestion.
func TestCLIBare(t *testing.T) {
	help := bpfmeta(t, nil, "-h")
	for _, args := range [][]string{nil, {"-q"}, {"-v"}} {
		r := bpfmeta(t, nil, args...)
		if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "USAGE:") || !strings.HasSuffix(r.stderr, "bpfmeta: no command given (bpfmeta -h lists them)\n") {
			t.Errorf("bpfmeta %q: %v, stdout %q; want exit 2 and the usage on stderr", args, r, r.stdout)
		}
		// the same help as -h's
		if got, _ := strings.CutSuffix(r.stderr, "bpfmeta: no command given (bpfmeta -h lists them)\n"); got != help.stdout {
			t.Errorf("bpfmeta %q prints another help than bpfmeta -h:\n%s\nwant\n%s", args, got, help.stdout)
		}
	}
	r := bpfmeta(t, nil, "injct")
	if r.code != exitUsage || !strings.Contains(r.stderr, "inject") {
		t.Errorf("bpfmeta injct: %v, want exit 2 and a suggestion", r)
	}
}

// TestCLIMissingInput: an input that is missing or cannot be read is exit 1
// and a line naming it.
func TestCLIMissingInput(t *testing.T) {
	dir := t.TempDir()
	snap := emptySnapshot(t)
	inputs := []struct {
		path string
		says string
	}{
		{filepath.Join(dir, "missing.data"), "no such file"},
		{dir, "is a directory"},
		{filepath.Join(corpusPath(t, smallFile), "x.data"), "not a directory"},
	}
	for _, c := range readingCommands(snap) {
		for _, in := range inputs {
			t.Run(c.name+" "+in.says, func(t *testing.T) {
				args := with(c.args, "-i", in.path)
				out := filepath.Join(t.TempDir(), "out.data")
				if c.writes {
					args = append(args, "-o", out)
				}
				r := bpfmeta(t, nil, args...)
				if r.code != exitFailure {
					t.Errorf("%v, want exit 1", r)
				}
				oneLine(t, "missing input", r, in.path, in.says)
				if _, err := os.Lstat(out); err == nil {
					t.Errorf("%s was written", out)
				}
			})
		}
	}
	t.Run("inject --snapshot missing", func(t *testing.T) {
		missing := filepath.Join(dir, "missing.json")
		r := bpfmeta(t, nil, "inject", "--snapshot", missing, "-i", corpusPath(t, smallFile), "-o", filepath.Join(dir, "out.data"))
		if r.code != exitFailure {
			t.Errorf("%v, want exit 1", r)
		}
		oneLine(t, "missing snapshot", r, missing)
	})
	t.Run("inject --snapshot not a snapshot", func(t *testing.T) {
		r := bpfmeta(t, nil, "inject", "--snapshot", corpusPath(t, smallFile), "-i", corpusPath(t, smallFile), "-o", filepath.Join(dir, "out.data"))
		if r.code != exitFailure {
			t.Errorf("%v, want exit 1", r)
		}
		oneLine(t, "not a snapshot", r, corpusPath(t, smallFile), "snapshot")
	})
}

// TestCLIUnreadableInput: a file the user may not read (the test runs as
// root, so bpfmeta runs as nobody for this) is exit 1 and a line naming it.
func TestCLIUnreadableInput(t *testing.T) {
	testkit.Root(t) // to run bpfmeta as nobody
	dir, err := os.MkdirTemp("", "bpfmeta-cli-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bpfmeta")
	if err := os.Rename(buildBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	in := copyFile(t, corpusPath(t, smallFile), dir)
	if err := os.Chmod(in, 0o600); err != nil {
		t.Fatal(err)
	}
	snap := copyFile(t, emptySnapshot(t), dir)
	for _, c := range readingCommands(snap) {
		t.Run(c.name, func(t *testing.T) {
			args := with(c.args, "-i", in)
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "_"))
			if c.writes {
				args = append(args, "-o", out)
			}
			cmd := exec.Command(bin, args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			r := result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
			if err != nil && r.code < 0 {
				t.Fatal(err)
			}
			if r.code != exitFailure {
				t.Errorf("%v, want exit 1", r)
			}
			oneLine(t, "unreadable input", r, in, "permission denied")
			if _, err := os.Lstat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// damagedInputs are recordings cut short or broken, each with what the
// error must say. They are made from the corpus in dir.
type damagedInput struct {
	name, path string
	says       []string
}

func damagedInputs(t *testing.T, dir string) []damagedInput {
	t.Helper()
	n := 0
	cut := func(name string, at func(size int) int) string {
		b, err := os.ReadFile(corpusPath(t, name))
		if err != nil {
			t.Fatal(err)
		}
		n++
		p := filepath.Join(dir, fmt.Sprintf("cut%d-%s", n, name))
		if err := os.WriteFile(p, b[:at(len(b))], 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return []damagedInput{
		{"file cut in the data", cut(smallFile, func(n int) int { return 0x800 }), []string{"data section", "past the end of the file"}},
		{"file cut in the features", cut(smallFile, func(n int) int { return n - 100 }), []string{"feature section", "past the end of the file"}},
		{"file cut in the header", cut(smallFile, func(n int) int { return 50 }), nil},
		{"pipe cut in a record", cut(smallPipe, func(n int) int { return 9001 }), []string{"truncated SAMPLE record", "0x2300"}},
		{"compressed pipe cut", cut(bpfPipe, func(n int) int { return n - 200 }), []string{"truncated"}},
		{"corrupt corpus file", corpusPath(t, corruptPipe), []string{"bad record size 0", corruptOffset}},
	}
}

// TestCLIDamagedInput: a damaged recording is exit 1 with a line naming the
// file and the byte offset, and leaves no output file and no temporary file
// next to where it would have been.
func TestCLIDamagedInput(t *testing.T) {
	dir := t.TempDir()
	snap := emptySnapshot(t)
	for _, in := range damagedInputs(t, dir) {
		for _, c := range readingCommands(snap) {
			outputs := []string{""}
			if c.writes {
				outputs = []string{"file", "-"}
			}
			for _, o := range outputs {
				t.Run(in.name+"/"+c.name+" -o "+o, func(t *testing.T) {
					outDir := t.TempDir()
					args := with(c.args, "-i", in.path)
					switch o {
					case "file":
						args = append(args, "-o", filepath.Join(outDir, "out.data"))
					case "-":
						args = append(args, "-o", "-")
					}
					before := stateOf(t, in.path)
					r := bpfmeta(t, nil, args...)
					if r.code != exitFailure {
						t.Errorf("%v, want exit 1", r)
					}
					oneLine(t, "damaged input", r, append([]string{in.path + ": ", " at 0x"}, in.says...)...)
					if names := testkit.DirNames(t, outDir); len(names) != 0 {
						t.Errorf("the output directory has %v after the error", names)
					}
					before.check(t, in.path, "damaged input")
				})
			}
		}
	}
}

// TestCLIExistingOutput: for every command that writes a file (package
// outfile's one rule), an existing output of the caller's is refused with
// --no-clobber (exit 1, the file untouched), replaced without -f and kept
// as FILE.old, and replaced with -f, by a complete file (and no temporary
// file is left next to it).
func TestCLIExistingOutput(t *testing.T) {
	snap := emptySnapshot(t)
	type outCase struct {
		name string
		args []string
	}
	var cases []outCase
	for _, c := range writingCommands(snap) {
		cases = append(cases, outCase{c.name, with(c.args, "-i", corpusPath(t, smallFile))})
	}
	cases = append(cases, outCase{"snapshot", []string{"snapshot"}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "snapshot" {
				testkit.BPF(t) // reads the loaded programs
			}
			dir := t.TempDir()
			out := copyFile(t, emptySnapshot(t), dir) // any file: "snapshot.json"
			before := stateOf(t, out)
			r := bpfmeta(t, nil, with(c.args, "--no-clobber", "-o", out)...)
			if r.code != exitFailure {
				t.Errorf("--no-clobber: %v, want exit 1", r)
			}
			oneLine(t, "existing output", r, out, "--no-clobber", "-f")
			before.check(t, out, "--no-clobber")

			// without -f: replaced, the old one kept as FILE.old (perf
			// record's perf.data.old), which -f then leaves alone
			if r := bpfmeta(t, nil, with(c.args, "-o", out)...); r.code != exitOK {
				t.Fatalf("without -f: %v, want exit 0", r)
			}
			before.check(t, out+".old", "without -f, the file replaced")

			r = bpfmeta(t, nil, with(c.args, "-f", "-o", out)...)
			if r.code != exitOK {
				t.Fatalf("with -f: %v, want exit 0", r)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "snapshot" {
				if _, err := snapshot.Read(bytes.NewReader(got), int64(len(got))); err != nil {
					t.Errorf("with -f: the new snapshot does not read back: %v", err)
				}
			} else if want, _ := os.ReadFile(corpusPath(t, smallFile)); !bytes.Equal(got, want) {
				t.Errorf("with -f: the output (%d bytes) is not the recording (%d bytes)", len(got), len(want))
			}
			before.check(t, out+".old", "with -f, the file kept before")
			if names := testkit.DirNames(t, dir); len(names) != 2 {
				t.Errorf("the output directory has %v, want only %s and its .old", names, filepath.Base(out))
			}
		})
	}
}

// TestCLIOutputIsInput: -o naming the input, by any path, is refused, with
// or without -f, and the input stays as it was.
func TestCLIOutputIsInput(t *testing.T) {
	snap := emptySnapshot(t)
	dir := t.TempDir()
	in := copyFile(t, corpusPath(t, smallFile), dir)
	link := filepath.Join(dir, "link.data")
	if err := os.Symlink(filepath.Base(in), link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.data")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, in)
	base := filepath.Base(in)
	// not filepath.Join, which would clean them
	outs := []string{in, dir + "/./" + base, dir + "/sub/../" + base, dir + "//" + base, link, hard}
	for _, c := range writingCommands(snap) {
		for _, force := range []bool{false, true} {
			for _, o := range outs {
				args := with(c.args, "-i", in, "-o", o)
				name := c.name
				if force {
					args = append(args, "-f")
					name += " -f"
				}
				t.Run(name+" -o "+strings.TrimPrefix(o, dir), func(t *testing.T) {
					r := bpfmeta(t, nil, args...)
					if r.code == exitOK {
						t.Errorf("%v, want a refusal", r)
					}
					oneLine(t, "output is the input", r, o, "is the input")
					before.check(t, in, "output is the input")
				})
			}
			t.Run(c.name+" stdin is the output", func(t *testing.T) {
				f, err := os.Open(in)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				args := with(c.args, "-o", in)
				if force {
					args = append(args, "-f")
				}
				r := bpfmeta(t, f, args...)
				if r.code == exitOK {
					t.Errorf("%v, want a refusal", r)
				}
				oneLine(t, "output is stdin", r, in, "is the input")
				before.check(t, in, "output is stdin")
			})
		}
	}
	// Relative paths, from the input's directory: a real process with its
	// own working directory.
	bin := buildBinary(t)
	for _, c := range writingCommands(snap) {
		for _, pair := range [][2]string{{base, "./" + base}, {"./" + base, base}, {base, "link.data"}, {"sub/../" + base, "./" + base}} {
			iname, oname := pair[0], pair[1]
			t.Run(c.name+" relative "+iname+" "+oname, func(t *testing.T) {
				cmd := exec.Command(bin, with(c.args, "-f", "-i", iname, "-o", oname)...)
				cmd.Dir = dir
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				cmd.Run()
				r := result{cmd.ProcessState.ExitCode(), "", stderr.String()}
				if r.code == exitOK {
					t.Errorf("%v, want a refusal", r)
				}
				oneLine(t, "relative output is the input", r, "is the input")
				before.check(t, in, "relative")
			})
		}
	}
	if names := testkit.DirNames(t, dir); len(names) != 4 {
		t.Errorf("the directory has %v, want only the input, its links and sub", names)
	}
}

// TestCLIInputNotModified: no command writes its input, whatever the
// input and output, named with -i or on stdin: the bytes and the mtime stay.
func TestCLIInputNotModified(t *testing.T) {
	snap := emptySnapshot(t)
	dir := t.TempDir()
	for _, name := range []string{smallFile, smallPipe, bpfZstdFile, trailingPipe} {
		in := copyFile(t, corpusPath(t, name), dir)
		before := stateOf(t, in)
		for _, c := range readingCommands(snap) {
			outs := []string{""}
			if c.writes {
				outs = []string{"file", "-", "/dev/null"}
			}
			for _, o := range outs {
				t.Run(name+"/"+c.name+" "+o, func(t *testing.T) {
					args := c.args
					switch o {
					case "file":
						args = with(args, "-o", filepath.Join(t.TempDir(), "out.data"))
					case "-":
						args = with(args, "-o", o)
					case "/dev/null": // a device: written to, with -f
						args = with(args, "-f", "-o", o)
					}
					if r := bpfmeta(t, nil, with(args, "-i", in)...); r.code != exitOK {
						t.Fatalf("-i: %v", r)
					}
					before.check(t, in, c.name+" -i")
					f, err := os.Open(in)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					if o == "file" {
						args = append(args, "-f")
					}
					if r := bpfmeta(t, f, args...); r.code != exitOK {
						t.Fatalf("stdin: %v", r)
					}
					before.check(t, in, c.name+" < input")
				})
			}
		}
	}
}

// isPipeStream reports whether b is a pipe-format recording our reader
// reads to the end as such, and how many records it has.
func isPipeStream(t *testing.T, b []byte) int {
	t.Helper()
	if len(b) < perfdata.PipeHeaderSize || string(b[:8]) != "PERFILE2" || binary.LittleEndian.Uint64(b[8:]) != perfdata.PipeHeaderSize {
		t.Fatalf("stdout does not start with a pipe header: % x", b[:min(len(b), 16)])
	}
	r := rectest.Stream(t, b, reader.Options{})
	n := 0
	for r.Next() {
		n++
	}
	if err := r.Err(); err != nil || r.Format() != perfdata.FormatPipe {
		t.Fatalf("stdout read as %v: %v", r.Format(), err)
	}
	return n
}

// TestCLIStdoutIsPipe: -o - and no -o write the recording to stdout in pipe
// format, which perf reads from a pipe with the same records.
func TestCLIStdoutIsPipe(t *testing.T) {
	snap := emptySnapshot(t)
	perf := perfPath(t, stockPerf)
	for _, c := range writingCommands(snap) {
		for _, o := range [][]string{{"-o", "-"}, nil} {
			t.Run(c.name+" "+strings.Join(o, " "), func(t *testing.T) {
				r := bpfmeta(t, nil, append(with(c.args, "-i", corpusPath(t, smallFile)), o...)...)
				if r.code != exitOK {
					t.Fatalf("%v", r)
				}
				isPipeStream(t, []byte(r.stdout))
				want := perfScript(t, perf, corpusPath(t, smallFile), nil)
				got := perfScript(t, perf, "-", []byte(r.stdout))
				compareScript(t, "stdout", want, got.without(prelude))
			})
		}
	}
}

// TestCLIStdin: without -i the recording comes from stdin: a pipe stream, a
// file-format recording redirected from a file (read in place), or one
// through a real pipe (copied to a temporary file that is gone afterwards).
// Each gives what -i gives.
func TestCLIStdin(t *testing.T) {
	snap := emptySnapshot(t)
	bin := buildBinary(t)
	for _, name := range []string{smallFile, smallPipe, bpfZstdFile, trailingPipe} {
		path := corpusPath(t, name)
		for _, c := range readingCommands(snap) {
			args := c.args
			if c.writes {
				args = with(args, "-o", "-")
			}
			want := bpfmeta(t, nil, with(args, "-i", path)...)
			if want.code != exitOK {
				t.Fatalf("%s -i %s: %v", c.name, name, want)
			}
			fixName := func(s string) string { return strings.ReplaceAll(s, path, "stdin") }
			t.Run(name+"/"+c.name+" < file", func(t *testing.T) {
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				got := bpfmeta(t, f, args...)
				if got.code != exitOK || got.stdout != fixName(want.stdout) {
					t.Errorf("< %s: %v, stdout differs from -i's: %v", name, got, got.stdout != fixName(want.stdout))
				}
			})
			t.Run(name+"/"+c.name+" | pipe", func(t *testing.T) {
				tmp := t.TempDir()
				cmd := exec.Command(bin, args...)
				cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				cmd.Stdin = bytes.NewReader(data) // a real pipe
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%v: %s", err, stderr.String())
				}
				if stdout.String() != fixName(want.stdout) {
					t.Errorf("| %s: stdout differs from -i's", name)
				}
				if names := testkit.DirNames(t, tmp); len(names) != 0 {
					t.Errorf("TMPDIR has %v afterwards", names)
				}
			})
		}
	}
	t.Run("damaged file through a pipe", func(t *testing.T) {
		tmp := t.TempDir()
		data, err := os.ReadFile(corpusPath(t, smallFile))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "convert", "-o", filepath.Join(tmp, "out.data"))
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		cmd.Stdin = bytes.NewReader(data[:0x800])
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Run()
		r := result{cmd.ProcessState.ExitCode(), "", stderr.String()}
		if r.code != exitFailure {
			t.Errorf("%v, want exit 1", r)
		}
		oneLine(t, "damaged stdin", r, "stdin: ", " at 0x")
		if names := testkit.DirNames(t, tmp); len(names) != 0 {
			t.Errorf("TMPDIR has %v afterwards", names)
		}
	})
}

// TestCLIDevNull: -f -o /dev/null works (and leaves /dev/null a device);
// without -f it is refused, as every existing path is.
func TestCLIDevNull(t *testing.T) {
	snap := emptySnapshot(t)
	link := filepath.Join(t.TempDir(), "null")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range writingCommands(snap) {
		for _, name := range []string{smallFile, smallPipe, bpfZstdFile} {
			for _, force := range []string{"", "-f"} {
				t.Run(c.name+" "+name+" "+force, func(t *testing.T) {
					// as perf record -o /dev/null: the null device needs no -f
					args := with(c.args, "-i", corpusPath(t, name), "-o", "/dev/null")
					if force != "" {
						args = append(args, force)
					}
					if r := bpfmeta(t, nil, args...); r.code != exitOK || r.stdout != "" {
						t.Errorf("%v, stdout %d bytes", r, len(r.stdout))
					}
					// a link to it is an existing file like any other
					if r := bpfmeta(t, nil, with(c.args, "-i", corpusPath(t, name), "-o", link)...); r.code != exitFailure {
						t.Errorf("-o a link to /dev/null without -f: %v, want exit 1", r)
					}
					st, err := os.Stat("/dev/null")
					if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
						t.Fatalf("/dev/null is no longer a character device: %v %v", st.Mode(), err)
					}
				})
			}
		}
	}
}

// fifoWith makes a FIFO in dir and writes data into it from a goroutine
// once a reader opens it.
func fifoWith(t *testing.T, dir string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, "in.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.Write(data)
	}()
	return path
}

// TestCLINamedPipeInput: -i FIFO (as -i <(perf record -o - ...) gives)
// reads the stream as stdin is read, pipe or file format.
func TestCLINamedPipeInput(t *testing.T) {
	snap := emptySnapshot(t)
	for _, name := range []string{smallFile, smallPipe, bpfZstdFile, trailingPipe} {
		path := corpusPath(t, name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range readingCommands(snap) {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				args := c.args
				if c.writes {
					args = with(args, "-o", "-")
				}
				want := bpfmeta(t, nil, with(args, "-i", path)...)
				fifo := fifoWith(t, t.TempDir(), data)
				got := bpfmeta(t, nil, with(args, "-i", fifo)...)
				if got.code != exitOK || want.code != exitOK || got.stdout != strings.ReplaceAll(want.stdout, path, fifo) {
					t.Errorf("-i FIFO: %v; -i file: %v; the same output: %v", got, want, got.stdout == strings.ReplaceAll(want.stdout, path, fifo))
				}
			})
		}
	}
}

// TestCLISignal: SIGINT, SIGTERM or SIGHUP while an output file is written
// remove its temporary file, and end bpfmeta by the signal; a SIGHUP ignored
// when bpfmeta starts (nohup) stays ignored.
func TestCLISignal(t *testing.T) {
	bin := buildBinary(t)
	data, err := os.ReadFile(corpusPath(t, smallPipe))
	if err != nil {
		t.Fatal(err)
	}
	// under nohup the children inherit SIGHUP ignored, and must keep it so
	hupIgnored := signal.Ignored(syscall.SIGHUP)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		for _, cmdName := range []string{"convert", "strip", "inject"} {
			t.Run(cmdName+" "+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				fifo := filepath.Join(dir, "in.fifo")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Fatal(err)
				}
				args := []string{cmdName, "-i", fifo, "-o", filepath.Join(dir, "out.data")}
				if cmdName == "inject" {
					args = append(args, "--snapshot", emptySnapshot(t))
				}
				cmd := exec.Command(bin, args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				w.Write(data[:len(data)/4])
				waitTracked(t, cmd.Process.Pid, dir, w, data[len(data)/4:len(data)/2]) // and the stream stays open
				cmd.Process.Signal(sig)
				ends := sig
				if sig == syscall.SIGHUP && hupIgnored {
					// started under nohup, as this test is: bpfmeta must
					// keep SIGHUP ignored (outfile.NewGuard), so it runs on
					// until SIGTERM
					done := make(chan struct{})
					go func() {
						select {
						case <-done:
						case <-time.After(500 * time.Millisecond):
							cmd.Process.Signal(syscall.SIGTERM)
						}
					}()
					defer close(done)
					ends = syscall.SIGTERM
				}
				err = cmd.Wait()
				ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !ok || !ws.Signaled() || ws.Signal() != ends {
					t.Errorf("bpfmeta ended with %v (%v) after %v, not by %v; stderr: %s", cmd.ProcessState, err, sig, ends, stderr.String())
				}
				if names := testkit.DirNames(t, dir); len(names) != 1 {
					t.Errorf("the output directory has %v after %v, want only the FIFO", names, sig)
				}
				wantStopped(t, stderr.String(), ends)
			})
		}
	}
}

// wantStopped checks that stderr is the one line of a signal that ended a
// run before its output was complete.
func wantStopped(t *testing.T, stderr string, sig syscall.Signal) {
	t.Helper()
	want := "bpfmeta: stopped by " + unix.SignalName(sig) + " before its output was complete; nothing of it is left\n"
	if stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
}

// finishedRounds is n FINISHED_ROUND records: a pipe stream that inject
// passes through, to keep it writing.
func finishedRounds(n int) []byte {
	b := make([]byte, 8*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b[8*i:], uint32(perfdata.RecordFinishedRound))
		binary.LittleEndian.PutUint16(b[8*i+6:], 8)
	}
	return b
}

// TestCLISignalWhileWriting: a signal while inject writes its output file
// ends the run by the signal (128+N) with one line and nothing left: not
// "write: file already closed" from a write the removal cut short, exit 1.
func TestCLISignalWhileWriting(t *testing.T) {
	bin := buildBinary(t)
	head := testkit.CorpusBytes(t, smallPipe)
	flood := finishedRounds(8192)
	sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	for _, sig := range sigs {
		for i, delay := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond} {
			t.Run(fmt.Sprintf("%v %d", sig, i), func(t *testing.T) {
				dir := t.TempDir()
				cmd := exec.Command(bin, "inject", "--snapshot", emptySnapshot(t), "-o", filepath.Join(dir, "o.data"))
				r, in, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				cmd.Stdin = r
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err = cmd.Start()
				r.Close()
				if err != nil {
					in.Close()
					t.Fatal(err)
				}
				in.Write(head)
				waitTracked(t, cmd.Process.Pid, dir, in, flood)
				go func() {
					for {
						if _, err := in.Write(flood); err != nil {
							return
						}
					}
				}()
				time.Sleep(delay)
				cmd.Process.Signal(sig)
				cmd.Wait()
				in.Close()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != sig {
					t.Errorf("bpfmeta ended with %v after %v, not by it; stderr: %s", cmd.ProcessState, sig, stderr.String())
				}
				if names := testkit.DirNames(t, dir); len(names) != 0 {
					t.Errorf("the output directory has %v after %v", names, sig)
				}
				wantStopped(t, stderr.String(), sig)
			})
		}
	}
}

// TestCLISignalIgnoredAtStart: a shell starts a background job of a script
// with SIGINT ignored (trap "" INT gives the same); bpfmeta stops on
// SIGINT all the same, as perf record does, with its output removed and
// status 130 (re-raised, the signal would be ignored again).
func TestCLISignalIgnoredAtStart(t *testing.T) {
	bin := buildBinary(t)
	sh := testkit.Command(t, "sh")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, "-c", `trap "" INT; exec "$@"`, "sh", bin, "inject", "-i", fifo, "-o", filepath.Join(dir, "out.data"), "--snapshot", emptySnapshot(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write(testkit.CorpusBytes(t, smallPipe)[:4096])
	waitTracked(t, cmd.Process.Pid, dir, w, testkit.CorpusBytes(t, smallPipe)[4096:8192])
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
	}()
	cmd.Wait()
	close(done)
	if cmd.ProcessState.ExitCode() != 130 {
		t.Errorf("bpfmeta started with SIGINT ignored, then SIGINT: %v, want exit 130; stderr %q", cmd.ProcessState, stderr.String())
	}
	if names := testkit.DirNames(t, dir); len(names) != 1 {
		t.Errorf("the output directory has %v, want only the FIFO", names)
	}
	wantStopped(t, stderr.String(), syscall.SIGINT)

	t.Run("watch &", func(t *testing.T) {
		testkit.BPF(t)
		dir := t.TempDir()
		// a watch that runs on is killed after 5 s: status 137
		script := `"$0" watch -o "$1/w.jsonl" 2>"$1/err" & pid=$!
( sleep 5; kill -KILL $pid ) >/dev/null 2>&1 &
while ! grep -q following "$1/err" && kill -0 $pid; do sleep 0.02; done
kill -INT $pid; wait $pid; echo $?`
		cmd := exec.Command(sh, "-c", script, bin, dir)
		done := make(chan struct{})
		go func() {
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
			}
		}()
		out, err := cmd.Output()
		close(done)
		errText, _ := os.ReadFile(filepath.Join(dir, "err"))
		if err != nil || strings.TrimSpace(string(out)) != "0" {
			t.Fatalf("sh -c 'bpfmeta watch -o w.jsonl & kill -INT $!': %v, watch's status %q; stderr %q", err, out, errText)
		}
		if st, err := os.Stat(filepath.Join(dir, "w.jsonl")); err != nil || st.Size() == 0 {
			t.Errorf("the snapshot: %v %v", st, err)
		}
	})
}

// TestCLISignalAfterCommit: a signal after the output file is committed
// does not end the run: it ends with its own status and summary. The
// summary's write is held back by a full stderr pipe until the signal has
// come: the pipe (16 pages, atomic writes of a page or less) has room
// only for what a run prints before its summary, measured by a run
// first.
func TestCLISignalAfterCommit(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "o.data")
	in := corpusPath(t, bpfFile)
	args := []string{"inject", "-i", in, "--snapshot", programsSnapshot(t, recordedPrograms(t, in, allPrograms)), "-o", out}
	var first bytes.Buffer
	dry := exec.Command(bin, args...)
	dry.Stderr = &first
	if err := dry.Run(); err != nil {
		t.Fatalf("%v: %s", err, first.String())
	}
	// the note printed after the commit
	const note = "bpfmeta: note: perf before 6.17 cannot read"
	i := bytes.Index(first.Bytes(), []byte(note))
	if i < 0 {
		t.Fatalf("no note after the commit: %q", first.String())
	}
	before := first.Bytes()[:i]
	if len(before) >= 4096 {
		t.Fatalf("%d bytes before the summary", len(before))
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		os.Remove(out)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		fd := int(w.Fd()) // blocking
		if size, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0); err != nil || size != 16*4096 {
			t.Fatalf("a pipe of %d bytes (%v), want 16 pages", size, err)
		}
		page := make([]byte, 4096)
		for range 15 {
			syscall.Write(fd, page)
		}
		syscall.Write(fd, page[len(before):])
		filled := 16*4096 - len(before)
		cmd := exec.Command(bin, args...)
		cmd.Stderr = w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(out); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("%s did not appear", out)
			}
		}
		cmd.Process.Signal(sig)
		time.Sleep(100 * time.Millisecond) // for the handler to act on it
		all, _ := io.ReadAll(r)            // to the child's end
		r.Close()
		err = cmd.Wait()
		got := all[min(filled+len(before), len(all)):]
		if err != nil || cmd.ProcessState.ExitCode() != exitOK {
			t.Errorf("%v after the output was committed: %v, want exit 0; stderr %q", sig, cmd.ProcessState, got)
		}
		if !bytes.HasPrefix(got, []byte(note)) || bytes.Contains(got, []byte("stopped")) {
			t.Errorf("%v after the commit: stderr %q, want the note only", sig, got)
		}
		if st, err := os.Stat(out); err != nil || st.Size() == 0 {
			t.Errorf("%v after the commit removed the output: %v %v", sig, st, err)
		}
	}
}

// TestCLITerminal: with stdin a terminal and no -i, the reading commands
// read ./perf.data, as perf report does, or say how to make one; a
// recording is not written to a terminal stdout unless -o - says so.
func TestCLITerminal(t *testing.T) {
	run := func(stdinTerm, stdoutTerm bool, args ...string) result {
		var stdout, stderr bytes.Buffer
		s := cliutil.NewSession(strings.NewReader(""), &stdout, &stderr)
		s.StdinTerminal, s.StdoutTerminal = stdinTerm, stdoutTerm
		code := run(append([]string{"bpfmeta"}, args...), s)
		return result{code, stdout.String(), stderr.String()}
	}
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"show"}, {"dump", "--stats"}, {"strip", "-o", "out.data"}, {"convert", "-o", "out.data"}} {
		r := run(true, false, args...)
		if r.code != exitUsage {
			t.Errorf("%s without ./perf.data: %v, want exit 2", args[0], r)
		}
		oneLine(t, args[0]+" without ./perf.data", r, "perf.data", "perf record")
	}
	if err := os.WriteFile("perf.data", testkit.CorpusBytes(t, smallFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(true, false, "dump", "--stats"); r.code != exitOK || !strings.Contains(r.stdout, "TOTAL events:         24") {
		t.Errorf("dump --stats with ./perf.data: %v\n%s", r, r.stdout)
	}
	// a terminal stdout: a recording only with -o -
	if r := run(true, true, "convert"); r.code != exitUsage || r.stdout != "" {
		t.Errorf("convert to a terminal: %v, %d bytes out", r, len(r.stdout))
	}
	if r := run(true, true, "convert", "-o", "-"); r.code != exitOK || r.stdout == "" {
		t.Errorf("convert -o - to a terminal: %v", r)
	}
}
