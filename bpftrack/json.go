package bpftrack

import (
	"encoding/json"
	"strconv"

	"github.com/bpfmeta/bpfmeta/btf"
)

// recordJSON is a MetadataRecord in JSON (bpfmeta show --json; the
// README's "JSON" section).
type recordJSON struct {
	Offset   int64       `json:"offset"`
	ProgName string      `json:"prog_name"`
	Entries  []entryJSON `json:"entries"`
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

// entryJSON is an entry as programs --json has it, typed where the text
// of the value tells the value (btf.DumpJSON).
type entryJSON struct {
	Key   string          `json:"key"`
	Value string          `json:"value"`
	Typed json.RawMessage `json:"typed,omitempty"`
}

type funcJSON struct {
	Addr hexAddr `json:"addr"`
	Len  uint32  `json:"len"`
	Name string  `json:"name"`
	// Matched says how (Match): "name" (the same name), "function" (only
	// the function name after the tag agrees, as for the main function of
	// a program loaded during the recording), or "ambiguous" (one of the
	// candidates listed, or a load the recording has no KSYMBOL of).
	Matched string `json:"matched"`
}

// hexAddr is a kernel address, "0x..." in JSON: kernel addresses are above
// 2^53, where JSON readers that use doubles (jq, JavaScript) round a number.
type hexAddr uint64

func (a hexAddr) MarshalJSON() ([]byte, error) {
	return []byte(`"0x` + strconv.FormatUint(uint64(a), 16) + `"`), nil
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
	r := recordJSON{Offset: m.Offset, ProgName: m.Metadata.ProgName, Entries: []entryJSON{}, Others: []funcJSON{}, Samples: m.Samples, MoreOthers: m.MoreFuncs}
	for _, e := range m.Metadata.Entries {
		typed, _ := btf.DumpJSON(e.Value)
		r.Entries = append(r.Entries, entryJSON{e.Key, e.Value, typed})
	}
	for j, f := range m.Funcs {
		k := funcJSON{Addr: hexAddr(f.Addr), Len: f.Len, Name: f.Name, Matched: m.Matched.String()}
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
