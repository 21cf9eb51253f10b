package perfdata_test

import (
	"encoding/json"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestBPFMetadataEntryJSON: a record's entry marshals as bpfprog.Entry
// does, so metadata read from a recording and a program's have one shape.
func TestBPFMetadataEntryJSON(t *testing.T) {
	rec, err := json.Marshal(perfdata.BPFMetadataEntry{Key: "version", Value: `"1.0"`})
	if err != nil {
		t.Fatal(err)
	}
	prog, err := json.Marshal(bpfprog.Entry{Key: "version", Value: `"1.0"`})
	if err != nil {
		t.Fatal(err)
	}
	if string(rec) != string(prog) || string(rec) != `{"key":"version","value":"\"1.0\""}` {
		t.Errorf("perfdata.BPFMetadataEntry marshals to %s, bpfprog.Entry to %s", rec, prog)
	}
}
