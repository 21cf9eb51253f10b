package bpftrack

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// addrIndex does what a sorted slice does, through splits and emptied
// chunks, for random puts, removes and lookups.
func TestAddrIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x addrIndex
	var ref []uint64 // sorted addresses
	for op := range 200_000 {
		addr := uint64(rng.IntN(20_000)) * 16
		i, in := slices.BinarySearch(ref, addr)
		switch rng.IntN(3) {
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
	}
	t.Logf("%d functions in %d chunks", x.n, len(x.chunks))
}
