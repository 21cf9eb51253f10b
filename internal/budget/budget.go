// Package budget is the one memory budget of a bpfmeta process.
//
// It is a count of the bytes that what the process keeps while it reads
// takes (functions and their names, programs, BPF_METADATA records kept to
// the end, the snapshot's index, the zstd window, read buffers), with one
// limit for all of them. Each structure that grows with its input reserves
// what it takes before it grows, and a reservation past the limit is an
// error that says what holds the budget: bounds of each structure alone do
// not add up to a bound of the process, which inputs that take several to
// their limit at once showed (issue 37).
//
// It is not an allocator and does not measure the heap: the sizes are
// what each user estimates it keeps, its overheads counted, so that the
// process's peak stays under the limit plus its fixed cost (the runtime,
// the binary) whatever the input. Users reserve in chunks (Meter), not per
// record: a reservation takes a lock.
package budget

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Limit is the budget of a process: with the Go runtime, the binary and
// the garbage collector's slack, a process stays under 64 MiB
// (docs/safety.md, Bounded memory).
const Limit = 40 << 20

// ErrExhausted is wrapped by the error of a reservation past the limit.
var ErrExhausted = errors.New("memory budget exhausted")

// Budget counts reserved bytes by what they are for, up to a limit. Its
// methods are safe for concurrent use.
type Budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	by    map[string]int64
}

// newBudget returns a budget of limit bytes.
func newBudget(limit int64) *Budget { return &Budget{limit: limit, by: map[string]int64{}} }

// process is the budget of this process, which Process returns: without
// a limit until SetLimit gives it one.
var process = newBudget(math.MaxInt64)

// Process returns the process's budget, which every structure that grows
// with the input draws from. It counts without a limit until SetLimit
// gives it one: bpfmeta's main does, a program that uses bpfmeta's
// packages may.
func Process() *Budget { return process }

// SetLimit sets the budget's limit.
func (b *Budget) SetLimit(limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit = limit
}

// exhaustedError is a reservation the budget had no room for: what asked for how
// much, and what the budget was used by then.
type exhaustedError struct {
	Limit int64
	What  string
	Want  int64
	Used  []use // the largest first
}

// use is what one user holds.
type use struct {
	What  string
	Bytes int64
}

func (e *exhaustedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "memory budget of %s exhausted: %s more for %s, with", mib(e.Limit), mib(e.Want), e.What)
	for i, u := range e.Used {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %s", mib(u.Bytes), u.What)
	}
	if len(e.Used) == 0 {
		b.WriteString(" nothing else")
	}
	return b.String()
}

func (e *exhaustedError) Unwrap() error { return ErrExhausted }

// mib writes n in MiB, to a tenth below 10.
func mib(n int64) string {
	if n < 10<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d MiB", (n+1<<19)>>20)
}

// reserve takes n bytes for what, or returns an *exhaustedError (wrapping
// ErrExhausted) and takes nothing if the budget has not that much left.
func (b *Budget) reserve(n int64, what string) error {
	if n <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		e := &exhaustedError{Limit: b.limit, What: what, Want: n}
		for w, u := range b.by {
			if u > 0 {
				e.Used = append(e.Used, use{w, u})
			}
		}
		slices.SortFunc(e.Used, func(a, b use) int {
			return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.What, b.What))
		})
		return e
	}
	b.used += n
	b.by[what] += n
	return nil
}

// Take takes n bytes for what whatever the budget has left: for the fixed
// buffers a run needs in any case, which leave that much less to the
// others.
func (b *Budget) Take(n int64, what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += n
	b.by[what] += n
}

// release gives back n bytes reserved for what.
func (b *Budget) release(n int64, what string) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(n, b.by[what])
	b.used -= n
	b.by[what] -= n
}

// Used returns the bytes reserved.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Limit returns the budget's limit.
func (b *Budget) Limit() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// Chunk is what a Meter reserves at a time.
const Chunk = 256 << 10

// Meter keeps the reservation of one structure in step with its size, a
// Chunk at a time: Set is cheap while the size stays within what is
// reserved. The zero Meter draws from the process's budget.
type Meter struct {
	B    *Budget // nil: Process()
	What string
	held int64
}

func (m *Meter) budget() *Budget {
	if m.B == nil {
		return process
	}
	return m.B
}

// Set says the structure now takes size bytes: it reserves more if that
// is more than is reserved (an error if the budget has no room: the
// structure must not grow), and gives back what is reserved beyond the
// next chunk if it is less.
func (m *Meter) Set(size int64) error {
	switch {
	case size > m.held:
		want := (size + Chunk - 1) / Chunk * Chunk
		if err := m.budget().reserve(want-m.held, m.What); err != nil {
			return err
		}
		m.held = want
	case size+2*Chunk <= m.held:
		keep := (size + Chunk - 1) / Chunk * Chunk
		m.budget().release(m.held-keep, m.What)
		m.held = keep
	}
	return nil
}

// Close gives back all the meter holds.
func (m *Meter) Close() {
	m.budget().release(m.held, m.What)
	m.held = 0
}
