package perfdata

import (
	"encoding/binary"
	"strconv"
)

// FileLayout is where everything is in a file-mode recording, as a reader
// found it. A rewriter uses it to copy what it does not change and to find
// every absolute offset it must adjust when the data section grows.
type FileLayout struct {
	Order binary.ByteOrder
	// HeaderRaw is the header as stored (FileHeaderSize or
	// OldFileHeaderSize bytes), so a rewrite keeps bytes it does not
	// understand (e.g. a feature bitmap written as 32-bit words).
	HeaderRaw []byte
	Header    FileHeader
	Attrs     []LayoutAttr
	Features  []FeatureSection
	// Size is the size of the whole file.
	Size int64
	// Dialect is the program that wrote the file.
	Dialect Dialect
}

// LayoutAttr is one attrs-section entry and where it is stored.
type LayoutAttr struct {
	FileAttr
	// Offset is the file offset of the entry (its perf_event_attr); the ids
	// section follows the attr's own size.
	Offset int64
}

// IDsFieldOffset is the file offset of the entry's perf_file_section ids.
func (a *LayoutAttr) IDsFieldOffset() int64 {
	return a.Offset + int64(AttrSize(a.Attr.Size))
}

// FeatureSection is one entry of the feature table: a feature and where its
// payload is.
type FeatureSection struct {
	ID Feature
	Section
	// TableOffset is the file offset of this entry in the feature table.
	TableOffset int64
}

// DataOffset is the file offset where the data section starts.
func (l *FileLayout) DataOffset() int64 { return int64(l.Header.Data.Offset) }

// Unfinished reports whether the header says the data section is empty
// though the file goes on after where it starts: perf record writes the
// data size when it ends, so this one did not end, or has not yet
// (perf_session__read_header() warns that "the data size field is 0").
func (l *FileLayout) Unfinished() bool {
	return l.Header.Data.Size == 0 && l.Size > l.DataOffset()
}

// DataEnd is the file offset one past the data section.
func (l *FileLayout) DataEnd() int64 { return int64(l.Header.Data.End()) }

// IDHeaderSize is the sample_id trailer size of the recording: the first
// attr's, as perf's evlist__id_hdr_size() takes it.
func (l *FileLayout) IDHeaderSize() int {
	if len(l.Attrs) == 0 {
		return 0
	}
	return l.Attrs[0].Attr.IDHeaderSize()
}

// Feature returns the section of feature f, if the file has it.
func (l *FileLayout) Feature(f Feature) (FeatureSection, bool) {
	for _, s := range l.Features {
		if s.ID == f {
			return s, true
		}
	}
	return FeatureSection{}, false
}

// DataFileName is the name of the n-th data file of a directory recording
// (perf record --threads): "data.N", beside the file "data" that has the
// header (perf_data__create_dir()).
func DataFileName(n int) string { return "data." + strconv.Itoa(n) }
