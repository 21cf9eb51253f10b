package budget

import (
	"errors"
	"strings"
	"testing"
)

// TestBudget: reservations past the limit fail and take nothing, and the
// error names the limit, what asked and what holds the budget, the
// largest first; a Meter reserves and gives back a chunk at a time.
func TestBudget(t *testing.T) {
	b := newBudget(4 << 20)
	if err := b.reserve(3<<20, "snapshot index"); err != nil {
		t.Fatal(err)
	}
	b.Take(512<<10, "read buffers")
	err := b.reserve(1<<20, "zstd window")
	var be *exhaustedError
	if !errors.As(err, &be) || !errors.Is(err, ErrExhausted) {
		t.Fatalf("got %v, want an *Error", err)
	}
	want := "memory budget of 4.0 MiB exhausted: 1.0 MiB more for zstd window, with 3.0 MiB snapshot index, 0.5 MiB read buffers"
	if err.Error() != want {
		t.Errorf("got %q\nwant %q", err, want)
	}
	if b.Used() != 3<<20+512<<10 {
		t.Errorf("used %d after a refusal", b.Used())
	}
	b.release(3<<20, "snapshot index")
	m := Meter{B: b, What: "names"}
	if err := m.Set(1); err != nil || b.Used() != 512<<10+Chunk {
		t.Fatalf("Set(1): %v, used %d", err, b.Used())
	}
	if err := m.Set(Chunk + 1); err != nil || b.Used() != 512<<10+2*Chunk {
		t.Fatalf("Set(Chunk+1): %v, used %d", err, b.Used())
	}
	if err := m.Set(8 << 20); err == nil || !strings.Contains(err.Error(), "for names") {
		t.Fatalf("Set(8 MiB) = %v, want a refusal for names", err)
	}
	m.Set(0)
	if b.Used() != 512<<10 {
		t.Errorf("used %d after Set(0), want the read buffers only", b.Used())
	}
	m.Close()
}
