package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/writer"
)

func stripCommand() *cli.Command {
	return &cli.Command{
		Name:      "strip",
		Usage:     "remove the BPF_METADATA records, for perf before 6.17",
		ArgsUsage: inputArgs,
		Description: `perf before 6.17 stops at the first BPF_METADATA record ("failed to process
type: 84"). strip copies -i to -o without them: every other byte is unchanged
(offsets after the removed records are adjusted) and the format is kept, so for
a recording bpfmeta injected the result is what it was before. It also removes
the records perf >= 6.17 wrote itself. Compressed records are checked and copied
as they are (a BPF_METADATA record inside one stays, with a warning). A
directory recording (perf record --threads) is written as a directory again,
each of its files byte for byte but for the records removed.

Examples:
   bpfmeta strip -i perf.meta.data -o perf.data
   bpfmeta strip -i perf.meta.data -o - | perf report -i -`,
		Flags: []cli.Flag{inputFlag(), outputFlag("recording"), forceFlag(), noClobberFlag(), syncFlag(), maxExpansionFlag(), quietFlag(),
			verboseFlag("name every record removed, and say what was read")},
		Action: func(c *cli.Context) error {
			start := time.Now()
			o, err := rewriteOptionsOf(c)
			if err != nil {
				return err
			}
			rw, err := openRewrite(sessionOf(c), o, true, "", func(*outfile.Output) writer.Options { return writer.Options{} })
			if err != nil {
				return err
			}
			defer rw.close()
			in := rw.in
			st := &inject.Strip{Order: in.ByteOrder()}
			if o.verbose {
				st.Removed = func(off int64, prog string) {
					fmt.Fprintf(o.notes, "bpfmeta: removed the BPF_METADATA record at %#x: prog %s\n", off, safetext.Quote(prog))
				}
			}
			removed, err := rw.copy(st.Keep)
			if err != nil {
				return err
			}
			if err := rw.commit(); err != nil {
				return err
			}
			fmt.Fprintf(o.notes, "bpfmeta: %s: removed %s\n", in.Name, plural(removed, "BPF_METADATA record"))
			if st.Stuck > 0 {
				fmt.Fprintf(o.notes, "bpfmeta: warning: %s: %s inside compressed records could not be removed: perf before 6.17 stops at them\n", in.Name, plural(st.Stuck, "BPF_METADATA record"))
			}
			if o.verbose {
				printSummary(o.notes, in, start)
			}
			return nil
		},
	}
}
