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
	"github.com/bpfmeta/bpfmeta/perfdata"
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
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "list every program that got no metadata, and why"},
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
			dst := out
			var held *os.File
			if c.Bool("strict") && out.pipeFormat() {
				// A stream cannot be taken back: hold it until the summary
				// shows that every program was resolved.
				if held, err = holdFile(); err != nil {
					return err
				}
				defer held.Close()
				dst = &output{name: out.name, w: held}
			}
			w, _, err := newWriter(in, dst, notes(c), false)
			if err != nil {
				return err
			}
			defer w.Abort() // stops the writer when an error ends the command early
			stderr := c.App.ErrWriter
			if !c.Bool("quiet") {
				checkSystem(stderr, in, src)
			}
			prog := newProgress(stderr, in, c.Bool("quiet"))
			sum, err := inject.Run(in.Reader, prog.wrap(w), src, inject.Options{PerfNames: c.Bool("perf-names")})
			prog.done()
			var werr *inject.WriteError
			if errors.As(err, &werr) {
				return fmt.Errorf("%s: %w", out.name, werr.Err)
			} else if err != nil {
				return fmt.Errorf("%s: %w", in.name, err)
			}
			if err := w.Close(); err != nil {
				return fmt.Errorf("%s: %w", out.name, err)
			}
			if !c.Bool("quiet") {
				printSummary(stderr, in.name, sum, c.String("snapshot") != "", c.Bool("verbose"))
			}
			if u := sum.Unresolved(); c.Bool("strict") && len(u) > 0 {
				return fmt.Errorf("--strict: the metadata of %d BPF program(s) could not be determined; no output written", len(u))
			}
			if held != nil {
				if err := release(held, out); err != nil {
					return err
				}
			}
			return out.commit()
		},
	}
}

// holdFile returns an unnamed temporary file to hold a stream output in.
func holdFile() (*os.File, error) {
	f, err := os.CreateTemp("", "bpfmeta-held-*.data")
	if err != nil {
		return nil, fmt.Errorf("--strict: holding the output in a temporary file: %w", err)
	}
	os.Remove(f.Name()) // nothing to clean up if we are killed
	return f, nil
}

// release copies the output held in f to out.
func release(f *os.File, out *output) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("--strict: reading back the held output: %w", err)
	}
	if _, err := io.Copy(out.w, f); err != nil {
		return fmt.Errorf("%s: %w", out.name, err)
	}
	return nil
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

// maxListed is how many unresolved programs the summary names without -v.
const maxListed = 10

func printSummary(w io.Writer, name string, sum *inject.Summary, snapshot, verbose bool) {
	counts := map[inject.Outcome]int{}
	for _, p := range sum.Programs {
		counts[p.Outcome]++
	}
	fmt.Fprintf(w, "bpfmeta: %s: %d BPF program(s) loaded; %d BPF_METADATA record(s) added for %d; %d had them already; %d without metadata",
		name, len(sum.Programs), sum.Injected, counts[inject.Injected], counts[inject.AlreadyPresent], counts[inject.NoMetadata])
	u := sum.Unresolved()
	if len(u) == 0 {
		fmt.Fprintln(w)
	} else {
		var gone, unloaded int
		for _, p := range u {
			if p.Outcome == inject.NotFound {
				if p.Unloaded {
					unloaded++
				} else {
					gone++
				}
			}
		}
		fmt.Fprintf(w, "; %d unresolved", len(u))
		var why []string
		if unloaded > 0 {
			why = append(why, fmt.Sprintf("%d unloaded during the recording", unloaded))
		}
		if gone > 0 {
			why = append(why, fmt.Sprintf("%d no longer loaded", gone))
		}
		if n := counts[inject.Mismatch]; n > 0 {
			why = append(why, fmt.Sprintf("%d another program now", n))
		}
		if n := counts[inject.Failed]; n > 0 {
			why = append(why, fmt.Sprintf("%d unreadable", n))
		}
		fmt.Fprintf(w, " (%s)\n", strings.Join(why, ", "))
	}
	for i, p := range u {
		if i == maxListed && !verbose {
			fmt.Fprintf(w, "bpfmeta: ... and %d more (-v lists them all)\n", len(u)-maxListed)
			break
		}
		what := fmt.Sprintf("program %d (tag %v", p.ID, p.Tag)
		if p.Name != "" {
			what += ", " + p.Name
		}
		what += ")"
		fmt.Fprintf(w, "bpfmeta: %s: %v: %v\n", what, p.Outcome, errText(p))
	}
	if n := counts[inject.NotFound]; n > 0 {
		if snapshot {
			fmt.Fprintln(w, "bpfmeta: hint: programs not in the snapshot get no metadata; take it with bpfmeta watch while recording")
		} else {
			fmt.Fprintln(w, "bpfmeta: hint: metadata of unloaded programs needs a snapshot: bpfmeta watch -o snap.json -- perf record ..., then inject --snapshot snap.json")
		}
	}
	if sum.TrailingDropped {
		fmt.Fprintf(w, "bpfmeta: warning: %s: dropped %d bytes after the last record that are not a record\n", name, sum.Trailing)
	}
	if sum.Injected > 0 {
		fmt.Fprintln(w, "bpfmeta: note: perf before 6.16 cannot read BPF_METADATA records (\"failed to process type: 84\"): use perf >= 6.16, or bpfmeta strip for an older perf")
	}
}

// errText is err without the program it is about, which the line names.
func errText(p inject.Program) string {
	if p.Err == nil {
		return "no error"
	}
	s := strings.TrimPrefix(p.Err.Error(), "bpfprog: ")
	return strings.TrimPrefix(s, fmt.Sprintf("program %d: ", p.ID))
}

// checkSystem warns when a file-mode recording says it was made on another
// machine or kernel than the one the metadata comes from. Programs are still
// matched by id, tag and address, which another machine's programs almost
// never share; the warning says why nothing matched.
func checkSystem(w io.Writer, in *input, src bpfprog.Source) {
	l := in.Layout()
	if l == nil {
		return
	}
	sys := src.System()
	host, _ := featureString(in, perfdata.FeatHostname)
	rel, _ := featureString(in, perfdata.FeatOSRelease)
	if host != "" && sys.Hostname != "" && host != sys.Hostname || rel != "" && sys.KernelRelease != "" && rel != sys.KernelRelease {
		fmt.Fprintf(w, "bpfmeta: warning: %s was recorded on %s (kernel %s), the metadata is from %s (kernel %s)\n",
			in.name, host, rel, sys.Hostname, sys.KernelRelease)
	}
}

// featureString reads a perf_header_string feature (u32 len, then a
// NUL-padded string), as perf's do_read_string() does.
func featureString(in *input, f perfdata.Feature) (string, bool) {
	s, ok := in.Layout().Feature(f)
	if !ok || s.Size < 4 || s.Size > 4096 {
		return "", false
	}
	b := make([]byte, s.Size)
	if _, err := in.src.ReadAt(b, int64(s.Offset)); err != nil {
		return "", false
	}
	n := int(in.ByteOrder().Uint32(b))
	if n > len(b)-4 {
		return "", false
	}
	str := b[4 : 4+n]
	if i := strings.IndexByte(string(str), 0); i >= 0 {
		str = str[:i]
	}
	return string(str), true
}
