package annotate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"

	"github.com/google/pprof/profile"

	"github.com/bpfmeta/bpfmeta/internal/budget"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// LabelledLineWriter is a LineWriter told, with each line, the label Run's
// annotation put in it ("" for none): a line's own text cannot tell a
// label from a symbol's bytes, the writer that gives it can.
type LabelledLineWriter interface {
	LineWriter
	LabelledLine(line []byte, label string) error
}

// writeLine hands lw the annotated line, with its label if lw takes it.
func writeLine(lw LineWriter, line []byte, label string) error {
	if l, ok := lw.(LabelledLineWriter); ok {
		return l.LabelledLine(line, label)
	}
	return lw.Line(line)
}

// Profile reads perf script text from r and hands p its lines, every BPF
// function frame labelled, as Fold does for a Folder.
func Profile(r io.Reader, p *Profiler, t *Table) (Stats, error) {
	return run(r, nil, p, t)
}

// MetadataLabelPrefix starts the sample label of each metadata key
// (bpf_version for bpf_metadata_version), so that go tool pprof
// -tagfocus bpf_version=1.4.2 selects the samples that ran in a build.
const MetadataLabelPrefix = "bpf_"

// The sample labels of a sample's thread, named as perf_data_converter
// names them (PidLabelKey, TidLabelKey, CommLabelKey) for what perf script
// prints: comm, and pid/tid (-F +pid) or one number, the tid of perf
// script's default fields or the pid of -F pid, which the text does not
// tell apart and so is labelled thread.
const (
	labelComm   = "comm"
	labelPID    = "pid"
	labelTID    = "tid"
	labelThread = "thread"
)

// Costs of what a Profiler keeps, beside the bytes of their strings: the
// structures of package profile, the map entries that find them, and what
// profile.Write's encoding of them takes at the end.
const (
	locationCost = 256
	functionCost = 192
	mappingCost  = 256
	sampleCost   = 384
)

// A Profiler builds a pprof profile (profile.proto, as go tool pprof,
// Parca and Pyroscope read it) of perf script text, with package profile,
// the pprof project's own: one sample per perf script sample, valued in
// samples/count and in the event's period where perf script prints it,
// its callchain as locations leaf first (address, the dso as mapping, the
// symbol as function), comm, pid and tid as labels. A BPF function's frame
// is the function annotate's label names, and a sample with such a frame
// carries its program's metadata as labels, bpf_<key>=value (a frame
// labelled Ambiguous gives none).
//
// Samples alike in all of that are one profile.Sample with their values
// summed, as pprof merges them: it keeps the distinct locations,
// functions, mappings and samples, drawn from the process's memory
// budget, never the text.
type Profiler struct {
	prof     *profile.Profile
	events   map[string]int // an event's value index
	locs     map[string]*location
	funcs    map[string]*profile.Function // by name and dso
	mappings map[string]*profile.Mapping
	samples  map[string]*profile.Sample
	size     int64
	mem      budget.Meter
	cur      sample
	key      []byte
	stats    ProfileStats
}

// ProfileStats counts what a Profiler read.
type ProfileStats struct {
	Samples int64 // perf script samples in the profile
	// Dropped counts the lines of perf script output that could be of
	// a sample but are not in the profile: a frame with no sample's
	// header before it (perf script -F without comm and tid), a line
	// among a sample's frames that is none.
	Dropped int64
}

// location is a frame's location and the metadata labels its label says.
type location struct {
	loc  *profile.Location
	meta [][2]string
}

// sample is the perf script sample being read.
type sample struct {
	in     bool // a header read, the sample not yet ended
	chain  bool // its frames follow on their own lines (-g)
	event  int  // its period's value index, 0: no period
	period int64
	comm   string
	ids    [2]int64
	nids   int // 1: thread; 2: pid, tid
	locs   []*location
}

// NewProfiler returns an empty Profiler.
func NewProfiler() *Profiler {
	p := &Profiler{
		prof:     &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}}},
		events:   map[string]int{},
		locs:     map[string]*location{},
		funcs:    map[string]*profile.Function{},
		mappings: map[string]*profile.Mapping{},
		samples:  map[string]*profile.Sample{},
		mem:      budget.Meter{What: "the pprof profile"},
	}
	return p
}

// Stats is what p read so far.
func (p *Profiler) Stats() ProfileStats { return p.stats }

// Line takes one line of perf script output without labels.
func (p *Profiler) Line(line []byte) error { return p.LabelledLine(line, "") }

// LabelledLine takes one line of perf script output, its newline (if any)
// included, and the label annotate put in it.
func (p *Profiler) LabelledLine(line []byte, label string) error {
	body := bytes.TrimSuffix(line, []byte("\n"))
	body = bytes.TrimSuffix(body, []byte("\r"))
	switch {
	case len(body) == 0:
		return p.end() // the blank line after a sample's callchain
	case body[0] == '#':
		return nil
	case p.cur.in && p.cur.chain && isBlank(body[0]):
		return p.frameLine(body, label)
	}
	if err := p.end(); err != nil {
		return err
	}
	if ok, err := p.header(body, label); ok || err != nil {
		return err
	}
	if recordLine(body) || srcline(body) || perfdata.IsEntryLine(body) || !perfScriptLine(body) {
		// perf script output, but of no sample; or not perf script
		// output, which Run counts (Stats.Unparsed)
		return nil
	}
	p.stats.Dropped++
	return nil
}

// frameLine takes a line among a sample's frames: a frame, or what perf
// script prints after one (-F +srcline).
func (p *Profiler) frameLine(body []byte, label string) error {
	frame := bytes.TrimLeft(body, " \t")
	if _, ok := frameAddress(frame); !ok && (srcline(body) || perfdata.IsEntryLine(body)) {
		return nil
	}
	l, err := p.location(frame, label)
	if err != nil || l == nil {
		if l == nil {
			p.stats.Dropped++
		}
		return err
	}
	return p.push(l)
}

// pprofFrameCost is what a frame of the sample being read costs until it
// ends: its location in the stack, its id in the sample's key, and its
// place in a new sample's locations.
const pprofFrameCost = 8 + binary.MaxVarintLen64 + 8

// push adds a frame to the sample being read, charged to the budget as
// the stack grows: a stack of millions of frames is refused as it is
// read, as Fold refuses it.
func (p *Profiler) push(l *location) error {
	s := &p.cur
	s.locs = append(s.locs, l)
	return p.mem.Set(p.size + int64(len(s.locs))*pprofFrameCost)
}

// periodRE is what follows a sample's thread when its frame is on the
// same line (perf script without callchains): [cpu] time: [period]
// event: and the frame, the event's modifiers part of its name as in
// eventRE.
var periodRE = regexp.MustCompile(`:[\t ]*(\d+)?[\t ]+([^\t ]+):[\t ]+(.*)$`)

// header starts a sample at its first line, whether it has a callchain
// (the line ends at the event, as stackcollapse-perf.pl's eventRE reads
// it) or its one frame after the event. perf script right-aligns comm
// (%16s) when it prints no callchain.
func (p *Profiler) header(body []byte, label string) (bool, error) {
	line := bytes.TrimLeft(body, " \t")
	h, ok := unknownThread(line)
	if !ok {
		h, ok = headerOf(line)
	}
	if !ok {
		return false, nil
	}
	s := &p.cur
	*s = sample{in: true, chain: true, comm: string(h.comm), locs: s.locs[:0]}
	s.ids[0], _ = strconv.ParseInt(string(h.pid), 10, 64)
	s.nids = 1
	if h.tid != nil {
		s.ids[1], _ = strconv.ParseInt(string(h.tid), 10, 64)
		s.nids = 2
	}
	rest := line[h.end:]
	var period, event, frame []byte
	if pe, ev, ok := eventFields(rest); ok {
		period, event = pe, ev
	} else if e := periodRE.FindSubmatch(rest); e != nil {
		period, event, frame = e[1], e[2], e[3]
		s.chain = false
	} else if pe, ev, ok := eventFields(line); ok {
		// the header took more than comm and pid: the sample's period
		// as --folded (stackcollapse-perf.pl) reads it, so that the
		// totals agree
		period, event = pe, ev
	}
	if len(period) > 0 {
		n, err := strconv.ParseInt(string(period), 10, 64)
		if err == nil {
			s.period = n
			if s.event, err = p.eventIndex(string(event)); err != nil {
				return true, err
			}
		}
	}
	if len(frame) > 0 {
		l, err := p.location(frame, label)
		if err != nil {
			return true, err
		}
		if l == nil {
			p.stats.Dropped++
		} else if err := p.push(l); err != nil {
			return true, err
		}
	}
	return true, nil
}

// unknownThread matches the first line of a sample perf found no thread
// for: its comm is thread__comm_str()'s ":-1" and its pid (and tid) -1,
// which headerOf, stackcollapse-perf.pl's rule, does not read as a pid
// (it takes the comm up to the time, and the period for the pid).
func unknownThread(line []byte) (header, bool) {
	const comm, id = ":-1", "-1"
	if !bytes.HasPrefix(line, []byte(comm)) {
		return header{}, false
	}
	h := header{comm: line[:len(comm)]}
	t := len(comm)
	for t < len(line) && isPerlSpace(line[t]) {
		t++
	}
	if t == len(comm) || !bytes.HasPrefix(line[t:], []byte(id)) {
		return header{}, false
	}
	h.pid = line[t : t+len(id)]
	t += len(id)
	if bytes.HasPrefix(line[t:], []byte("/"+id)) {
		h.tid = line[t+1 : t+1+len(id)]
		t += 1 + len(id)
	}
	if t == len(line) || !isPerlSpace(line[t]) {
		return header{}, false
	}
	for t < len(line) && isPerlSpace(line[t]) {
		t++
	}
	h.end = t
	return h, true
}

// eventModifiersRE is the modifiers perf's parse-events accepts after an
// event's name (cpu-clock:ppp), which perf script prints with it.
var eventModifiersRE = regexp.MustCompile(`:[ukhIGHpPSDWeb]+$`)

// eventIndex is the value index of event's period, a sample type added
// at its first sample: nanoseconds for perf's clock events (their period
// is a time, perf_swevent_hrtimer's), a count for any other.
func (p *Profiler) eventIndex(event string) (int, error) {
	if i, ok := p.events[event]; ok {
		return i, nil
	}
	name := eventModifiersRE.ReplaceAllString(event, "")
	unit := "count"
	if name == "cpu-clock" || name == "task-clock" {
		unit = "nanoseconds"
	}
	name = p.typeName(name, event)
	if err := p.grow(int64(len(event)+len(name)) + mappingCost); err != nil {
		return 0, err
	}
	i := len(p.prof.SampleType)
	p.prof.SampleType = append(p.prof.SampleType, &profile.ValueType{Type: name, Unit: unit})
	p.events[event] = i
	return i, nil
}

// typeName is name, unless a sample type has it: one event with other
// modifiers (cycles:u, cycles:k) is named as perf script names it, and
// else by its index.
func (p *Profiler) typeName(name, event string) string {
	for _, n := range []string{name, event} {
		if !slices.ContainsFunc(p.prof.SampleType, func(st *profile.ValueType) bool { return st.Type == n }) {
			return n
		}
	}
	return fmt.Sprintf("%s#%d", event, len(p.prof.SampleType))
}

// grow draws n bytes more from the budget.
func (p *Profiler) grow(n int64) error {
	if err := p.mem.Set(p.size + n); err != nil {
		return err
	}
	p.size += n
	return nil
}

// end counts the sample read, in the sample of its values, labels and
// callchain.
func (p *Profiler) end() error {
	s := &p.cur
	if !s.in {
		return nil
	}
	s.in = false
	p.stats.Samples++
	k := p.key[:0]
	k = binary.AppendUvarint(k, uint64(s.event))
	k = binary.AppendUvarint(k, uint64(s.nids))
	for _, id := range s.ids[:s.nids] {
		k = binary.AppendVarint(k, id)
	}
	k = binary.AppendUvarint(k, uint64(len(s.comm)))
	k = append(k, s.comm...)
	for _, l := range s.locs {
		k = binary.AppendUvarint(k, l.loc.ID)
	}
	p.key = k
	ps, ok := p.samples[string(k)]
	if !ok {
		if err := p.grow(int64(len(k)+len(s.comm)) + sampleCost + 8*int64(len(s.locs))); err != nil {
			return err
		}
		ps = p.newSample()
		p.samples[string(k)] = ps
	}
	if len(ps.Value) < len(p.prof.SampleType) {
		ps.Value = append(ps.Value, make([]int64, len(p.prof.SampleType)-len(ps.Value))...)
	}
	ps.Value[0]++
	if s.event > 0 {
		ps.Value[s.event] += s.period
	}
	// a huge stack's buffers are not kept for the next sample (uncharged)
	if cap(s.locs) > maxKeptStack {
		s.locs = nil
	}
	if cap(p.key) > maxKeptStack*binary.MaxVarintLen64 {
		p.key = nil
	}
	return p.mem.Set(p.size)
}

// newSample is the profile's sample of the current one's callchain and
// labels.
func (p *Profiler) newSample() *profile.Sample {
	s := &p.cur
	ps := &profile.Sample{Location: make([]*profile.Location, len(s.locs)), Label: map[string][]string{labelComm: {s.comm}}}
	for i, l := range s.locs {
		ps.Location[i] = l.loc
		for _, kv := range l.meta {
			if vs := ps.Label[kv[0]]; !slices.Contains(vs, kv[1]) {
				ps.Label[kv[0]] = append(vs, kv[1])
			}
		}
	}
	switch s.nids {
	case 1:
		ps.NumLabel = map[string][]int64{labelThread: {s.ids[0]}}
	case 2:
		ps.NumLabel = map[string][]int64{labelPID: {s.ids[0]}, labelTID: {s.ids[1]}}
	}
	p.prof.Sample = append(p.prof.Sample, ps)
	return ps
}
