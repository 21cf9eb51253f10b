package reader

import "github.com/bpfmeta/bpfmeta/perfdata"

// Origin is what a recording says of where it was made: its HOSTNAME,
// OSRELEASE and VERSION features (perf_header_strings), read from a file's
// feature sections, or from the HEADER_FEATURE records at the start of a
// pipe stream as they go by. Empty strings are features it does not have.
type Origin struct {
	Hostname    string // uname -n of the machine
	OSRelease   string // uname -r: its kernel release
	PerfVersion string // the perf that recorded
}

// maxOriginString bounds a feature string the reader keeps.
const maxOriginString = 4096

// Origin returns the recording's origin, and whether it is complete: a
// pipe stream's is known once a record other than HEADER_ATTR and
// HEADER_FEATURE has been read (perf writes the features first).
func (r *Reader) Origin() (Origin, bool) {
	return r.origin, r.layout != nil || r.originDone
}

// readOrigin reads a file's origin from its feature sections.
func (r *Reader) readOrigin() {
	read := func(f perfdata.Feature) string {
		s, ok := r.layout.Feature(f)
		if !ok || s.Size < 4 || s.Size > maxOriginString {
			return ""
		}
		b := make([]byte, s.Size)
		if _, err := r.src.ReadAt(b, int64(s.Offset)); err != nil {
			return ""
		}
		str, _ := perfdata.DecodeHeaderString(b, r.order)
		return str
	}
	r.origin = Origin{read(perfdata.FeatHostname), read(perfdata.FeatOSRelease), read(perfdata.FeatVersion)}
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
		str, _ := perfdata.DecodeHeaderString(b, r.order)
		switch perfdata.Feature(r.order.Uint64(rec.Raw[8:])) {
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
