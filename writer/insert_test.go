package writer_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// readsWithStockPerf lists the file-mode corpus files perf 6.1 reads, as the
// MANIFEST says ("| reads |").
func readsWithStockPerf(t *testing.T) []string {
	t.Helper()
	man, err := os.ReadFile(filepath.Join(testkit.CorpusDir(), "MANIFEST.md"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, line := range strings.Split(string(man), "\n") {
		f := strings.Split(line, "|")
		if len(f) > 7 && strings.TrimSpace(f[3]) == "file" && strings.TrimSpace(f[7]) == "reads" {
			files = append(files, testkit.CorpusFile(t, strings.TrimSpace(f[1])))
		}
	}
	if len(files) < 12 {
		t.Fatalf("found %d files perf 6.1 reads in the MANIFEST table: format changed?", len(files))
	}
	return files
}

// insertEvery writes a FINISHED_ROUND record (which perf 6.1 accepts
// anywhere) before every n-th top-level record and before every AUXTRACE
// record, so that everything after the first insertion moves.
func insertEvery(n int) func(w *writer.Writer, rec *perfdata.Record) error {
	i := 0
	fr := make([]byte, 8)
	perfdata.EventHeader{Type: perfdata.RecordFinishedRound, Size: 8}.Encode(fr, binary.LittleEndian)
	return func(w *writer.Writer, rec *perfdata.Record) error {
		if !rec.Compressed() {
			if i%n == 0 || rec.Header.Type == perfdata.RecordAuxtrace {
				if err := w.WriteRecord(&perfdata.Record{Offset: -1, Outer: -1, Raw: fr, Header: perfdata.EventHeader{Type: perfdata.RecordFinishedRound, Size: 8}}); err != nil {
					return err
				}
			}
			i++
		}
		return w.WriteRecord(rec)
	}
}

func headerOnly(t *testing.T, stockPerf, path string) string {
	t.Helper()
	out, err := exec.Command(stockPerf, "report", "--header-only", "-I", "-i", path).CombinedOutput()
	if err != nil {
		t.Fatalf("perf report --header-only -i %s: %v\n%s", path, err, out)
	}
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		// these two say where the data is, which is what changed
		if strings.HasPrefix(l, "# data size") || strings.HasPrefix(l, "# feat offset") || strings.HasPrefix(l, "# captured on") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// TestInsertPerfReads: records inserted into a file-mode recording move
// the data after them and everything after the data section; perf 6.1 must
// read the result with the same header and the same records plus the
// inserted ones, and HEADER_AUXTRACE must point at the moved AUXTRACE records.
func TestInsertPerfReads(t *testing.T) {
	perf := testkit.PerfStock(t)
	for _, path := range readsWithStockPerf(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			got := rewrite(t, path, insertEvery(7))
			out := filepath.Join(t.TempDir(), "inserted.data")
			if err := os.WriteFile(out, got, 0o600); err != nil {
				t.Fatal(err)
			}
			before, after := testkit.ReportStats(t, perf, path).Counts, testkit.ReportStats(t, perf, out).Counts
			inserted := countInserted(t, path)
			for k, want := range before {
				if k == "FINISHED_ROUND" || k == "TOTAL" {
					want += inserted
				}
				if after[k] != want {
					t.Errorf("%s events: %d, want %d", k, after[k], want)
				}
			}
			if _, ok := before["FINISHED_ROUND"]; !ok && after["FINISHED_ROUND"] != inserted {
				t.Errorf("FINISHED_ROUND events: %d, want %d", after["FINISHED_ROUND"], inserted)
			}
			if h0, h1 := headerOnly(t, perf, path), headerOnly(t, perf, out); h0 != h1 {
				t.Errorf("perf report --header-only differs:\n%s\n---\n%s", h0, h1)
			}
			checkAuxtraceIndex(t, out)
		})
	}
}

// countInserted is how many records insertEvery(7) inserts into path.
func countInserted(t *testing.T, path string) int {
	n, i := 0, 0
	r := rectest.Open(t, path, reader.Options{})
	for r.Next() {
		if i%7 == 0 || r.Record().Header.Type == perfdata.RecordAuxtrace {
			n++
		}
		i++
	}
	return n
}

// checkAuxtraceIndex checks that every HEADER_AUXTRACE entry of the file
// at path points at an AUXTRACE record of its size.
func checkAuxtraceIndex(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	r, err := reader.NewFile(f, st.Size(), reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sec, ok := r.Layout().Feature(perfdata.FeatAuxtrace)
	if !ok {
		return
	}
	bo := r.ByteOrder()
	idx := make([]byte, sec.Size)
	f.ReadAt(idx, int64(sec.Offset))
	start, nr := uint64(0), sec.Size/16 // simpleperf: no count
	if r.Dialect() != perfdata.DialectSimpleperf {
		start, nr = 8, bo.Uint64(idx)
	}
	if nr == 0 || start+16*nr > sec.Size {
		t.Fatalf("AUXTRACE index of %d bytes with %d entries", sec.Size, nr)
	}
	for i := uint64(0); i < nr; i++ {
		off, size := bo.Uint64(idx[start+16*i:]), bo.Uint64(idx[start+8+16*i:])
		h := make([]byte, 8)
		f.ReadAt(h, int64(off))
		eh := perfdata.DecodeEventHeader(h, bo)
		if eh.Type != perfdata.RecordAuxtrace || uint64(eh.Size) != size {
			t.Errorf("AUXTRACE index entry %d: %#x [%#x] is a %v record of %d bytes", i, off, size, eh.Type, eh.Size)
		}
	}
}

// TestInputError: an attr whose ids no pipe's HEADER_ATTR record can hold
// (its ids section claims 200 MB, in a sparse file) is the input's error,
// at the attr's offset, not the output's.
func TestInputError(t *testing.T) {
	b := testkit.CorpusBytes(t, "quipper_perf4.4_x86_64_lost_samples.data")
	bo := binary.LittleEndian
	attrs, attrSize := bo.Uint64(b[24:]), bo.Uint64(b[16:])
	ids := attrs + attrSize - perfdata.SectionSize
	bo.PutUint64(b[ids:], uint64(len(b)))
	bo.PutUint64(b[ids+8:], 200<<20)
	path := filepath.Join(t.TempDir(), "ids.data")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(len(b))+200<<20); err != nil {
		t.Fatal(err)
	}
	r, err := reader.Open(path, reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := writer.New(io.Discard, r, writer.Options{})
	if err == nil {
		w.Abort()
	}
	var ie *writer.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), fmt.Sprintf("at %#x", attrs)) {
		t.Errorf("writer.New: %v; want an *InputError at %#x", err, attrs)
	}
}

// TestHeaderIntoData: a file whose AUXTRACE index lies inside the data
// section (only a crafted file has that) is copied as it is, but records
// inserted into it are an input error: rewriting the index's offsets would
// change the records it overlaps. An offset the writer need not change is
// not written, wherever it is.
func TestHeaderIntoData(t *testing.T) {
	src := testkit.CorpusFile(t, "quipper_perf4.14_x86_64_intel_pt_auxtrace.data")
	b := testkit.ReadFile(t, src)
	r := rectest.Open(t, src, reader.Options{})
	l := r.Layout()
	sec, ok := l.Feature(perfdata.FeatAuxtrace)
	if !ok {
		t.Fatal("no AUXTRACE feature")
	}
	// a copy of the index in the AUX data of the first AUXTRACE record
	// large enough (opaque bytes, for the reader), and the table pointing
	// at it
	into := int64(-1)
	for r.Next() {
		if rec := r.Record(); rec.Header.Type == perfdata.RecordAuxtrace && rec.PayloadSize >= int64(sec.Size) {
			into = rec.Offset + int64(len(rec.Raw))
			break
		}
	}
	r.Close()
	if into < 0 {
		t.Fatalf("no AUXTRACE record with %d bytes of AUX data", sec.Size)
	}
	copy(b[into:], b[sec.Offset:sec.Offset+sec.Size])
	l.Order.PutUint64(b[sec.TableOffset:], uint64(into))
	path := filepath.Join(t.TempDir(), "in.data")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := rewrite(t, path, nil); !bytes.Equal(got, b) {
		t.Error("copied unchanged: output differs from the input")
	}
	_, err := rectest.Through(t, path, t.TempDir(), reader.Options{Decompress: true}, writer.Options{}, func(r *reader.Reader, w *writer.Writer) error {
		return rectest.Copy(r, w, insertEvery(7))
	})
	var ie *writer.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "inside the data section") {
		t.Errorf("records inserted: %v, want an input error: the index lies inside the data section", err)
	}
}
