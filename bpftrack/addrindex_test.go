package bpftrack

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// addrIndex does what a sorted slice does, through splits and emptied
// chunks, for random puts, removes and lookups (around the lowest address
// too, which floor tells by itself), then removes down to none.
func TestAddrIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x addrIndex
	var ref []uint64 // sorted addresses
	for op := range 250_000 {
		addr := uint64(rng.IntN(20_000)) * 16
		i, in := slices.BinarySearch(ref, addr)
		drain := op >= 200_000 // the last ones only remove, down to none
		if drain && len(ref) > 0 {
			addr, i, in = ref[rng.IntN(len(ref))], 0, true
			i, _ = slices.BinarySearch(ref, addr)
		}
		op3 := rng.IntN(3)
		if drain {
			op3 = 2
		}
		switch op3 {
		case 0, 1:
			if added := x.put(&Func{Addr: addr}); added == in {
				t.Fatalf("op %d: put %#x added %v, was in %v", op, addr, added, in)
			}
			if !in {
				ref = slices.Insert(ref, i, addr)
			}
		case 2:
			if f := x.remove(addr, func(*Func) bool { return true }); (f != nil) != in {
				t.Fatalf("op %d: remove %#x: %v, was in %v", op, addr, f, in)
			}
			if in {
				ref = slices.Delete(ref, i, i+1)
			}
		}
		probe := uint64(rng.IntN(20_000*16 + 32))
		if len(ref) > 0 && ref[0] > 0 && rng.IntN(2) == 0 {
			probe = ref[0] - 1 + uint64(rng.IntN(3)) // around the lowest
		}
		var want *uint64
		if j, _ := slices.BinarySearch(ref, probe+1); j > 0 {
			want = &ref[j-1]
		}
		got := x.floor(probe)
		if (got == nil) != (want == nil) || got != nil && got.Addr != *want {
			t.Fatalf("op %d: floor(%#x) = %v, want %v", op, probe, got, want)
		}
		if (x.get(probe) != nil) != slices.Contains(ref, probe) && probe%16 == 0 {
			t.Fatalf("op %d: get(%#x) wrong", op, probe)
		}
		if x.n != len(ref) {
			t.Fatalf("op %d: %d functions, want %d", op, x.n, len(ref))
		}
		if len(ref) > 0 && x.lo != ref[0] {
			t.Fatalf("op %d: lowest address %#x, want %#x", op, x.lo, ref[0])
		}
	}
	if len(ref) != 0 || x.floor(0) != nil || x.floor(1<<63) != nil {
		t.Fatalf("%d functions left, floor %v", len(ref), x.floor(1<<63))
	}
}
