package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
	"github.com/bpfmeta/bpfmeta/dump"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/outfile"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/writer"
)

// printOmitted notes the header sections of a file a pipe output left out:
// those whose content is lost (writer.Omitted.Lost), all with -v.
func printOmitted(w io.Writer, in *cliutil.Input, wr *writer.Writer, verbose bool) {
	for _, f := range wr.Omitted() {
		if verbose || f.Lost() {
			fmt.Fprintf(w, "bpfmeta: note: %s: feature %v (%s) is not in the pipe stream: %s\n", in.Name, f.Feature, plural(int(f.Size), "byte"), f.Why)
		}
	}
}

// warnOthers warns that what a directory recording holds besides data and
// data.N (perf record --kcore's kcore_dir) is not in the output.
func warnOthers(w io.Writer, in *cliutil.Input) {
	names, n := in.Others()
	if n == 0 {
		return
	}
	more := ""
	if n > len(names) {
		more = fmt.Sprintf(" and %d more", n-len(names))
	}
	fmt.Fprintf(w, "bpfmeta: warning: %s: %s%s not copied: bpfmeta writes a directory recording's data and data.N files only\n", in.Name, strings.Join(names, ", "), more)
}

// warnTrailingDropped warns that a file output left out the bytes after a
// pipe stream's last record that are not a record.
func warnTrailingDropped(w io.Writer, in *cliutil.Input, wr *writer.Writer) {
	if off, n := wr.TrailingDropped(); n > 0 {
		fmt.Fprintf(w, "bpfmeta: warning: %s: dropped %s at %#x after the last record that are not a record (a file holds only records)\n", in.Name, plural(n, "byte"), off)
	}
}

// warnUnfinished warns, as perf does, about a file whose header says its
// data section is empty (perfdata.FileLayout.Unfinished), and, as perf
// does not, about a directory recording that lacks a data file.
func warnUnfinished(w io.Writer, in *cliutil.Input) {
	if l := in.Layout(); l != nil && l.Unfinished() {
		fmt.Fprintf(w, "bpfmeta: warning: %s: the data size field is 0, which is unexpected: %s\n", in.Name, cliutil.UnfinishedQuestion)
	}
	if first, n := in.MissingDataFiles(); n > 0 {
		names := make([]string, len(first))
		for i, f := range first {
			names[i] = perfdata.DataFileName(f)
		}
		more := ""
		if n > len(first) {
			more = fmt.Sprintf(" and %d more", n-len(first))
		}
		fmt.Fprintf(w, "bpfmeta: warning: %s: no %s%s: perf record --threads writes data.0, data.1, ... with no gap, so the records of %s are lost (perf reads what is there, and says nothing)\n",
			in.Name, strings.Join(names, ", "), more, plural(n, "recording thread"))
	}
}

// summary says, for -v, what was read: records, bytes, format, and the
// recording's origin.
func printSummary(w io.Writer, in *cliutil.Input, start time.Time) {
	var b strings.Builder
	n := in.Counts()
	fmt.Fprintf(&b, "bpfmeta: %s: %s", in.Name, plural(int(n.Records), "record"))
	if n.Inner > 0 {
		fmt.Fprintf(&b, " (and %d records, %d bytes, inside compressed records)", n.Inner, n.InnerBytes)
	}
	size := in.Offset()
	if l := in.Layout(); l != nil {
		size = l.Size
	}
	fmt.Fprintf(&b, ", %d bytes, %v format, %s", size, in.Format(), dump.OrderName(in.ByteOrder()))
	if o, _ := in.Origin(); o.PerfVersion != "" || o.Hostname != "" || o.OSRelease != "" {
		b.WriteString(", recorded")
		if o.PerfVersion != "" {
			fmt.Fprintf(&b, " by perf %s", safetext.Quote(o.PerfVersion))
		}
		if o.Hostname != "" || o.OSRelease != "" {
			fmt.Fprintf(&b, " on %s", machine(o.Hostname, o.OSRelease))
		}
	}
	fmt.Fprintf(&b, "; read in %.3f s\n", time.Since(start).Seconds())
	io.WriteString(w, b.String())
}

// warnOtherMachine warns that the recording was made on another machine
// or kernel than the metadata comes from, which says why nothing matched.
func warnOtherMachine(w io.Writer, name string, m *inject.OtherMachine, from string) {
	// Not "do not match" as a fact: the hostname may have been changed
	// (or the snapshot's edited), and a program that matches by id, tag
	// and addresses gets its records all the same; the summary that
	// follows counts them.
	fmt.Fprintf(w, "bpfmeta: warning: %s was recorded on %s; %s is of %s: only programs that match the recording's by id, tag and addresses get metadata (none, if these are two machines)\n",
		name, machine(m.Recording.Hostname, m.Recording.OSRelease), from, machine(m.Source.Hostname, m.Source.KernelRelease))
}

// machine names a machine by what is known of it.
func machine(host, release string) string {
	switch {
	case host == "" && release == "":
		return "an unknown machine"
	case release == "":
		return safetext.Quote(host)
	case host == "":
		return "a machine with kernel " + safetext.Quote(release)
	}
	return safetext.Quote(host) + " (kernel " + safetext.Quote(release) + ")"
}

// A rewrite is one run of a command that writes the recording -i to -o
// (inject, strip, convert): the one place its lifecycle lives. The input,
// the output and the writer between them are opened together; close
// (deferred) aborts what is not committed, so that an error or a signal
// leaves nothing of the output; finish writes the last of it, and commit
// releases an output held back and commits it. blame says whose an error
// is, the output's or the input's.
type rewrite struct {
	in    *cliutil.Input
	out   *outfile.Output
	w     *writer.Writer
	notes io.Writer // the command's (verbosity.notes)
}

// openRewrite opens -i and -o (a directory recording into a directory
// with dirOut) and the writer between them, with the options opts gives
// for the output opened; with hold, the output is held back until commit
// (--strict: until the summary shows nothing is missing). The notes on
// what the output leaves out (and that the input is unfinished) are
// printed first.
func openRewrite(s *cliutil.Session, o rewriteOpts, dirOut bool, hold string, opts func(*outfile.Output) writer.Options) (*rewrite, error) {
	in, out, err := openInOut(s, o, dirOut)
	if err != nil {
		return nil, err
	}
	r := &rewrite{in: in, out: out, notes: o.notes}
	if hold != "" {
		if err := out.Hold(os.TempDir(), "the output"); err != nil {
			r.close()
			return nil, fmt.Errorf("%s: %w", hold, err)
		}
	}
	if r.w, err = newWriter(out, in, opts(out)); err != nil {
		r.close()
		return nil, writerError(in, out, err)
	}
	printOmitted(o.notes, in, r.w, o.verbose)
	warnOthers(o.notes, in)
	warnUnfinished(o.notes, in)
	return r, nil
}

// close ends the rewrite: whatever is not committed is aborted.
func (r *rewrite) close() {
	if r.w != nil {
		r.w.Abort() // stops the writer when an error ends the command early
	}
	r.out.Abort()
	r.in.Close()
}

// blame names what an error of the copy is of: the output (a
// writer.WriteError: "IN: writing OUT: ...", since the offset a record's
// error gives is the input's), or the input, at its offset; an error of
// finishing the output that inject.Write returns (inject.CloseError) as
// finish names it.
func (r *rewrite) blame(err error) error {
	if cerr := (*inject.CloseError)(nil); errors.As(err, &cerr) {
		return writerError(r.in, r.out, cerr.Err)
	}
	if werr := (*writer.WriteError)(nil); errors.As(err, &werr) {
		return fmt.Errorf("%s: writing %w", r.in.Name, r.out.Error(werr.Err))
	}
	return fmt.Errorf("%s: %w", r.in.Name, err)
}

// copy copies the records of the input unchanged, all of them or those
// keep keeps (writer.Copy), finishes, and says how many it left out.
func (r *rewrite) copy(keep func(*perfdata.Record) bool) (dropped int, err error) {
	dropped, err = writer.Copy(r.w, r.in, keep)
	if err != nil {
		return dropped, r.blame(err)
	}
	return dropped, r.finish()
}

// finish writes the last of the output (the writer's Close), and warns of
// bytes after a pipe stream's last record that a file leaves out.
func (r *rewrite) finish() error {
	if err := r.w.Close(); err != nil {
		return writerError(r.in, r.out, err)
	}
	r.finished()
	return nil
}

// finished is what follows the writer's Close, finish's or
// inject.Write's: the warning of bytes after a pipe stream's last record
// that a file leaves out.
func (r *rewrite) finished() { warnTrailingDropped(r.notes, r.in, r.w) }

// commit releases an output held back and commits it: the output is there.
func (r *rewrite) commit() error {
	if err := r.out.Release(); err != nil {
		return err
	}
	return r.out.Commit()
}

// writerError names what a writer's error is of: the input (a
// writer.InputError, with the input's offsets), or the output.
func writerError(in *cliutil.Input, out *outfile.Output, err error) error {
	if ie := (*writer.InputError)(nil); errors.As(err, &ie) {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	return out.Error(err)
}

// newProgress is inject's progress line: on a terminal's stderr, not with
// -q; the share of a file read, or the bytes of a stream; none for a
// directory recording.
func newProgress(s *cliutil.Session, in *cliutil.Input, quiet bool) *cliutil.Progress {
	if quiet || in.IsDirRecording() {
		// a directory recording's offsets start again in each data file
		return &cliutil.Progress{}
	}
	var size int64
	if l := in.Layout(); l != nil {
		size = l.Size
	}
	return s.NewProgress(in.Name, size, in.Offset)
}
