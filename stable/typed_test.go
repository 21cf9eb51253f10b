package stable_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/stable"
)

// TestSnapshotTypes: a snapshot's programs type a record's entries, found
// by the function's stable name (Typed) or by the record's own name
// (OfRecord: show --json's); a nil index types nothing; a file that is no
// snapshot is an error.
func TestSnapshotTypes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "progs.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := snapshot.NewWriter(f, bpfprog.System{BootID: "b"}, time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	p := versioned(7, "aaaaaaaaaaaaaaaa", "1.0.0", 0)
	if err := w.Add(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(snapshot.End{Programs: 1}); err != nil {
		t.Fatal(err)
	}
	f.Close()

	ix, err := stable.SnapshotTypes(path)
	if err != nil {
		t.Fatal(err)
	}
	abi := perfdata.BPFMetadataEntry{Key: "abi", Value: `{1,"x86_64"}`}
	want := string(p.Metadata.Entries[1].Typed)
	for _, c := range []struct {
		how, got string
	}{
		{"Typed(xdp_main)", string(ix.Typed("xdp_main", abi))},
		{"OfRecord(bpf_prog_<tag>_xdp_main)", string(ix.OfRecord("bpf_prog_aaaaaaaaaaaaaaaa_xdp_main", abi))},
		{"OfRecord(bpf_prog_<another tag>_xdp_main)", string(ix.OfRecord("bpf_prog_bbbbbbbbbbbbbbbb_xdp_main", abi))},
	} {
		if c.got != want {
			t.Errorf("%s = %s, want %s", c.how, c.got, want)
		}
	}
	if got := ix.OfRecord("bpf_prog_aaaaaaaaaaaaaaaa_other", abi); got != nil {
		t.Errorf("OfRecord of another function = %s, want nil", got)
	}
	var none *stable.TypedIndex
	if none.Typed("xdp_main", abi) != nil || none.OfRecord("bpf_prog_aaaaaaaaaaaaaaaa_xdp_main", abi) != nil {
		t.Error("a nil TypedIndex types an entry")
	}

	if _, err := stable.SnapshotTypes(filepath.Join(dir, "none.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SnapshotTypes of no file: %v", err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("not a snapshot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := stable.SnapshotTypes(bad); err == nil {
		t.Error("SnapshotTypes of a file that is no snapshot: no error")
	}
}
