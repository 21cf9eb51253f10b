package annotate_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/annotate"
	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestFillFrom: annotate's labels come from the recording's records; from
// the source when one is named, or when the recording has loads and no
// records, read again for it; not at all when it has loads and no records
// and cannot be read again; and from the records when it has neither.
// Reopen's error is its own, others follow the recording's name.
func TestFillFrom(t *testing.T) {
	tag := perfdata.BPFTag{0x6d, 0xee, 0xf7, 0x35, 0x7e, 0x7b, 0x45, 0x30}
	const addr, size = 0xffffffffc0001000, 0x80
	from := func(v string) []perfdata.BPFMetadataEntry {
		return []perfdata.BPFMetadataEntry{{Key: "bpf_metadata_from", Value: `"` + v + `"`}}
	}
	recording := func(loads, records, short bool) []byte {
		s := testkit.NewStream(binary.LittleEndian)
		if loads {
			s.KSymbol(addr, size, walkSym, false, false)
			s.BPFEvent(perfdata.BPFEventProgLoad, 100, tag, false)
		}
		if records {
			s.Metadata(perfdata.BPFMetadata{ProgName: walkSym, Entries: from("records")})
		}
		if short {
			s.Record(perfdata.RecordKSymbol, nil)
		}
		return s.Bytes()
	}
	src := &bpfprog.List{Programs: []*bpfprog.Program{{ID: 100, Tag: tag, Name: "walk_filter",
		Funcs:    []bpfprog.Func{{Addr: addr, Len: size, PerfName: walkSym, KernelName: walkSym}},
		Metadata: &bpfprog.Metadata{ProgNames: []string{walkSym}, Entries: []bpfprog.Entry{{Key: "bpf_metadata_from", Value: `"source"`}}},
	}}}
	errReopen, errSource := errors.New("rec.data: no such file"), errors.New("no kernel")
	for _, c := range []struct {
		name                  string
		loads, records, short bool
		named, once           bool
		reopenErr, sourceErr  error
		want                  annotate.Filled
		label                 string // of walkSym
		reopened, opened      bool   // Reopen called, Source opened
		err                   string
	}{
		{name: "records", loads: true, records: true, want: annotate.FromRecords, label: "[from=records]"},
		{name: "records, read once", loads: true, records: true, once: true, want: annotate.FromRecords, label: "[from=records]"},
		// inject adds none to a program with a record: the recording's stays
		{name: "records, a source named", loads: true, records: true, named: true, want: annotate.FromSource, label: "[from=records]", opened: true},
		{name: "loads without records", loads: true, want: annotate.FromSource, label: "[from=source]", reopened: true, opened: true},
		{name: "loads without records, a source named", loads: true, named: true, want: annotate.FromSource, label: "[from=source]", opened: true},
		{name: "loads without records, read once", loads: true, once: true, want: annotate.NotReread},
		{name: "no loads", want: annotate.FromRecords},
		{name: "no loads, read once", once: true, want: annotate.FromRecords},
		{name: "reopened in vain", loads: true, reopenErr: errReopen, want: annotate.FromSource, reopened: true, err: "rec.data: no such file"},
		{name: "no source", loads: true, sourceErr: errSource, want: annotate.FromSource, reopened: true, opened: true, err: "rec.data: no kernel"},
		{name: "a record too short", short: true, want: annotate.FromRecords, err: "rec.data: KSYMBOL record of 8 bytes"},
	} {
		b := recording(c.loads, c.records, c.short)
		reopened, opened := false, false
		f := annotate.From{Name: "rec.data", Recording: rectest.Stream(t, b, reader.Options{}), SourceNamed: c.named,
			Source: func() (bpfprog.Source, func(), error) {
				opened = true
				if c.sourceErr != nil {
					return nil, nil, c.sourceErr
				}
				return src, func() {}, nil
			}}
		if !c.once {
			f.Reopen = func() (inject.Recording, error) {
				reopened = true
				if c.reopenErr != nil {
					return nil, c.reopenErr
				}
				return rectest.Stream(t, b, reader.Options{}), nil
			}
		}
		tab := annotate.NewTable(nil)
		got, err := annotate.FillFrom(tab, f)
		tab.Close()
		switch {
		case c.err == "" && err != nil, c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		case c.reopenErr != nil && err != c.reopenErr:
			t.Errorf("%s: %v, want Reopen's error as it is", c.name, err)
		case got != c.want || tab.Label(walkSym) != c.label || reopened != c.reopened || opened != c.opened:
			t.Errorf("%s: filled %v, label %q, reopened %v, source opened %v; want %v, %q, %v, %v",
				c.name, got, tab.Label(walkSym), reopened, opened, c.want, c.label, c.reopened, c.opened)
		}
	}
}
