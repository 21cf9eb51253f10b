package doc_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestDocuments pins the head of the documents bpfmeta writes: the
// version and kind first, then what the kind has (docs/json.md), and
// empty lists as [], not null.
func TestDocuments(t *testing.T) {
	sys := bpfprog.System{KernelRelease: "6.18.44", BootID: "b", Hostname: "vm", BootTime: time.Date(2026, 12, 2, 15, 28, 36, 0, time.UTC)}
	for _, c := range []struct {
		doc  any
		want string
	}{
		{doc.NewPrograms(sys, nil), `{"format_version":2,"kind":"programs","system":{"kernel_release":"6.18.44","boot_id":"b","hostname":"vm","boot_time":"2026-12-02T15:28:36Z"},"programs":[]}`},
		{doc.Show{Header: doc.NewHeader(doc.KindShow), Records: []doc.Record{}}, `{"format_version":2,"kind":"show","records":[]}`},
		{doc.NewShowStable([]doc.StableFunc{}), `{"format_version":2,"kind":"show-stable","functions":[]}`},
		{doc.NewProgramsStable([]doc.StableProgram{{Name: "p", Functions: []string{"f"}}}), `{"format_version":2,"kind":"programs-stable","programs":[{"name":"p","functions":["f"],"entries":null}]}`},
	} {
		b, err := json.Marshal(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%T\n%s\nwant\n%s", c.doc, b, c.want)
		}
	}
	kinds := []string{doc.KindPrograms, doc.KindShow, doc.KindShowStable, doc.KindProgramsStable, doc.KindSnapshot, doc.KindJournal}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k] || k == "" {
			t.Errorf("kind %q twice, or empty", k)
		}
		seen[k] = true
	}
}

// TestShowGolden reads show --json's goldens (cmd/bpfmeta's) with Show and
// writes them again, whole (Encode) and a record at a time (ShowWriter):
// the same bytes, so that a program reads with these types all that show
// --json writes.
func TestShowGolden(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join(testkit.RepoPath(), "cmd/bpfmeta/testdata/show-*.json"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no show --json goldens: %v", err)
	}
	for _, path := range goldens {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(want))
			dec.DisallowUnknownFields() // every field is Show's
			var s doc.Show
			if err := dec.Decode(&s); err != nil {
				t.Fatal(err)
			}
			if s.Kind != doc.KindShow || s.FormatVersion != doc.FormatVersion || len(s.Records) == 0 {
				t.Fatalf("%s: a %q document of version %d with %d records", path, s.Kind, s.FormatVersion, len(s.Records))
			}
			var whole bytes.Buffer
			if err := doc.Encode(&whole, s); err != nil {
				t.Fatal(err)
			}
			if whole.String() != string(want) {
				t.Errorf("Encode of the decoded golden differs:\n%s", testkit.Diff(want, whole.Bytes()))
			}
			var streamed bytes.Buffer
			sw := doc.NewShowWriter(&streamed)
			for _, r := range s.Records {
				if err := sw.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := sw.Close(); err != nil {
				t.Fatal(err)
			}
			if streamed.String() != string(want) {
				t.Errorf("ShowWriter of the decoded golden differs:\n%s", testkit.Diff(want, streamed.Bytes()))
			}
		})
	}
}

// TestShowWriterEmpty: no record is `"records": []`, as Encode writes it.
func TestShowWriterEmpty(t *testing.T) {
	var streamed, whole bytes.Buffer
	if err := doc.NewShowWriter(&streamed).Close(); err != nil {
		t.Fatal(err)
	}
	if err := doc.Encode(&whole, doc.Show{Header: doc.NewHeader(doc.KindShow), Records: []doc.Record{}}); err != nil {
		t.Fatal(err)
	}
	const want = "{\n  \"format_version\": 2,\n  \"kind\": \"show\",\n  \"records\": []\n}\n"
	if streamed.String() != want || whole.String() != want {
		t.Errorf("ShowWriter %q, Encode %q, want %q", streamed.String(), whole.String(), want)
	}
}

// TestNewRecord: a record's entries typed by the TypedFunc where it knows
// them (it is asked with the record's name), else from perf's text; the
// first function is the ksymbol, the others "others"; the program id only
// where the function is the one.
func TestNewRecord(t *testing.T) {
	prog := &bpftrack.Program{ID: 7}
	m := &bpftrack.MetadataRecord{
		Offset:   4096,
		Metadata: perfdata.BPFMetadata{ProgName: "bpf_prog_0123456789abcdef_f", Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: `"1.0"`}, {Key: "s", Value: "{1,2}"}}},
		Funcs:    []*bpftrack.Func{{Addr: 0xffffffffc0000000, Len: 8, Name: "bpf_prog_0123456789abcdef_f", Program: prog}},
		Matched:  bpftrack.MatchName,
		Samples:  3,
	}
	var asked []string
	typed := func(progName string, e perfdata.BPFMetadataEntry) json.RawMessage {
		asked = append(asked, progName+" "+e.Key)
		if e.Key == "s" {
			return json.RawMessage(`{"a":1,"b":2}`)
		}
		return nil
	}
	for _, c := range []struct {
		typed doc.TypedFunc
		want  string
	}{
		{nil, `{"offset":4096,"prog_name":"bpf_prog_0123456789abcdef_f","entries":[{"key":"version","value":"\"1.0\"","typed":"1.0"},{"key":"s","value":"{1,2}"}],"ksymbol":{"addr":"0xffffffffc0000000","len":8,"name":"bpf_prog_0123456789abcdef_f","matched":"name"},"program_id":7,"samples":3,"others":[]}`},
		{typed, `{"offset":4096,"prog_name":"bpf_prog_0123456789abcdef_f","entries":[{"key":"version","value":"\"1.0\"","typed":"1.0"},{"key":"s","value":"{1,2}","typed":{"a":1,"b":2}}],"ksymbol":{"addr":"0xffffffffc0000000","len":8,"name":"bpf_prog_0123456789abcdef_f","matched":"name"},"program_id":7,"samples":3,"others":[]}`},
	} {
		b, err := json.Marshal(doc.NewRecord(m, c.typed))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("NewRecord\n%s\nwant\n%s", b, c.want)
		}
	}
	if got, want := strings.Join(asked, ", "), "bpf_prog_0123456789abcdef_f version, bpf_prog_0123456789abcdef_f s"; got != want {
		t.Errorf("TypedFunc asked of %s, want %s", got, want)
	}

	// two loads of the function: no one program; none: a null ksymbol
	m.Funcs = append(m.Funcs, &bpftrack.Func{Addr: 0xffffffffc0001000, Len: 8, Name: m.Funcs[0].Name})
	m.Matched, m.MoreFuncs = bpftrack.MatchAmbiguous, 2
	r := doc.NewRecord(m, nil)
	if r.Program != nil || r.KSymbol == nil || r.KSymbol.Addr != 0xffffffffc0000000 || len(r.Others) != 1 || r.Others[0].Addr != 0xffffffffc0001000 || r.Others[0].Matched != "ambiguous" || r.MoreOthers != 2 {
		t.Errorf("NewRecord of two functions: %+v", r)
	}
	m.Funcs, m.MoreFuncs = nil, 0
	b, _ := json.Marshal(doc.NewRecord(m, nil))
	if !bytes.Contains(b, []byte(`"ksymbol":null`)) || !bytes.Contains(b, []byte(`"others":[]`)) || bytes.Contains(b, []byte("program_id")) {
		t.Errorf("NewRecord of no function: %s", b)
	}
}
