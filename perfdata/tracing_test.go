package perfdata_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestTracingDataLen parses the TRACING_DATA of the corpus recording with
// tracepoints and a kallsyms copy: the trace data must parse within its
// section; without its kallsyms copy (as a pipe carries it) it must parse to
// its end, with an empty kallsyms.
func TestTracingDataLen(t *testing.T) {
	path := testkit.CorpusFile(t, "haskellperf_PERFFILE_v1_tracepoints.data")
	r, err := reader.Open(path, reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sec, ok := r.Layout().Feature(perfdata.FeatTracingData)
	if !ok {
		t.Fatal("no TRACING_DATA feature")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data := b[sec.Offset:sec.End()]
	td, err := perfdata.ParseTracingData(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("section %d bytes, trace data %d, kallsyms %d", len(data), td.Len, td.KallsymsLen)
	if td.Len > int64(len(data)) || td.Len < int64(len(data))/2 || td.KallsymsLen <= 4 {
		t.Errorf("trace data %d bytes of a %d-byte section, kallsyms %d", td.Len, len(data), td.KallsymsLen)
	}
	var p bytes.Buffer
	if err := td.WritePipe(&p, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if int64(p.Len()) != td.PipeLen() {
		t.Errorf("WritePipe wrote %d bytes, PipeLen says %d", p.Len(), td.PipeLen())
	}
	pd, err := perfdata.ParseTracingData(bytes.NewReader(p.Bytes()), int64(p.Len()))
	if err != nil || pd.Len != int64(p.Len()) || pd.KallsymsLen != 4 {
		t.Errorf("the pipe's trace data: %d bytes parse as %+v, %v", p.Len(), pd, err)
	}
	// Cut anywhere, it is an error, never a panic.
	for _, n := range []int64{0, 5, 100, td.Kallsyms + 2, td.Len - 1} {
		if _, err := perfdata.ParseTracingData(bytes.NewReader(data[:n]), n); err == nil {
			t.Errorf("cut at %d: no error", n)
		}
	}
}
