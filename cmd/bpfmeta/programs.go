package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog"
)

func programsCommand() *cli.Command {
	return &cli.Command{
		Name:      "programs",
		Usage:     "list loaded BPF programs with the names and metadata perf records for them",
		ArgsUsage: "[ID...]",
		Description: "Lists the BPF programs loaded now (or only the given program ids) with, per JITed\n" +
			"function, its address, length, tag and the two names perf.data can carry for it:\n" +
			"  perf    the KSYMBOL name perf record synthesizes for programs loaded before it starts\n" +
			"  kernel  the name in /proc/kallsyms and in the KSYMBOLs of programs loaded while\n" +
			"          recording (the main function of a program with subprograms has another tag)\n" +
			"and the PERF_RECORD_BPF_METADATA records perf record >= 6.16 writes for the program:\n" +
			"one per function, with its prog_name and the bpf_metadata_* entries as perf formats them.\n" +
			"Needs root.\n\n" +
			"Examples:\n" +
			"  bpfmeta programs\n" +
			"  bpfmeta programs 97 98\n" +
			"  bpfmeta programs --json | jq '.[] | select(.metadata) | .metadata.entries'",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array of programs (the snapshot's program format)"},
		},
		Action: runPrograms,
	}
}

func runPrograms(c *cli.Context) error {
	var ids []uint32
	for _, a := range c.Args().Slice() {
		id, err := strconv.ParseUint(a, 10, 32)
		if err != nil {
			return usagef("programs: %q is not a program id", a)
		}
		ids = append(ids, uint32(id))
	}
	live, err := bpfprog.NewLive()
	if err != nil {
		return err
	}

	var progs []*bpfprog.Program
	var firstErr error
	failed := 0
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
		failed++
	}
	if len(ids) > 0 {
		for _, id := range ids {
			p, err := live.ReadProgram(id)
			if err != nil {
				fail(err)
				continue
			}
			progs = append(progs, p)
		}
	} else {
		for p, err := range live.Programs() {
			if err != nil {
				fail(err)
				continue
			}
			progs = append(progs, p)
		}
	}

	w := c.App.Writer
	if c.Bool("json") {
		if progs == nil {
			progs = []*bpfprog.Program{}
		}
		b, err := json.MarshalIndent(progs, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	} else {
		sys := live.System()
		for _, p := range progs {
			if err := printProgram(w, sys, p); err != nil {
				return err
			}
		}
	}
	if failed == 1 {
		return firstErr
	}
	if failed > 1 {
		return fmt.Errorf("%d programs could not be read, the first: %w", failed, firstErr)
	}
	return nil
}

// printProgram writes one program; the metadata lines are perf's
// (perf_event__fprintf_bpf_metadata: " prog %s", "  entry %d: %20s = %s").
func printProgram(w io.Writer, sys bpfprog.System, p *bpfprog.Program) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d: %s  name %s  tag %s  btf_id %d  maps %v  loaded %s  uid %d\n",
		p.ID, p.Type, p.Name, p.Tag, p.BTFID, p.MapIDs,
		sys.LoadedAt(p).Local().Format(time.DateTime), p.CreatedByUID)
	for i, f := range p.Funcs {
		fmt.Fprintf(&b, "\tfunc %d: addr %x  len %d  tag %s", i, f.Addr, f.Len, f.Tag)
		if f.BTFName != "" {
			fmt.Fprintf(&b, "  btf %s", f.BTFName)
		}
		fmt.Fprintf(&b, "\n\t\tperf   %s\n\t\tkernel %s\n", f.PerfName, f.KernelName)
	}
	switch md := p.Metadata; {
	case md == nil && p.MetadataErr == nil:
		b.WriteString("\tno metadata\n")
	case md == nil:
		fmt.Fprintf(&b, "\tmetadata unknown: %v\n", p.MetadataErr)
	default:
		fmt.Fprintf(&b, "\tPERF_RECORD_BPF_METADATA x%d (map %d %s, btf_id %d):\n", len(md.ProgNames), md.MapID, md.MapName, md.BTFID)
		if p.MetadataErr != nil {
			fmt.Fprintf(&b, "\t(not exact: %v)\n", p.MetadataErr)
		}
		for _, name := range md.ProgNames {
			fmt.Fprintf(&b, "\t prog %s\n", name)
		}
		for i, e := range md.Entries {
			fmt.Fprintf(&b, "\t  entry %d: %20s = %s\n", i, e.Key, e.Value)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
