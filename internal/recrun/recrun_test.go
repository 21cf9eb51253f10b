package recrun

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// record is a little-endian record of type t, size bytes long.
func record(t perfdata.RecordType, size int) []byte {
	b := make([]byte, size)
	perfdata.EventHeader{Type: t, Size: uint16(size)}.Encode(b, binary.LittleEndian)
	return b
}

// TestPasses: the rule, type by type, and Peek asks it of every record:
// a whole record of every type is in a run exactly when it passes.
func TestPasses(t *testing.T) {
	types := []perfdata.RecordType{1 << 8, 1 << 16, 1<<31 + 9, ^perfdata.RecordType(0)}
	for typ := range perfdata.RecordType(300) {
		types = append(types, typ)
	}
	for _, typ := range types {
		// perf's kernel records (enum perf_event_type) below 64, its own
		// from 64 (enum perf_user_event_type)
		want := typ < 64 && typ != perfdata.RecordKSymbol && typ != perfdata.RecordBPFEvent
		if got := Passes(typ); got != want {
			t.Errorf("Passes(%v) = %v, want %v", typ, got, want)
		}
		u := New(record(typ, 24), 0, -1, 0)
		if _, ok := u.Peek(); ok != want {
			t.Errorf("Peek of a whole %v record: %v, want %v", typ, ok, want)
		}
	}
}

// TestRun: Peek and Take walk the records that pass, whole in the buffer;
// Taken and Last say which were taken, where.
func TestRun(t *testing.T) {
	sample, mmap := record(perfdata.RecordSample, 32), record(perfdata.RecordMmap, 16)
	ksym := record(perfdata.RecordKSymbol, 40)
	b := bytes.Join([][]byte{sample, mmap, sample, ksym, sample}, nil)
	u := New(b, 0x1000, -1, 2)
	var took [][]byte
	for {
		h, ok := u.Peek()
		if !ok {
			break
		}
		took = append(took, u.Take(h))
	}
	if u.Len() != 3 || len(took) != 3 || !bytes.Equal(took[1], mmap) {
		t.Fatalf("took %d records (Len %d), want the 3 before the KSYMBOL", len(took), u.Len())
	}
	if off, raw := u.Taken(); off != 0x1000 || !bytes.Equal(raw, b[:80]) {
		t.Errorf("Taken() = %#x, %d bytes; want 0x1000, 80", off, len(raw))
	}
	if off, raw := u.Last(); off != 0x1000+48 || !bytes.Equal(raw, sample) {
		t.Errorf("Last() = %#x, %d bytes; want %#x, the last SAMPLE", off, len(raw), 0x1000+48)
	}
	if u.Compressed() || u.Outer() != -1 || u.Part() != 2 {
		t.Errorf("Compressed %v, Outer %d, Part %d; want false, -1, 2", u.Compressed(), u.Outer(), u.Part())
	}
	if c := New(sample, 0, 0x40, 0); !c.Compressed() {
		t.Error("a run of a compressed record's records is not Compressed")
	}
	// a run ends at a record not whole in the buffer, at a header cut
	// short and at a size less than a header's
	for name, b := range map[string][]byte{
		"cut record": sample[:31],
		"cut header": sample[:7],
		"size 4":     func() []byte { b := record(perfdata.RecordSample, 16); b[6] = 4; return b }(),
		"size 0":     make([]byte, 16),
		"empty":      nil,
	} {
		u := New(b, 0, -1, 0)
		if h, ok := u.Peek(); ok {
			t.Errorf("%s: Peek = %+v, true", name, h)
		}
	}
}

// TestSourceOf: a value that is a Source or Sink is its own; another has
// none unless the function its package set says it has.
func TestSourceOf(t *testing.T) {
	if SourceOf(42) != nil || SinkOf("x") != nil {
		t.Error("an int hands out runs, or a string writes them")
	}
	var s fake
	if SourceOf(&s) != &s || SinkOf(&s) != &s {
		t.Error("a Source or Sink is not its own")
	}
}

type fake struct{}

func (*fake) Run() Run             { return Run{} }
func (*fake) Pass(Run)             {}
func (*fake) WriteRun(u Run) error { return nil }
