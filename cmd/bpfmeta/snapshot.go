package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog"
)

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:  "snapshot",
		Usage: "save the loaded BPF programs and their metadata, for an inject after they are gone",
		Description: "Writes every loaded BPF program (id, tags, per-function names, addresses, and the\n" +
			"PERF_RECORD_BPF_METADATA content perf record >= 6.16 would write for it) to a versioned\n" +
			"JSON file, with the kernel release, boot id and hostname. Programs that are unloaded\n" +
			"by the time of inject (short-lived tools, programs loaded during a recording) can be\n" +
			"labelled from the snapshot, on this machine or another one. The file is written\n" +
			"atomically; an existing file is replaced only with -f. Needs root.\n\n" +
			"Examples:\n" +
			"  bpfmeta snapshot -o progs.json\n" +
			"  bpfmeta snapshot -f -o /var/tmp/progs.json\n" +
			"  bpfmeta snapshot -o - | jq '.programs | length'",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the snapshot to `FILE` (- for standard output)"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "replace FILE if it exists"},
		},
		Action: runSnapshot,
	}
}

func runSnapshot(c *cli.Context) error {
	out := c.String("output")
	switch {
	case c.Args().Present():
		return usagef("snapshot: unexpected argument %q", c.Args().First())
	case out == "":
		return usagef("snapshot: -o FILE is required (-o - for standard output)")
	}
	live, err := bpfprog.NewLive()
	if err != nil {
		return err
	}
	if out == "-" {
		return writeSnapshot(c.App.Writer, live)
	}
	if !c.Bool("force") {
		if _, err := os.Lstat(out); err == nil {
			return fmt.Errorf("snapshot: %s exists (-f replaces it)", out)
		}
	}
	f, err := createAtomic(out)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := writeSnapshot(f, live); err != nil {
		f.abort()
		return err
	}
	if err := f.commit(c.Bool("force")); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// writeSnapshot writes every loaded program; any program that cannot be read
// fails the snapshot (unloaded ones are left out by Programs).
func writeSnapshot(w io.Writer, live *bpfprog.Live) error {
	sw, err := bpfprog.NewSnapshotWriter(w, live.System(), time.Now())
	if err != nil {
		return err
	}
	for p, err := range live.Programs() {
		if err != nil {
			return err
		}
		if err := sw.Add(p); err != nil {
			return err
		}
	}
	return sw.Close()
}

// atomicFile is written under a temporary name in the target's directory and
// appears under the target name only when complete.
type atomicFile struct {
	*os.File
	path string
}

// snapshotFileMode is the mode of a new snapshot file, before the umask.
const snapshotFileMode = 0o644

func createAtomic(path string) (*atomicFile, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, snapshotFileMode)
	if err != nil {
		return nil, err
	}
	return &atomicFile{File: f, path: path}, nil
}

func (f *atomicFile) abort() {
	f.Close()
	os.Remove(f.Name())
}

// commit makes the file appear at its path: replacing an existing file
// (rename) only if replace is set, else failing if one exists (link).
func (f *atomicFile) commit(replace bool) error {
	tmp := f.Name()
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if replace {
			err = os.Rename(tmp, f.path)
		} else if err = os.Link(tmp, f.path); err == nil {
			os.Remove(tmp) // the file is in place; a stray temporary name is harmless
		} else if errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("%s exists (-f replaces it)", f.path)
		}
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, derr := os.Open(filepath.Dir(f.path)); derr == nil {
		d.Sync() // make the new name durable; best effort
		d.Close()
	}
	return nil
}
