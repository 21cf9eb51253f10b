package reader

import (
	"encoding/binary"
	"io"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Bounds on what a reader holds of a file's header, whatever the file
// claims: far beyond any real recording, small enough that a damaged size
// field cannot make it allocate much.
const (
	// maxAttrs is the most events (attrs) a recording may have.
	maxAttrs = 4096
	// idsChunk is how many sample ids are read at a time.
	idsChunk = 4096
)

// readLayout reads and checks a file-mode header, attrs section and feature
// table, with the checks perf's perf_file_header__read() and
// perf_session__read_header() make.
func readLayout(ra io.ReaderAt, size int64, head []byte) (*perfdata.FileLayout, error) {
	if len(head) < perfdata.OldFileHeaderSize {
		if !perfdata.IsMagicPrefix(head) {
			// a text file of 25 bytes is no recording cut short
			return nil, notPerfData()
		}
		return nil, truncated(0, "truncated file header: %d of %d bytes", len(head), perfdata.FileHeaderSize)
	}
	m, ok := perfdata.ParseMagic(head[:8], head[16:24])
	if !ok {
		if v := string(head[:8]); v == "PERFFILE" || v == "ELIFFREP" {
			return nil, corrupt(16, "version 1 header whose attr_size is no known perf_event_attr size")
		}
		return nil, notPerfData()
	}
	bo := m.Order
	if size := bo.Uint64(head[8:16]); (size == perfdata.FileHeaderSize || size == perfdata.OldFileHeaderSize) && uint64(len(head)) < size {
		return nil, truncated(0, "truncated file header: %d of %d bytes", len(head), size)
	}
	h, err := perfdata.DecodeFileHeader(head, bo)
	if err != nil {
		return nil, corrupt(8, "%v", err)
	}
	if int64(len(head)) < int64(h.Size) {
		return nil, truncated(int64(len(head)), "truncated file header: %d of %d bytes", len(head), h.Size)
	}
	l := &perfdata.FileLayout{
		Order:     bo,
		HeaderRaw: append([]byte(nil), head[:h.Size]...),
		Header:    h,
		Size:      size,
		Dialect:   perfdata.FileDialect(&h),
	}
	if h.AttrSize == 0 || h.AttrSize > perfdata.MaxAttrSize {
		return nil, corrupt(16, "attr_size is %d", h.AttrSize)
	}
	// The sections must be in the file and must not overlap.
	for _, s := range []struct {
		name string
		sec  perfdata.Section
		at   int64
	}{{"attrs", h.Attrs, 24}, {"data", h.Data, 40}} {
		if s.sec.Offset < h.Size && s.sec.Size > 0 {
			return nil, corrupt(s.at, "%s section at %#x overlaps the file header", s.name, s.sec.Offset)
		}
		if s.sec.End() < s.sec.Offset || int64(s.sec.End()) > size || int64(s.sec.End()) < 0 {
			return nil, truncated(s.at, "%s section [%#x, %#x) ends past the end of the file (%d bytes)", s.name, s.sec.Offset, s.sec.End(), size)
		}
	}
	if h.Attrs.Size > 0 && h.Data.Size > 0 && h.Attrs.Offset < h.Data.End() && h.Data.Offset < h.Attrs.End() {
		return nil, corrupt(24, "attrs section [%#x, %#x) and data section [%#x, %#x) overlap", h.Attrs.Offset, h.Attrs.End(), h.Data.Offset, h.Data.End())
	}
	if err := readAttrs(ra, l); err != nil {
		return nil, err
	}
	if err := readFeatureTable(ra, l); err != nil {
		if h.Data.Size == 0 {
			// perf record writes the data size, and the feature table
			// after the data, when it ends: this one did not end.
			return nil, unfinished()
		}
		return nil, err
	}
	return l, nil
}

// readAttrs reads the attrs section as perf's read_attr() walks it: each
// entry is a perf_event_attr of its own attr.size, then its ids section.
func readAttrs(ra io.ReaderAt, l *perfdata.FileLayout) error {
	h := &l.Header
	nr := h.Attrs.Size / h.AttrSize
	if nr > maxAttrs {
		return corrupt(32, "attrs section of %d bytes: %d attrs (at most %d)", h.Attrs.Size, nr, maxAttrs)
	}
	buf := make([]byte, h.Attrs.Size)
	if _, err := ra.ReadAt(buf, int64(h.Attrs.Offset)); err != nil {
		return truncated(int64(h.Attrs.Offset), "attrs section: %v", err)
	}
	p := 0
	for i := uint64(0); i < nr; i++ {
		off := int64(h.Attrs.Offset) + int64(p)
		if len(buf)-p < perfdata.AttrSizeVer0 {
			return truncated(off, "attr %d: %d bytes left in the attrs section", i, len(buf)-p)
		}
		sz := perfdata.AttrSize(l.Order.Uint32(buf[p+4:]))
		if sz < perfdata.AttrSizeVer0 || uint64(sz)+perfdata.SectionSize > h.AttrSize {
			return corrupt(off+4, "attr %d: perf_event_attr.size %d does not fit attr_size %d", i, sz, h.AttrSize)
		}
		a, err := perfdata.DecodeAttr(buf[p:p+sz], l.Order)
		if err != nil {
			return corrupt(off, "attr %d: %v", i, err)
		}
		ids := perfdata.DecodeSection(buf[p+sz:], l.Order)
		if ids.End() < ids.Offset || int64(ids.End()) > l.Size {
			return truncated(off+int64(sz), "attr %d: ids [%#x, %#x) past the end of the file (%d bytes)", i, ids.Offset, ids.End(), l.Size)
		}
		l.Attrs = append(l.Attrs, perfdata.LayoutAttr{FileAttr: perfdata.FileAttr{Attr: a, IDs: ids}, Offset: off})
		p += sz + perfdata.SectionSize
	}
	return nil
}

// readFeatureTable reads the table of feature sections that starts right
// after the data section, and checks that every section is in the file.
func readFeatureTable(ra io.ReaderAt, l *perfdata.FileLayout) error {
	feats, err := featureSections(ra, &l.Header, l.Order, l.Size)
	if err != nil {
		return err
	}
	for _, f := range feats {
		if int64(f.End()) > l.Size {
			return truncated(f.TableOffset, "%v feature section [%#x, %#x) ends past the end of the file (%d bytes)", f.ID, f.Offset, f.End(), l.Size)
		}
	}
	l.Features = feats
	return nil
}

// featureSections reads the feature table of header h from ra, of size
// bytes (perf_file_header__read_features(): one perf_file_section per set
// feature bit, in bit order, at FeatureTableOffset), and checks that no
// section wraps around.
func featureSections(ra io.ReaderAt, h *perfdata.FileHeader, bo binary.ByteOrder, size int64) ([]perfdata.FeatureSection, error) {
	ids := h.FeatureList()
	if len(ids) == 0 {
		return nil, nil
	}
	at := int64(h.FeatureTableOffset())
	n := int64(len(ids)) * perfdata.SectionSize
	if at < 0 || at+n > size {
		return nil, truncated(at, "feature table of %d entries: %d bytes left in the file", len(ids), max(size-at, 0))
	}
	buf := make([]byte, n)
	if _, err := ra.ReadAt(buf, at); err != nil {
		return nil, truncated(at, "feature table: %v", err)
	}
	feats := make([]perfdata.FeatureSection, len(ids))
	for i, id := range ids {
		s := perfdata.DecodeSection(buf[i*perfdata.SectionSize:], bo)
		off := at + int64(i)*perfdata.SectionSize
		if s.End() < s.Offset || s.End() > 1<<62 {
			return nil, corrupt(off, "%v feature section [%#x, %#x) ends past 2^62 bytes", id, s.Offset, s.End())
		}
		feats[i] = perfdata.FeatureSection{ID: id, Section: s, TableOffset: off}
	}
	return feats, nil
}

// readEvents reads the events' sample ids (each attr's ids section) into
// events, up to the number perfdata.Events keeps.
func readEvents(ra io.ReaderAt, l *perfdata.FileLayout, events *perfdata.Events) error {
	buf := make([]byte, 8*idsChunk)
	ids := make([]uint64, 0, idsChunk)
	for i, a := range l.Attrs {
		events.Add(a.Attr, nil)
		n := int64(a.IDs.Size / 8)
		for off := int64(0); off < n && !events.Full(); {
			m := min(n-off, idsChunk)
			b := buf[:8*m]
			at := int64(a.IDs.Offset) + 8*off
			if _, err := ra.ReadAt(b, at); err != nil {
				return truncated(at, "ids of attr %d: %v", i, err)
			}
			ids = ids[:0]
			for p := 0; p < len(b); p += 8 {
				ids = append(ids, l.Order.Uint64(b[p:]))
			}
			events.AddIDs(i, ids)
			off += m
		}
	}
	return nil
}

// FeatureReader returns a reader of a file-mode feature section's payload.
func FeatureReader(ra io.ReaderAt, s perfdata.FeatureSection) *io.SectionReader {
	return io.NewSectionReader(ra, int64(s.Offset), int64(s.Size))
}
