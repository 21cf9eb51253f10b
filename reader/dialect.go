package reader

import "github.com/bpfmeta/bpfmeta/perfdata"

// dialect is the writer a recording comes from, as far as it changes how
// records are framed. Linux perf, Android's simpleperf and the Google perf
// of 2012 (ChromeOS) agree on everything but which record types carry data
// beyond header.size.
type dialect int

const (
	dialectPerf dialect = iota
	// dialectSimpleperf: simpleperf files set feature bits from 128 up
	// (FEAT_SIMPLEPERF_START). Its TRACING_DATA (66) record holds the trace
	// data within header.size; AUXTRACE (71) is framed as perf frames it.
	dialectSimpleperf
	// dialectGooglePipe: a pre-upstream Google perf 3.3 wrote the header
	// features of a pipe stream as records 69 and up (HOSTNAME = 69 ...),
	// before HEADER_ATTR; there 71 is the VERSION string, not AUXTRACE.
	dialectGooglePipe
)

// simpleperfFeatureStart is simpleperf's FEAT_SIMPLEPERF_START.
const simpleperfFeatureStart = 128

func fileDialect(h *perfdata.FileHeader) dialect {
	for _, f := range h.FeatureList() {
		if f >= simpleperfFeatureStart {
			return dialectSimpleperf
		}
	}
	return dialectPerf
}

// pipeDialect decides from the first record of a pipe stream: upstream perf
// starts with HEADER_ATTR (64) or HEADER_FEATURE (80), the Google variant with
// its header-feature records (69..79).
func pipeDialect(first perfdata.RecordType) dialect {
	if first >= 69 && first < perfdata.RecordHeaderFeature {
		return dialectGooglePipe
	}
	return dialectPerf
}

// hasPayload reports whether records of type t are followed by data that
// header.size does not count.
func (d dialect) hasPayload(t perfdata.RecordType) bool {
	switch t {
	case perfdata.RecordAuxtrace:
		return d != dialectGooglePipe
	case perfdata.RecordHeaderTracingData:
		return d != dialectSimpleperf
	}
	return false
}
