package writer

import (
	"errors"
	"sync"
	"sync/atomic"
	"unsafe"
)

// sink is the output of a File or a Pipe: an ordered queue of writes that
// a goroutine carries out while the caller reads on, so that reading the
// input and writing the output overlap.
//
// Bytes reach it three ways: copied into its own buffers (new records, and
// every record when nobody retains the reader's buffers), held where they
// are (records in the reader's buffers, when the reader was told to keep
// them until the sink has written them: see File.Attach), and, for a file,
// copied from the input file by offset (the AUX data after AUXTRACE records).
type sink struct {
	write func(b []byte, off int64) error  // writes b at output offset off
	copy  func(off, srcOff, n int64) error // copies n input bytes at srcOff to off
	pos   int64                            // output offset of the next byte
	buf   []byte                           // own buffer being filled, from free
	run   []byte                           // held bytes not yet queued
	// cp is a run of input bytes not yet queued, to copy to pos: cpOff
	// its input offset, cpLen its length.
	cpOff, cpLen int64

	jobs chan sinkJob
	free chan []byte
	// made is how many own buffers exist: they are made when first
	// needed, since most outputs get few bytes that are not the input's
	// (a file rewrite copies its records in the kernel, a retained pipe
	// writes them from the reader's buffers). filled says one of them
	// was filled: the output's own bytes are many, and its buffers are
	// made sinkBufSize from then on.
	made   int
	filled bool

	mu       sync.Mutex
	cond     sync.Cond
	queued   uint64 // jobs queued
	done     uint64 // jobs carried out
	err      error
	broken   atomic.Bool // err is set: checked for every record, without the lock
	closed   bool
	finished chan struct{}
}

type sinkJob struct {
	b      []byte // bytes to write, or nil for a copy
	own    bool   // b is one of the sink's buffers: give it back after
	off    int64
	srcOff int64
	n      int64
}

const (
	// sinkBufSize is the size of the sink's own buffers, and sinkBufs
	// how many there are: while one fills, the others are being written.
	sinkBufSize = 1 << 20
	sinkBufs    = 3
	// sinkFirstBufSize is the size of the buffers made until one is
	// filled. The bytes most outputs get that are not the input's (the
	// records inject adds) are a few KiB: a full-size buffer for them
	// would take the heap past the garbage collector's first goal (4 MiB,
	// with the reader's buffers), and a run that allocates nothing else
	// would collect once for it.
	sinkFirstBufSize = 64 << 10
	// sinkQueue is how many jobs may wait.
	sinkQueue = 64
)

func newSink(write func([]byte, int64) error, copy func(off, srcOff, n int64) error, pos int64) *sink {
	s := &sink{
		write:    write,
		copy:     copy,
		pos:      pos,
		jobs:     make(chan sinkJob, sinkQueue),
		free:     make(chan []byte, sinkBufs),
		finished: make(chan struct{}),
	}
	s.cond.L = &s.mu
	go s.work()
	return s
}

func (s *sink) work() {
	defer close(s.finished)
	for j := range s.jobs {
		s.mu.Lock()
		failed := s.err != nil
		s.mu.Unlock()
		var err error
		if !failed {
			if j.b != nil {
				err = s.write(j.b, j.off)
			} else {
				err = s.copy(j.off, j.srcOff, j.n)
			}
		}
		if j.own {
			s.free <- j.b[:0]
		}
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
			s.broken.Store(true)
		}
		s.done++
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

func (s *sink) queue(j sinkJob) {
	s.mu.Lock()
	s.queued++
	s.mu.Unlock()
	s.jobs <- j
}

// failed is the first error of a queued write, if any.
func (s *sink) failed() error {
	if !s.broken.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Write copies p into the sink's buffers.
func (s *sink) Write(p []byte) (int, error) {
	s.flushRun()
	s.flushCopy()
	n := len(p)
	for len(p) > 0 {
		if s.buf == nil {
			s.buf = s.freeBuf()
		}
		m := min(len(p), cap(s.buf)-len(s.buf))
		s.buf = append(s.buf, p[:m]...)
		p = p[m:]
		if len(s.buf) == cap(s.buf) {
			s.filled = true
			s.flushBuf()
		}
	}
	return n, s.failed()
}

// freeBuf returns an own buffer to fill: a free one, a new one while
// there are fewer than sinkBufs, else the first one written. Buffers are
// sinkFirstBufSize until one is filled; a small one that comes back
// after that is dropped for a full-size one.
func (s *sink) freeBuf() []byte {
	for {
		var b []byte
		select {
		case b = <-s.free:
		default:
			if s.made < sinkBufs {
				s.made++
				if !s.filled {
					return make([]byte, 0, sinkFirstBufSize)
				}
				return make([]byte, 0, sinkBufSize)
			}
			b = <-s.free
		}
		if !s.filled || cap(b) == sinkBufSize {
			return b
		}
		s.made--
	}
}

// hold queues p, bytes the caller promises stay as they are until the
// sink has written them (see barrier), without copying them. Held bytes
// that continue the previous ones in the same array (the reader's buffer:
// its records' slices reach to its end) join them in one write.
func (s *sink) hold(p []byte) {
	if len(p) == 0 {
		return
	}
	if len(s.run) > 0 && cap(s.run) > len(s.run) && unsafe.SliceData(p) == unsafe.SliceData(s.run[len(s.run):cap(s.run)]) {
		s.run = s.run[:len(s.run)+len(p)]
		return
	}
	s.flushBuf()
	s.flushRun()
	s.flushCopy()
	s.run = p
}

// maxCopyRun is the most input bytes one copy job takes: runs of records
// passed through are copied while the caller reads on, a piece at a time.
const maxCopyRun = 4 << 20

// copyInput queues a copy of n bytes of the input file at srcOff. Bytes
// that continue the previous copy's in the input join it.
func (s *sink) copyInput(srcOff, n int64) {
	if s.cpLen > 0 && s.cpOff+s.cpLen == srcOff {
		s.cpLen += n
	} else {
		s.flushBuf()
		s.flushRun()
		s.flushCopy()
		s.cpOff, s.cpLen = srcOff, n
	}
	if s.cpLen >= maxCopyRun {
		s.flushCopy()
	}
}

func (s *sink) flushCopy() {
	if s.cpLen == 0 {
		return
	}
	s.queue(sinkJob{off: s.pos, srcOff: s.cpOff, n: s.cpLen})
	s.pos += s.cpLen
	s.cpLen = 0
}

func (s *sink) flushBuf() {
	if len(s.buf) == 0 {
		return
	}
	s.queue(sinkJob{b: s.buf, own: true, off: s.pos})
	s.pos += int64(len(s.buf))
	s.buf = nil
}

func (s *sink) flushRun() {
	if len(s.run) == 0 {
		return
	}
	s.queue(sinkJob{b: s.run, off: s.pos})
	s.pos += int64(len(s.run))
	s.run = nil
}

// barrier queues everything held and returns a function that waits until
// it has been written: the caller may then reuse the memory.
func (s *sink) barrier() (wait func()) {
	s.flushRun()
	s.mu.Lock()
	upTo := s.queued
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		for s.done < upTo {
			s.cond.Wait()
		}
		s.mu.Unlock()
	}
}

// drain writes everything queued and waits until it is written: the
// goroutine is idle until the next write, and the caller may change what
// write and copy write to (a directory's next data file).
func (s *sink) drain() error {
	s.flushBuf()
	s.flushCopy()
	s.barrier()()
	return s.failed()
}

// abort stops the goroutine without writing what is still queued, and
// waits for it: after abort no held bytes are read and the output is not
// touched again.
func (s *sink) abort() {
	if s.closed {
		return
	}
	s.mu.Lock()
	if s.err == nil {
		s.err = errAborted
		s.broken.Store(true)
	}
	s.mu.Unlock()
	s.buf, s.run, s.cpLen = nil, nil, 0
	s.closed = true
	close(s.jobs)
	<-s.finished
}

var errAborted = errors.New("writer: aborted")

// close writes everything and stops the goroutine.
func (s *sink) close() error {
	if s.closed {
		return s.failed()
	}
	s.closed = true
	s.flushBuf()
	s.flushRun()
	s.flushCopy()
	close(s.jobs)
	<-s.finished
	return s.failed()
}
