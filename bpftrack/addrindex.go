package bpftrack

import (
	"cmp"
	"slices"
	"sort"
)

// addrIndex is the registered functions by address: sorted chunks of at
// most chunkMax, so that registering and unregistering one costs a search
// and a move within one chunk, not within all of them (a recording that
// registers and unregisters a function again and again at the bottom of
// MaxFuncs others made each cost a move of a megabyte).
type addrIndex struct {
	// chunks are sorted by address and not empty: every address of a
	// chunk is below every address of the next.
	chunks [][]*Func
	n      int
	// lo is the lowest address (chunks[0][0].Addr), 0 when empty: most
	// samples are below every BPF function (in the kernel's text, or in
	// user space), and floor tells them with one comparison.
	lo uint64
}

const chunkMax = 512

func byAddr(g *Func, a uint64) int { return cmp.Compare(g.Addr, a) }

// chunk is the index of the chunk where addr is, or would go: the first
// whose last address is >= addr, else the last. The index is not empty.
func (x *addrIndex) chunk(addr uint64) int {
	i := sort.Search(len(x.chunks), func(i int) bool {
		c := x.chunks[i]
		return c[len(c)-1].Addr >= addr
	})
	return min(i, len(x.chunks)-1)
}

// get returns the function at addr.
func (x *addrIndex) get(addr uint64) *Func {
	if x.n == 0 {
		return nil
	}
	c := x.chunks[x.chunk(addr)]
	if i, ok := slices.BinarySearchFunc(c, addr, byAddr); ok {
		return c[i]
	}
	return nil
}

// put adds f, or replaces the function at its address, and reports
// whether it added one.
func (x *addrIndex) put(f *Func) bool {
	if x.n == 0 {
		x.chunks, x.n, x.lo = [][]*Func{{f}}, 1, f.Addr
		return true
	}
	ci := x.chunk(f.Addr)
	c := x.chunks[ci]
	i, ok := slices.BinarySearchFunc(c, f.Addr, byAddr)
	if ok {
		c[i] = f
		return false
	}
	c = slices.Insert(c, i, f)
	if len(c) > chunkMax {
		right := slices.Clone(c[len(c)/2:])
		c = c[:len(c)/2]
		x.chunks = slices.Insert(x.chunks, ci+1, right)
	}
	x.chunks[ci] = c
	x.n++
	x.lo = x.chunks[0][0].Addr
	return true
}

// remove removes the function at addr if ok says it may, and returns it.
func (x *addrIndex) remove(addr uint64, ok func(*Func) bool) *Func {
	if x.n == 0 {
		return nil
	}
	ci := x.chunk(addr)
	c := x.chunks[ci]
	i, found := slices.BinarySearchFunc(c, addr, byAddr)
	if !found || !ok(c[i]) {
		return nil
	}
	f := c[i]
	if c = slices.Delete(c, i, i+1); len(c) == 0 {
		x.chunks = slices.Delete(x.chunks, ci, ci+1)
	} else {
		x.chunks[ci] = c
	}
	x.n--
	x.lo = 0
	if x.n > 0 {
		x.lo = x.chunks[0][0].Addr
	}
	return f
}

// floor returns the function with the highest address <= addr.
func (x *addrIndex) floor(addr uint64) *Func {
	if addr < x.lo || x.n == 0 {
		return nil // most samples: below the BPF functions (inlined)
	}
	return x.floorIn(addr)
}

// floorIn is floor for an address not below the lowest.
func (x *addrIndex) floorIn(addr uint64) *Func {
	if last := x.chunks[len(x.chunks)-1]; addr >= last[len(last)-1].Addr {
		return last[len(last)-1]
	}
	ci := x.chunk(addr)
	c := x.chunks[ci]
	if i := sort.Search(len(c), func(i int) bool { return c[i].Addr > addr }); i > 0 {
		return c[i-1]
	}
	if ci > 0 {
		p := x.chunks[ci-1]
		return p[len(p)-1]
	}
	return nil
}
