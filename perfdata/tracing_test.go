package perfdata_test

import (
	"os"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestTracingDataLen parses the TRACING_DATA of the corpus recording with
// tracepoints: the trace data must parse, end within its section, and
// leave at most what the writers of those files are known to pad; without
// its kallsyms copy (as a pipe carries it) it must parse to its end.
func TestTracingDataLen(t *testing.T) {
	for _, tc := range []struct {
		file string
		want int // what perf's trace_report() consumes, -1: the whole section
	}{
		{"haskellperf_PERFFILE_v1_tracepoints.data", -2},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := testkit.CorpusFile(t, tc.file)
			r, err := reader.Open(path, reader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			sec, ok := r.Layout().Feature(perfdata.FeatTracingData)
			if !ok {
				t.Fatal("no TRACING_DATA feature")
			}
			f, _ := os.Open(path)
			defer f.Close()
			b := make([]byte, sec.Size)
			if _, err := f.ReadAt(b, int64(sec.Offset)); err != nil {
				t.Fatal(err)
			}
			td, err := perfdata.ParseTracingData(b)
			if err != nil {
				t.Fatal(err)
			}
			n := td.Len
			p := td.ForPipe(b)
			if pd, err := perfdata.ParseTracingData(p); err != nil || pd.Len != len(p) || pd.KallsymsLen != 4 {
				t.Errorf("ForPipe: %d bytes parse as %+v, %v", len(p), pd, err)
			}
			t.Logf("section %d bytes, trace data %d", len(b), n)
			if tc.want == -1 && n != len(b) {
				t.Errorf("trace data %d bytes, section %d", n, len(b))
			}
			if n > len(b) || n < len(b)/2 {
				t.Errorf("trace data %d bytes of a %d-byte section", n, len(b))
			}
		})
	}
}
