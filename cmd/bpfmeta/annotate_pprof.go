package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bpfmeta/bpfmeta/annotate"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/internal/budget"
)

// checkProfileOutput refuses what --pprof cannot write (a usage error of
// annotateOptionsOf): a terminal (the profile is binary, as a recording,
// which OpenOutput keeps from one), or --folded beside it.
func checkProfileOutput(s *cliutil.Session, o annotateOpts) error {
	if !o.pprof {
		return nil
	}
	if o.folded {
		return cliutil.Usagef("--pprof and --folded are two outputs: give one")
	}
	if s.StdoutTerminal {
		return cliutil.Usagef("stdout is a terminal, and a pprof profile is binary: redirect it to a file (> prof.pb.gz)")
	}
	return nil
}

// writeProfile reads the text on stdin into a pprof profile and writes
// it to stdout, saying what of the text is not in it.
func writeProfile(stdin io.Reader, stdout io.Writer, o annotateOpts, t *annotate.Table, name string, start time.Time) error {
	p := annotate.NewProfiler()
	st, err := annotate.Profile(stdin, p, t)
	if err == nil {
		err = p.Write(stdout)
	}
	if errors.Is(err, budget.ErrExhausted) {
		return fmt.Errorf("stdin, line %d: %w", st.Lines, err)
	}
	if err != nil {
		return err
	}
	warnAnnotated(o, name, t, st, nil)
	ps := p.Stats()
	if lost := st.Unparsed + ps.Dropped; lost > 0 {
		fmt.Fprintf(o.notes, "bpfmeta: warning: %s of the text not in the profile: %d not perf script output, %d of no sample (perf script's default fields, or -F with comm and tid, make samples)\n",
			plural(int(lost), "line"), st.Unparsed, ps.Dropped)
	}
	if o.verbose {
		fmt.Fprintf(o.notes, "bpfmeta: %s: %s in the profile; %s of %s labelled (%d ambiguous); %s read, %d not perf script output, in %.3fs\n",
			name, plural(int(ps.Samples), "sample"), plural(int(st.Annotated), "frame"), plural(t.Len(), "BPF function"), st.Ambiguous,
			plural(int(st.Lines), "line"), st.Unparsed, time.Since(start).Seconds())
	}
	return nil
}
