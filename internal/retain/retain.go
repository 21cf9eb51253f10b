// Package retain lets a writer write records straight from a reader's buffers.
//
// It is the handshake that lets a writer write records straight from the
// buffers of the reader that handed them out, without copying them and
// without either package exporting it: a reader embeds Buffers, a writer
// calls Attach.
//
// It is for the top-level records of a recording (the reader's read
// buffers); not for the records a reader decodes from compressed records,
// whose buffer it reuses at once, and not a buffer pool.
package retain

// Func is what a retaining writer gives the reader. The reader calls it
// before it moves on to fresh memory, and calls the release it returned
// before it writes into the memory of the records it handed out until
// then; release returns only once the writer is done with those bytes.
type Func = func() (release func())

// Buffers is embedded in a reader whose buffers can be retained: its
// (unexported) method is how Attach reaches the reader.
type Buffers struct{ fn Func }

func (b *Buffers) setRetainer(f Func) { b.fn = f }

// retainer is a reader that embeds Buffers.
type retainer interface{ setRetainer(Func) }

// Attach has in keep the bytes of the records it hands out until f's
// releases say they are written, if in is a reader that can (it embeds
// Buffers), and reports whether it is. Call it before the first record is
// read.
func Attach(in any, f Func) bool {
	r, ok := in.(retainer)
	if ok {
		r.setRetainer(f)
	}
	return ok
}

// Of returns the function Attach gave the reader that embeds b, or nil.
func Of(b *Buffers) Func { return b.fn }
