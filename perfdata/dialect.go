package perfdata

import "github.com/bpfmeta/bpfmeta/internal/enum"

// Dialect is the program that wrote a recording, as far as it changes how
// records and sections are framed. Linux perf, Android's simpleperf and the
// Google perf of 2012 (ChromeOS) agree on everything else.
type Dialect int

const (
	DialectPerf Dialect = iota
	// DialectSimpleperf: simpleperf files set feature bits from 128 up
	// (FEAT_SIMPLEPERF_START). Its TRACING_DATA (66) record holds the trace
	// data within header.size; AUXTRACE (71) is framed as perf frames it;
	// its HEADER_AUXTRACE index has no leading count.
	DialectSimpleperf
	// DialectGooglePipe: a pre-upstream Google perf 3.3 wrote the header
	// features of a pipe stream as records 69 and up (HOSTNAME = 69 ...)
	// before HEADER_ATTR; there 71 is the VERSION string, not AUXTRACE.
	DialectGooglePipe
)

var dialectNames = []string{DialectPerf: "perf", DialectSimpleperf: "simpleperf", DialectGooglePipe: "google-pipe"}

func (d Dialect) String() string { return enum.String(dialectNames, d, "Dialect") }

// SimpleperfFeatureStart is simpleperf's FEAT_SIMPLEPERF_START: its own
// feature ids start there.
const SimpleperfFeatureStart = 128

// FileDialect tells from a file header which program wrote the file.
func FileDialect(h *FileHeader) Dialect {
	for _, f := range h.FeatureList() {
		if f >= SimpleperfFeatureStart {
			return DialectSimpleperf
		}
	}
	return DialectPerf
}

// PipeDialect tells from the header of the first record of a pipe stream
// which program wrote it: upstream perf starts with HEADER_ATTR (64) or
// HEADER_FEATURE (80), the Google variant with one of its header-feature
// records (69..79), a perf_header_string of 12 + 64*n bytes, which no
// upstream record of those types can be (they are 8-byte multiples).
func PipeDialect(first EventHeader) Dialect {
	if first.Type >= 69 && first.Type < RecordHeaderFeature && first.Size%8 != 0 {
		return DialectGooglePipe
	}
	return DialectPerf
}

// HasPayload reports whether records of type t are followed by data that
// header.size does not count.
func (d Dialect) HasPayload(t RecordType) bool {
	switch t {
	case RecordAuxtrace:
		return d != DialectGooglePipe
	case RecordHeaderTracingData:
		return d != DialectSimpleperf
	}
	return false
}
