package inject

import (
	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// OtherMachine is the warning that a recording was made on another
// machine, or under another kernel, than the one a source's programs are
// of (Options.OtherMachine).
type OtherMachine struct {
	Recording reader.Origin  // what the recording says (its HOSTNAME and OSRELEASE)
	Source    bpfprog.System // the source's machine
}

// otherMachine reports whether o names another machine or kernel than
// sys: a hostname or kernel release both say, and say differently. What
// either does not say is no difference. This is the weak form of the rule
// that tells another boot's recording (unrecorded: none of its programs is
// the source's by id, tag and addresses), which needs the programs.
func otherMachine(o reader.Origin, sys bpfprog.System) bool {
	return o.Hostname != "" && sys.Hostname != "" && o.Hostname != sys.Hostname ||
		o.OSRelease != "" && sys.KernelRelease != "" && o.OSRelease != sys.KernelRelease
}

// checkOrigin calls Options.OtherMachine once the recording's origin is
// known.
func (j *injector) checkOrigin() {
	if j.originChecked || j.opts.OtherMachine == nil {
		return
	}
	o, known := j.r.Origin()
	if !known {
		return
	}
	j.originChecked = true
	if f, ok := j.src.(bpfprog.Finder); ok && o.Hostname != "" && f.HasHost(o.Hostname) {
		return // the source has that machine's programs too
	}
	if sys := j.src.System(); otherMachine(o, sys) {
		j.opts.OtherMachine(&OtherMachine{Recording: o, Source: sys})
	}
}

// progressWriter calls Options.Progress every ProgressEvery records
// written.
type progressWriter struct {
	RecordWriter
	progress func()
	n        int
}

func (w *progressWriter) WriteRecord(rec *perfdata.Record) error {
	w.passed(1)
	return w.RecordWriter.WriteRecord(rec)
}

// left is how many records may go by before Progress is due: a run of
// records passed on at once stops there.
func (w *progressWriter) left() int { return ProgressEvery - w.n%ProgressEvery }

// passed counts n records about to be written, no more than left, and
// calls Progress if it is due after the last of them.
func (w *progressWriter) passed(n int) {
	if w.n += n; w.n%ProgressEvery == 0 {
		w.progress()
	}
}
