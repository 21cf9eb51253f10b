package bpfprog

import (
	"cmp"
	"iter"
	"slices"
	"sync"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// List is programs held in memory as a Source: programs a caller built or
// read, or none (&List{}: a Source that knows no program).
type List struct {
	Sys      System // the machine and boot the programs belong to
	Programs []*Program

	indexOnce sync.Once
	index     map[uint32]*Program
}

// System describes the machine and boot the programs belong to.
func (l *List) System() System { return l.Sys }

// Lookup returns the program with id if its tag is tag. The first Lookup
// indexes Programs, which must not change after.
func (l *List) Lookup(id uint32, tag perfdata.BPFTag) (*Program, error) {
	l.indexOnce.Do(func() {
		l.index = make(map[uint32]*Program, len(l.Programs))
		for _, p := range l.Programs {
			l.index[p.ID] = p
		}
	})
	p, ok := l.index[id]
	if !ok {
		return nil, NotFound(id)
	}
	if err := CheckTag(id, tag, p.Tag); err != nil {
		return nil, err
	}
	return p, nil
}

// All yields every program, in ascending id order.
func (l *List) All() iter.Seq2[*Program, error] {
	return func(yield func(*Program, error) bool) {
		ps := slices.Clone(l.Programs)
		slices.SortFunc(ps, func(a, b *Program) int { return cmp.Compare(a.ID, b.ID) })
		for _, p := range ps {
			if !yield(p, nil) {
				return
			}
		}
	}
}

// Len is the number of programs.
func (l *List) Len() int { return len(l.Programs) }
