package doc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/btf"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Show is show --json's document: the BPF_METADATA records of a
// recording, in its order. show writes it a record at a time
// (ShowWriter), as Encode writes it whole.
type Show struct {
	Header
	Records []Record `json:"records"`
}

// Record is a BPF_METADATA record in show --json's document
// (docs/json.md), with the function it belongs to (bpftrack.MetadataRecord).
// Its entries are bpfprog.Entry, as a program's are, typed where the text
// of the value tells the value (btf.DumpJSON) or a TypedFunc knows it.
type Record struct {
	// Offset is the record's in its file; File names the file of a
	// directory recording (perf record --threads) it is in.
	Offset   int64           `json:"offset"`
	File     string          `json:"file,omitempty"`
	ProgName string          `json:"prog_name"`
	Entries  []bpfprog.Entry `json:"entries"`
	// KSymbol is the function the record belongs to, null if the
	// recording has none of its name.
	KSymbol *KSymbol `json:"ksymbol"`
	// Program is the id of KSymbol's program, where the recording has a
	// BPF_EVENT of it.
	Program *uint32 `json:"program_id,omitempty"`
	// Samples counts the samples in KSymbol and Others.
	Samples int `json:"samples"`
	// Others are further KSYMBOLs of the same name (the same function in
	// several loads of a program) the record may belong to, [] when there
	// are none; MoreOthers counts those not listed.
	Others     []KSymbol `json:"others"`
	MoreOthers int       `json:"more_others,omitempty"`
}

// KSymbol is a BPF function of the recording (its KSYMBOL record) that a
// Record belongs to.
type KSymbol struct {
	Addr bpfprog.Addr `json:"addr"`
	Len  uint32       `json:"len"`
	Name string       `json:"name"`
	// Matched says how (bpftrack.Match): "name" (the same name),
	// "function" (only the function name after the tag agrees, as for the
	// main function of a program loaded during the recording), "tag", or
	// "ambiguous" (one of the candidates listed, or a load the recording
	// has no KSYMBOL of).
	Matched string `json:"matched"`
}

// TypedFunc gives the typed form of entry e of a BPF_METADATA record of
// program progName (the record's, perf's bpf_prog_<tag>_<function>), or
// nil: the record holds perf's text only, a program's BTF the rest
// (stable.TypedIndex.OfRecord, from a snapshot's programs).
type TypedFunc func(progName string, e perfdata.BPFMetadataEntry) json.RawMessage

// NewRecord is m as show --json writes it; typed, if not nil, types its
// entries where the text cannot (a struct's fields' names), btf.DumpJSON
// where typed does not.
func NewRecord(m *bpftrack.MetadataRecord, typed TypedFunc) Record {
	r := Record{Offset: m.Offset, File: m.File, ProgName: m.Metadata.ProgName, Entries: []bpfprog.Entry{}, Others: []KSymbol{}, Samples: m.Samples, MoreOthers: m.MoreFuncs}
	for _, e := range m.Metadata.Entries {
		var t json.RawMessage
		if typed != nil {
			t = typed(m.Metadata.ProgName, e)
		}
		if t == nil {
			t, _ = btf.DumpJSON(e.Value)
		}
		r.Entries = append(r.Entries, bpfprog.Entry{Key: e.Key, Value: e.Value, Typed: t})
	}
	for j, f := range m.Funcs {
		k := KSymbol{Addr: bpfprog.Addr(f.Addr), Len: f.Len, Name: f.Name, Matched: m.Matched.String()}
		if j == 0 {
			r.KSymbol = &k
		} else {
			r.Others = append(r.Others, k)
		}
	}
	if p := m.Program(); p != nil {
		id := p.ID
		r.Program = &id
	}
	return r
}

// ShowWriter writes show --json's document a record at a time, the bytes
// Encode writes of the whole Show: what a recording's records say of their
// functions can be many times the recording, and is never held.
type ShowWriter struct {
	w io.Writer
	n int
}

// NewShowWriter writes a Show to w; nothing is written before the first
// record, or Close.
func NewShowWriter(w io.Writer) *ShowWriter { return &ShowWriter{w: w} }

// showHead is the document without records: it ends in `"records": []`
// and `}`, and the records go between the brackets.
func showHead() ([]byte, error) {
	return json.MarshalIndent(Show{Header: NewHeader(KindShow), Records: []Record{}}, "", "  ")
}

// Write writes the next record. An error is the writer's, but for one of
// the document's form.
func (s *ShowWriter) Write(r Record) error {
	var b bytes.Buffer
	if s.n == 0 {
		head, err := showHead()
		if err != nil {
			return err
		}
		open, ok := bytes.CutSuffix(head, []byte("[]\n}"))
		if !ok {
			return fmt.Errorf("show --json: the document's head %q", head)
		}
		b.Write(open)
		b.WriteString("[\n")
	} else {
		b.WriteString(",\n")
	}
	rec, err := json.MarshalIndent(r, "    ", "  ")
	if err != nil {
		return err
	}
	s.n++
	b.WriteString("    ")
	b.Write(safetext.JSON(rec))
	_, err = s.w.Write(b.Bytes())
	return err
}

// Close ends the document: after the last record, or in place of any
// (`"records": []`). It does not close the writer.
func (s *ShowWriter) Close() error {
	if s.n == 0 {
		head, err := showHead()
		if err != nil {
			return err
		}
		_, err = s.w.Write(append(head, '\n'))
		return err
	}
	_, err := io.WriteString(s.w, "\n  ]\n}\n")
	return err
}
