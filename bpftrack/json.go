package bpftrack

import (
	"encoding/json"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/btf"
)

// recordJSON is a MetadataRecord in JSON (bpfmeta show --json; the
// README's "JSON" section). Its entries are bpfprog.Entry, as a program's
// are, typed where the text of the value tells the value (btf.DumpJSON).
type recordJSON struct {
	Offset   int64           `json:"offset"`
	File     string          `json:"file,omitempty"`
	ProgName string          `json:"prog_name"`
	Entries  []bpfprog.Entry `json:"entries"`
	// KSymbol is the function the record belongs to, null if the
	// recording has none of its name.
	KSymbol *funcJSON `json:"ksymbol"`
	Program *uint32   `json:"program_id,omitempty"`
	// Samples counts the samples in KSymbol and Others.
	Samples int `json:"samples"`
	// Others are further KSYMBOLs of the same name (the same function in
	// several loads of a program) the record may belong to, [] when there
	// are none; MoreOthers counts those not listed.
	Others     []funcJSON `json:"others"`
	MoreOthers int        `json:"more_others,omitempty"`
}

type funcJSON struct {
	Addr bpfprog.Addr `json:"addr"`
	Len  uint32       `json:"len"`
	Name string       `json:"name"`
	// Matched says how (Match): "name" (the same name), "function" (only
	// the function name after the tag agrees, as for the main function of
	// a program loaded during the recording), or "ambiguous" (one of the
	// candidates listed, or a load the recording has no KSYMBOL of).
	Matched string `json:"matched"`
}

// Program is the program the record belongs to, when that is known: it
// belongs to one function, of a program the recording has a BPF_EVENT of.
func (m *MetadataRecord) Program() *Program {
	if len(m.Funcs) == 1 && m.MoreFuncs == 0 && m.Matched != MatchAmbiguous {
		return m.Funcs[0].Program
	}
	return nil
}

// MarshalJSON writes the record as bpfmeta show --json does (a value
// receiver, so that a MetadataRecord is written so wherever it is).
func (m MetadataRecord) MarshalJSON() ([]byte, error) {
	r := recordJSON{Offset: m.Offset, File: m.File, ProgName: m.Metadata.ProgName, Entries: []bpfprog.Entry{}, Others: []funcJSON{}, Samples: m.Samples, MoreOthers: m.MoreFuncs}
	for _, e := range m.Metadata.Entries {
		typed, _ := btf.DumpJSON(e.Value)
		r.Entries = append(r.Entries, bpfprog.Entry{Key: e.Key, Value: e.Value, Typed: typed})
	}
	for j, f := range m.Funcs {
		k := funcJSON{Addr: bpfprog.Addr(f.Addr), Len: f.Len, Name: f.Name, Matched: m.Matched.String()}
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
	return json.Marshal(r)
}
