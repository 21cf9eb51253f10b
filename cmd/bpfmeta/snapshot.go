package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
)

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:      "snapshot",
		Usage:     "save the loaded BPF programs and their metadata, for an inject after they are gone",
		ArgsUsage: " ",
		Description: `Writes every loaded BPF program (id, tags, per-function names and addresses, and
the PERF_RECORD_BPF_METADATA content perf record >= 6.17 would write for it) to a
snapshot: a versioned JSON Lines file with the kernel release, boot id and
hostname (README, "JSON"). Programs that are gone by the time of inject
(short-lived tools, programs loaded during a recording) can then be labelled from
it, on this machine or another one. The file is written under a temporary name,
mode 0600 (it holds kernel addresses), and appears only when complete; an
existing file is replaced only with -f. On stdout, nothing is written unless the
whole snapshot could be taken. Needs root.

Examples:
   bpfmeta snapshot -o progs.jsonl
   bpfmeta snapshot | jq -c 'select(.program) | .program.name'`,
		Flags: []cli.Flag{outputFlag("snapshot"), forceFlag(), quietFlag(),
			verboseFlag("say how many programs were saved")},
		Action: runSnapshot,
	}
}

func runSnapshot(c *cli.Context) error {
	if err := noArgs(c, "use -o FILE"); err != nil {
		return err
	}
	k, err := live.New()
	if err != nil {
		return err
	}
	if err := k.Check(); err != nil {
		return fmt.Errorf("the running kernel: %w", err)
	}
	out, err := openSnapshotOutput(c, false)
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
	n, err := snapshot.Take(out.Dest(), k)
	if err != nil {
		return out.Error(err)
	}
	if err := out.Release(); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if c.Bool("verbose") && !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "bpfmeta: %s: %s saved\n", out.Name, plural(n, "BPF program"))
	}
	return nil
}
