package reader

import "github.com/bpfmeta/bpfmeta/perfdata"

// Origin is what a recording says of where and when it was made: its
// HOSTNAME, OSRELEASE and VERSION features (perf_header_strings) and its
// CLOCK_DATA, read from a file's feature sections, or from the
// HEADER_FEATURE records at the start of a pipe stream as they go by.
// Empty strings are features it does not have.
type Origin struct {
	Hostname    string // uname -n of the machine
	OSRelease   string // uname -r: its kernel release
	PerfVersion string // the perf that recorded
	// ClockData is HEADER_CLOCK_DATA (perf record -k, perf >= 5.10): the
	// recording's clock read together with the time of day. Its Version is
	// 0 when the recording has none, or one perf would not read.
	ClockData perfdata.ClockData
}

// maxOriginString bounds a feature string the reader keeps.
const maxOriginString = 4096

// Origin returns the recording's origin, and whether it is complete: a
// pipe stream's is known once a record other than HEADER_ATTR and
// HEADER_FEATURE has been read (perf writes the features first).
func (r *Reader) Origin() (Origin, bool) {
	return r.origin, r.form.layout != nil || r.originDone
}

// readOrigin reads a file's origin from its feature sections.
func (r *Reader) readOrigin() {
	read := func(f perfdata.Feature) string {
		s, ok := r.form.layout.Feature(f)
		if !ok || s.Size < 4 || s.Size > maxOriginString {
			return ""
		}
		b := make([]byte, s.Size)
		if _, err := r.form.src.ReadAt(b, int64(s.Offset)); err != nil {
			return ""
		}
		str, _ := perfdata.DecodeHeaderString(b, r.form.order)
		return str
	}
	r.origin = Origin{Hostname: read(perfdata.FeatHostname), OSRelease: read(perfdata.FeatOSRelease), PerfVersion: read(perfdata.FeatVersion)}
	if s, ok := r.form.layout.Feature(perfdata.FeatClockData); ok && s.Size >= perfdata.ClockDataSize && s.Size <= maxOriginString {
		b := make([]byte, s.Size)
		if _, err := r.form.src.ReadAt(b, int64(s.Offset)); err == nil {
			r.origin.ClockData, _ = perfdata.DecodeClockData(b, r.form.order)
		}
	}
}

// pipeOrigin takes a pipe stream's origin from its top-level records.
func (r *Reader) pipeOrigin(rec *perfdata.Record) {
	switch t := rec.Header.Type; {
	case r.originDone:
	case t == perfdata.RecordHeaderFeature && len(rec.Raw) >= 16:
		b := rec.Raw[16:]
		if len(b) > maxOriginString {
			return
		}
		f := perfdata.Feature(r.form.order.Uint64(rec.Raw[8:]))
		if f == perfdata.FeatClockData {
			r.origin.ClockData, _ = perfdata.DecodeClockData(b, r.form.order)
			return
		}
		str, _ := perfdata.DecodeHeaderString(b, r.form.order)
		switch f {
		case perfdata.FeatHostname:
			r.origin.Hostname = str
		case perfdata.FeatOSRelease:
			r.origin.OSRelease = str
		case perfdata.FeatVersion:
			r.origin.PerfVersion = str
		}
	case t != perfdata.RecordHeaderAttr:
		r.originDone = true
	}
}
