package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:      "snapshot",
		Usage:     "save the loaded BPF programs and their metadata, for an inject after they are gone",
		ArgsUsage: " ",
		Description: `Writes every loaded BPF program (id, tags, per-function names and addresses, and
the PERF_RECORD_BPF_METADATA content perf record >= 6.17 would write for it) to a
snapshot: a versioned JSON Lines file with the kernel release, boot id and
hostname (docs/json.md). Programs that are gone by the time of inject
(short-lived tools, programs loaded during a recording) can then be labelled from
it, on this machine or another one. The file is written under a temporary name,
mode 0600 (it holds kernel addresses), and appears only when complete; an
existing file is replaced only with -f. On stdout, nothing is written unless the
whole snapshot could be taken. Needs root.

--prog (repeatable) saves only the programs it names, by id, by name, or
by the name of one of their functions (with or without bpf_prog_<tag>_): a
snapshot small enough to check in beside a recording of one's own programs,
which inject reads as any other (its end line counts what it holds). A
--prog that names no loaded program is an error. --portable leaves out what
a checked-in fixture should not carry: the hostname, boot id and boot time,
when it was taken, load times, uids, map and BTF ids (the kernel release
stays). inject labels a recording of its programs from it as from the whole
snapshot; only the programs the recording has no record of are beyond it.

Examples:
   bpfmeta snapshot -o progs.jsonl
   bpfmeta snapshot --prog xdp_prog --prog 97 --portable -o testdata/mine.jsonl
   bpfmeta snapshot | jq -c 'select(.program) | .program.name'`,
		Flags: []cli.Flag{outputFlag("snapshot"), forceFlag(), noClobberFlag(),
			&cli.StringSliceFlag{Name: flagProg, Usage: "save only program `NAME|ID` (repeatable): an id, a program's name or one of its functions'"},
			&cli.BoolFlag{Name: flagPortable, Usage: "leave out the hostname, boot id, times, uids, map and BTF ids: a fixture to check in"},
			quietFlag(),
			verboseFlag("say how many programs were saved")},
		Action: runSnapshot,
	}
}

// flagPortable is snapshot --portable.
const flagPortable = "portable"

// snapshotOpts are snapshot's options.
type snapshotOpts struct {
	outputOpts
	verbosity
	progs    []string // the programs --prog names
	portable bool
}

// snapshotOptionsOf reads snapshot's flags: the one place they are read.
// It takes no arguments.
func snapshotOptionsOf(c *cli.Context) (snapshotOpts, error) {
	if err := noArgs(c, "use -o FILE"); err != nil {
		return snapshotOpts{}, err
	}
	v, err := verbosityOptionsOf(c)
	return snapshotOpts{outputOpts: outputOptionsOf(c), verbosity: v, progs: c.StringSlice(flagProg), portable: c.Bool(flagPortable)}, err
}

func runSnapshot(c *cli.Context) error {
	o, err := snapshotOptionsOf(c)
	if err != nil {
		return err
	}
	k, err := live.Open()
	if err != nil {
		return fmt.Errorf("the running kernel: %w", err)
	}
	out, err := openSnapshotOutput(sessionOf(c), o.outputOpts, false)
	if err != nil {
		return err
	}
	defer out.Abort()
	if !out.Regular() {
		// A half snapshot on a stream would be taken for a whole one.
		if err := out.Hold(os.TempDir(), "the snapshot"); err != nil {
			return err
		}
	}
	var src bpfprog.Lister = k
	sel := bpfprog.Select(o.progs)
	if !sel.All() {
		src = sel.Of(k)
	}
	take := snapshot.Take
	if o.portable {
		take = snapshot.TakePortable
	}
	n, err := take(out.Dest(), src)
	if err != nil {
		return out.Error(err)
	}
	if missing := sel.Unmatched(); len(missing) > 0 {
		return fmt.Errorf("--prog %s: no loaded BPF program of that id or name; nothing written", safetext.Quote(missing[0]))
	}
	if err := out.Release(); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if o.verbose {
		fmt.Fprintf(c.App.ErrWriter, "bpfmeta: %s: %s saved\n", out.Name, plural(n, "BPF program"))
	}
	return nil
}
