package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/reader"
)

func injectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inject",
		Usage:     "add PERF_RECORD_BPF_METADATA records to a recording",
		ArgsUsage: " ",
		Description: "Copies the recording -i to -o and adds, for every JITed function of every BPF\n" +
			"program in it that has bpf_metadata_* variables, the PERF_RECORD_BPF_METADATA\n" +
			"record perf record >= 6.16 writes, where it writes it: after the program's\n" +
			"BPF_EVENT for programs loaded when the recording started, at the end for programs\n" +
			"loaded during it. Everything else is copied unchanged. The metadata comes from\n" +
			"the running kernel, or from a snapshot (bpfmeta snapshot / bpfmeta watch) for\n" +
			"programs that are gone or recordings from another machine. A program is matched\n" +
			"by id, tag and KSYMBOL addresses, so a reused id never gets another program's\n" +
			"metadata. Records the recording already has are kept, not duplicated.\n\n" +
			"Without -i and -o it reads stdin and writes stdout (pipe format), like perf inject.\n" +
			"A summary goes to stderr. perf before 6.16 cannot read the output (type 84):\n" +
			"read it with perf >= 6.16, or remove the records again with bpfmeta strip.\n\n" +
			"Examples:\n" +
			"   bpfmeta inject -i perf.data -o perf.meta.data\n" +
			"   perf record -o - -a sleep 5 | bpfmeta inject | perf report -i -\n" +
			"   bpfmeta inject --snapshot progs.json -i old.data -o old.meta.data",
		Flags: []cli.Flag{
			inputFlag(),
			outputFlag(),
			forceFlag(),
			&cli.StringFlag{Name: "snapshot", Usage: "take the metadata from snapshot `FILE` instead of the running kernel", TakesFile: true},
			&cli.BoolFlag{Name: "strict", Usage: "fail (exit 1, no output) if a program's metadata cannot be determined"},
			&cli.BoolFlag{Name: "perf-names", Usage: "name records as perf record does (bpf_metadata_create), not after their KSYMBOL"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("inject takes no arguments (use -i and -o)")
			}
			src, err := openSource(c.String("snapshot"))
			if err != nil {
				return err
			}
			in, err := openInput(c.String("input"), c.App.Reader, reader.Options{Decompress: true})
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := openOutput(c.String("output"), c.Bool("force"), in, c.App.Writer)
			if err != nil {
				return err
			}
			defer out.abort()
			w, _, err := newWriter(in, out)
			if err != nil {
				return err
			}
			stderr := c.App.ErrWriter
			prog := newProgress(stderr, in, c.Bool("quiet"))
			sum, err := inject.Run(in.Reader, prog.wrap(w), src, inject.Options{PerfNames: c.Bool("perf-names")})
			prog.done()
			if err != nil {
				return fmt.Errorf("%s: %w", in.name, err)
			}
			if err := w.Close(); err != nil {
				return fmt.Errorf("%s: %w", out.name, err)
			}
			if !c.Bool("quiet") {
				printSummary(stderr, in.name, sum, c.String("snapshot") != "")
			}
			if u := sum.Unresolved(); c.Bool("strict") && len(u) > 0 {
				return fmt.Errorf("--strict: the metadata of %d BPF program(s) could not be determined; no output written", len(u))
			}
			return out.commit()
		},
	}
}

// openSource returns the snapshot at path, or the running kernel.
func openSource(path string) (bpfprog.Source, error) {
	if path == "" {
		return bpfprog.NewLive()
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := bpfprog.ReadSnapshot(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func printSummary(w io.Writer, name string, sum *inject.Summary, snapshot bool) {
	counts := map[inject.Outcome]int{}
	for _, p := range sum.Programs {
		counts[p.Outcome]++
	}
	fmt.Fprintf(w, "bpfmeta: %s: %d BPF program(s); %d BPF_METADATA record(s) added for %d; %d already had them; %d without metadata",
		name, len(sum.Programs), sum.Injected, counts[inject.Injected], counts[inject.AlreadyPresent], counts[inject.NoMetadata])
	if n := len(sum.Unresolved()); n > 0 {
		fmt.Fprintf(w, "; %d unresolved", n)
	}
	fmt.Fprintln(w)
	for _, p := range sum.Unresolved() {
		what := fmt.Sprintf("program %d (tag %v", p.ID, p.Tag)
		if p.Name != "" {
			what += ", " + p.Name
		}
		what += ")"
		hint := ""
		if p.Outcome == inject.NotFound {
			if snapshot {
				hint = " (not in the snapshot)"
			} else {
				hint = " (unloaded since the recording? record with bpfmeta watch, or use --snapshot)"
			}
		}
		fmt.Fprintf(w, "bpfmeta: %s: %v: %v%s\n", what, p.Outcome, errText(p.Err), hint)
	}
	if sum.Injected > 0 {
		fmt.Fprintln(w, "bpfmeta: note: perf before 6.16 cannot read BPF_METADATA records (\"failed to process type: 84\"): use perf >= 6.16, or bpfmeta strip for an older perf")
	}
}

func errText(err error) string {
	if err == nil {
		return "no error"
	}
	s := err.Error()
	s = strings.TrimPrefix(s, "bpfprog: ")
	var tm *bpfprog.TagMismatchError
	if errors.As(err, &tm) {
		return tm.Error()
	}
	return s
}
