package writer

import (
	"encoding/binary"
	"fmt"
	"github.com/bpfmeta/bpfmeta/internal/scratch"
	"io"
	"os"
	"slices"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// fromPipe writes a file-mode recording from the records of a pipe stream:
// HEADER_ATTR, HEADER_FEATURE, HEADER_TRACING_DATA and HEADER_BUILD_ID
// records become the file's attrs, ids and feature sections; every other
// record goes to the data section. The layout is perf's default, but for
// where the ids are: header, ids (written as their HEADER_ATTR records
// come), attrs, data, feature table and payloads. The attrs must therefore
// come before the first data record, as every perf writes them.
//
// What goes after the data section (feature payloads, build ids, trace data,
// the AUXTRACE index) is kept in spool files until Close, not in memory.
type fromPipe struct {
	dst      io.WriterAt
	bo       byteOrder
	spoolDir string
	sink     *sink
	attrs    [][]byte // the attrs, each followed by its ids section
	next     int64    // where the next ids go, before the data section
	features map[perfdata.Feature]spooled
	spool    map[perfdata.Feature]*spool // features made of many records
	attrOff  int64
	attrLen  int64
	dataOff  int64
	out      int64
	started  bool
	closed   bool
}

// spooled is a feature payload in the features' spool.
type spooled struct{ off, n int64 }

// The spools: one for the HEADER_FEATURE payloads, one each for the
// features that many records make up.
const featureSpool perfdata.Feature = perfdata.FeatureBits

func newFromPipe(dst io.WriterAt, bo binary.ByteOrder, spoolDir string) *fromPipe {
	return &fromPipe{dst: dst, bo: orderOf(bo), spoolDir: spoolDir, next: perfdata.FileHeaderSize,
		features: map[perfdata.Feature]spooled{}, spool: map[perfdata.Feature]*spool{}}
}

// spoolFor returns the spool of a feature, made when first needed.
func (w *fromPipe) spoolFor(f perfdata.Feature) (*spool, error) {
	if s := w.spool[f]; s != nil {
		return s, nil
	}
	s, err := newSpool(w.spoolDir)
	if err != nil {
		return nil, err
	}
	w.spool[f] = s
	return s, nil
}

func (w *fromPipe) WriteRecord(rec *perfdata.Record) error {
	switch rec.Header.Type {
	case perfdata.RecordHeaderAttr:
		if w.started {
			return fmt.Errorf("HEADER_ATTR record at %#x after data records: a file needs its attrs before the data", rec.Offset)
		}
		return w.attr(rec)
	case perfdata.RecordHeaderFeature:
		if len(rec.Raw) < 16 {
			return fmt.Errorf("HEADER_FEATURE record at %#x: %d bytes", rec.Offset, len(rec.Raw))
		}
		id := w.bo.Uint64(rec.Raw[8:])
		payload := rec.Raw[16:]
		if len(payload) == 0 && id >= uint64(perfdata.FeatCPUDomainInfo) || id >= perfdata.FeatureBits {
			return nil // the end-of-features marker
		}
		if perfdata.Feature(id) == perfdata.FeatDirFormat {
			// The layout of a directory recording, which a stream is not
			// (Omitted.Lost): in a file it would make the file the data
			// file of one, whose records are in data.N files beside it.
			return nil
		}
		s, err := w.spoolFor(featureSpool)
		if err != nil {
			return err
		}
		off := s.n
		if err := s.append(payload); err != nil {
			return err
		}
		w.features[perfdata.Feature(id)] = spooled{off, int64(len(payload))}
		return nil
	case perfdata.RecordHeaderTracingData:
		s, err := w.spoolFor(perfdata.FeatTracingData)
		if err != nil {
			return err
		}
		return writePayload(s, rec)
	case perfdata.RecordHeaderBuildID:
		s, err := w.spoolFor(perfdata.FeatBuildID)
		if err != nil {
			return err
		}
		var typ [4]byte // 0, as the BUILD_ID feature stores them
		if err := s.append(typ[:]); err != nil {
			return err
		}
		return s.append(rec.Raw[4:])
	}
	if err := w.data(); err != nil {
		return err
	}
	if rec.Header.Type == perfdata.RecordAuxtrace {
		s, err := w.spoolFor(perfdata.FeatAuxtrace)
		if err != nil {
			return err
		}
		// as perf inject's perf_event__repipe_auxtrace(): file offset, size
		var e [16]byte
		w.bo.PutUint64(e[:], uint64(w.dataOff+w.out))
		w.bo.PutUint64(e[8:], uint64(rec.Header.Size))
		if err := s.append(e[:]); err != nil {
			return err
		}
	}
	if _, err := w.sink.Write(rec.Raw); err != nil {
		return recordError(rec, err)
	}
	if err := writePayload(w.sink, rec); err != nil {
		return err
	}
	w.out += int64(len(rec.Raw)) + rec.PayloadSize
	return w.sink.failed()
}

func (w *fromPipe) passThrough(_ int64, _ int, raw []byte) error {
	if err := w.data(); err != nil {
		return err
	}
	if _, err := w.sink.Write(raw); err != nil {
		return err
	}
	w.out += int64(len(raw))
	return w.sink.failed()
}

// data starts the data section, with the first record that goes into it.
func (w *fromPipe) data() error {
	if w.started {
		return nil
	}
	return w.start()
}

// attr writes a HEADER_ATTR record's ids where the next ones go, and keeps
// the attr (at most perfdata.MaxAttrSize-perfdata.SectionSize bytes, as
// DecodeHeaderAttr makes sure) for the attrs section.
func (w *fromPipe) attr(rec *perfdata.Record) error {
	a, err := perfdata.DecodeHeaderAttr(rec.Raw, w.bo)
	if err != nil {
		return fmt.Errorf("HEADER_ATTR record at %#x: %w", rec.Offset, err)
	}
	if len(w.attrs) > 0 && len(a.Attr.Raw) != len(w.attrs[0])-perfdata.SectionSize {
		return fmt.Errorf("HEADER_ATTR record at %#x: an attr of %d bytes, the first is %d: a file's attrs all have one size", rec.Offset, len(a.Attr.Raw), len(w.attrs[0])-perfdata.SectionSize)
	}
	if len(w.attrs) >= maxAttrs {
		return fmt.Errorf("HEADER_ATTR record at %#x: more than %d attrs", rec.Offset, maxAttrs)
	}
	ids := make([]byte, 0, 8*len(a.IDs))
	for _, id := range a.IDs {
		ids = w.bo.AppendUint64(ids, id)
	}
	if _, err := w.dst.WriteAt(ids, w.next); err != nil {
		return err
	}
	e := slices.Clone(a.Attr.Raw)
	e = w.bo.AppendUint64(e, uint64(w.next))
	e = w.bo.AppendUint64(e, uint64(len(ids)))
	w.attrs = append(w.attrs, e)
	w.next += int64(len(ids))
	return nil
}

// maxAttrs is the most attrs a file written from a pipe may have.
const maxAttrs = 4096

// start writes the attrs and opens the data section.
func (w *fromPipe) start() error {
	w.started = true
	w.attrOff = w.next
	for _, a := range w.attrs {
		if _, err := w.dst.WriteAt(a, w.next); err != nil {
			return err
		}
		w.next += int64(len(a))
	}
	w.attrLen = w.next - w.attrOff
	w.dataOff = w.next
	w.sink = newSink(
		func(b []byte, off int64) error { _, err := w.dst.WriteAt(b, off); return err },
		nil, w.dataOff)
	return nil
}

func (w *fromPipe) fileAttrSize() int {
	if len(w.attrs) == 0 {
		return perfdata.AttrSizeVer8 + perfdata.SectionSize
	}
	return len(w.attrs[0])
}

// Abort: nothing more is written.
func (w *fromPipe) Abort() {
	if w.sink != nil {
		w.sink.abort()
	}
	w.closeSpools()
	w.closed = true
}

func (w *fromPipe) closeSpools() {
	for _, s := range w.spool {
		s.f.Close()
	}
}

// Close writes the feature sections and the header.
func (w *fromPipe) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	defer w.closeSpools()
	if !w.started {
		if err := w.start(); err != nil {
			return err
		}
	}
	if err := w.sink.close(); err != nil {
		return err
	}
	type payload struct {
		s      *spool
		off, n int64
		head   []byte // written before it
	}
	payloads := map[perfdata.Feature]payload{}
	for id, sp := range w.features {
		payloads[id] = payload{s: w.spool[featureSpool], off: sp.off, n: sp.n}
	}
	for _, id := range []perfdata.Feature{perfdata.FeatTracingData, perfdata.FeatBuildID} {
		if s := w.spool[id]; s != nil && s.n > 0 {
			payloads[id] = payload{s: s, n: s.n}
		}
	}
	if s := w.spool[perfdata.FeatAuxtrace]; s != nil && s.n > 0 {
		// as perf's auxtrace_index__write(): u64 nr, then {offset, size}
		payloads[perfdata.FeatAuxtrace] = payload{s: s, n: s.n, head: w.bo.AppendUint64(nil, uint64(s.n/16))}
	}
	h := perfdata.FileHeader{
		Magic:    perfdata.PipeMagic(w.bo),
		Size:     perfdata.FileHeaderSize,
		AttrSize: uint64(w.fileAttrSize()),
		Attrs:    perfdata.Section{Offset: uint64(w.attrOff), Size: uint64(w.attrLen)},
		Data:     perfdata.Section{Offset: uint64(w.dataOff), Size: uint64(w.out)},
	}
	ids := make([]perfdata.Feature, 0, len(payloads))
	for id := range payloads {
		ids = append(ids, id)
		h.Features[id/64] |= 1 << (id % 64)
	}
	slices.Sort(ids)
	tableOff := w.dataOff + w.out
	at := tableOff + int64(len(ids)*perfdata.SectionSize)
	table := make([]byte, 0, len(ids)*perfdata.SectionSize)
	for _, id := range ids {
		p := payloads[id]
		n := int64(len(p.head)) + p.n
		table = w.bo.AppendUint64(table, uint64(at))
		table = w.bo.AppendUint64(table, uint64(n))
		if _, err := w.dst.WriteAt(p.head, at); err != nil {
			return err
		}
		if err := copyRange(w.dst, at+int64(len(p.head)), p.s.f, p.off, p.n); err != nil {
			return fmt.Errorf("writing feature %v: %w", id, err)
		}
		at += n
	}
	if _, err := w.dst.WriteAt(table, tableOff); err != nil {
		return err
	}
	hb := make([]byte, perfdata.FileHeaderSize)
	h.Encode(hb, w.bo)
	_, err := w.dst.WriteAt(hb, 0)
	return err
}

// spool is an unnamed file that bytes are appended to.
type spool struct {
	f *os.File
	n int64
}

// newSpool makes an unnamed file in dir (scratch.Unnamed), so that nothing
// is left behind whatever ends the process.
func newSpool(dir string) (*spool, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := scratch.Unnamed(dir)
	if err != nil {
		return nil, fmt.Errorf("a spool file in %s: %w", dir, err)
	}
	return &spool{f: f}, nil
}

func (s *spool) Write(b []byte) (int, error) {
	n, err := s.f.WriteAt(b, s.n)
	s.n += int64(n)
	return n, err
}

func (s *spool) append(b []byte) error {
	_, err := s.Write(b)
	return err
}
