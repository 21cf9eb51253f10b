package dump_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/dump"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestRecords: the listing of a recording has a line per record the
// reader hands out, in its order, those of compressed records indented,
// and says what the KSYMBOL and BPF_EVENT records say; Stats counts the
// same records.
func TestRecords(t *testing.T) {
	path := testkit.CorpusFile(t, "quipper_perf5.19_x86_64_branch_spec_ksymbol_bpf.data")
	open := func() *reader.Reader {
		r, err := reader.Open(path, reader.Options{Decompress: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	var want []string
	r := open()
	for r.Next() {
		rec := r.Record()
		want = append(want, rec.Header.Type.String())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}

	var b bytes.Buffer
	if err := dump.Records(&b, open(), "q.data", false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "# q.data: file format, little-endian") {
		t.Errorf("first line %q", lines[0])
	}
	var got []string
	for _, l := range lines {
		if strings.HasPrefix(l, "#") {
			continue
		}
		_, rest, ok := strings.Cut(l, "]: ")
		if !ok {
			t.Fatalf("not a record's line: %q", l)
		}
		typ, _, _ := strings.Cut(rest, " ")
		got = append(got, typ)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("listed %d records, the reader hands out %d:\n%v\n%v", len(got), len(want), got, want)
	}
	for _, sub := range []string{"]: KSYMBOL addr ", " name bpf_prog_", "]: BPF_EVENT type 1, flags 0, id "} {
		if !strings.Contains(b.String(), sub) {
			t.Errorf("no %q in the listing", sub)
		}
	}

	b.Reset()
	if err := dump.Stats(&b, open()); err != nil {
		t.Fatal(err)
	}
	if st, ok := testkit.ParseStats(b.String()); !ok || st.Counts["TOTAL"] != len(want) {
		t.Errorf("Stats: %v (TOTAL, want %d) of\n%s", st, len(want), b.String())
	}
}
