package reader_test

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"os"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/recrun"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// handedOut is what the reader says of one record and of itself after
// handing it out.
type handedOut struct {
	off, outer int64
	part       int
	h          perfdata.EventHeader
	sum        uint64 // of Raw
	payload    int64
	counts     reader.Counts
	pos        int64 // Offset
}

var runSeed = maphash.MakeSeed()

func handed(r *reader.Reader, rec *perfdata.Record) handedOut {
	return handedOut{rec.Offset, rec.Outer, rec.Part, rec.Header, maphash.Bytes(runSeed, rec.Raw), rec.PayloadSize, r.Counts(), r.Offset()}
}

// walk reads r to its end and returns what it handed out, then its error
// and trailing bytes. take, if not nil, is how many records of each run
// (at most) to take before the next call of Next; the records taken are
// checked against Record after Pass.
func walk(t *testing.T, r *reader.Reader, take func(i int) int) (got []handedOut, end string) {
	t.Helper()
	for i := 0; ; i++ {
		if take != nil {
			runs := recrun.SourceOf(r)
			u := runs.Run()
			k := take(i)
			var recs []perfdata.Record
			for u.Len() < k {
				h, ok := u.Peek()
				if !ok {
					break
				}
				off, taken := u.Taken()
				raw := u.Take(h)
				recs = append(recs, perfdata.Record{Offset: off + int64(len(taken)), Header: h, Raw: raw, Outer: -1, Part: u.Part()})
			}
			if off, taken := u.Taken(); len(recs) > 0 && (off != recs[0].Offset || len(taken) != int(recs[len(recs)-1].Offset-off)+len(recs[len(recs)-1].Raw)) {
				t.Fatalf("Taken() = %#x, %d bytes; the records taken are from %#x", off, len(taken), recs[0].Offset)
			}
			counts := r.Counts()
			runs.Pass(u)
			for j := range recs {
				// as Next would have handed them out
				rec := &recs[j]
				if u.Compressed() {
					rec.Outer = r.Record().Outer // the run's, compared with Next's below
					counts.Inner++
					counts.InnerBytes += int64(len(rec.Raw))
				} else {
					counts.Records++
				}
				ho := handed(r, rec)
				ho.counts = counts
				ho.pos = got0pos(r, rec, j == len(recs)-1)
				got = append(got, ho)
			}
			if n := len(recs); n > 0 {
				last := r.Record()
				if want := &recs[n-1]; last.Offset != want.Offset || last.Header != want.Header || !bytes.Equal(last.Raw, want.Raw) || last.Outer != want.Outer || last.Part != want.Part || last.PayloadSize != 0 {
					t.Fatalf("after Pass, Record() is %+v at %#x; want the last record taken, %+v at %#x", last.Header, last.Offset, want.Header, want.Offset)
				}
			}
		}
		if !r.Next() {
			break
		}
		got = append(got, handed(r, r.Record()))
	}
	off, tr := r.Trailing()
	return got, fmt.Sprintf("err %v, trailing %d bytes at %#x, %+v", r.Err(), len(tr), off, r.Counts())
}

// got0pos is the Offset the reader had after handing out rec by Next:
// known only for the last record of a Pass (the reader's own); the others
// are checked by their place in the input.
func got0pos(r *reader.Reader, rec *perfdata.Record, last bool) int64 {
	if last {
		return r.Offset()
	}
	if rec.Outer >= 0 {
		return r.Offset() // inner records do not move it
	}
	return rec.Offset + int64(len(rec.Raw))
}

// TestRun: walking runs of records (recrun: Run, Peek, Take, Pass), any number of
// records at a time, hands out the records Next hands out, in the same
// order, with the same Counts, Offset and Record, and ends as Next ends
// (error, trailing bytes), for every corpus recording, as a file and as
// a stream, decompressed and not, and every directory recording.
func TestRun(t *testing.T) {
	type opener func(t *testing.T) *reader.Reader
	cases := map[string]opener{}
	for _, name := range testkit.CorpusNames(t) {
		for _, dec := range []bool{false, true} {
			opts := reader.Options{Decompress: dec}
			cases[fmt.Sprintf("%s/file/decompress=%v", name, dec)] = func(t *testing.T) *reader.Reader {
				return openFile(t, corpusFile(t, name), opts)
			}
			cases[fmt.Sprintf("%s/stream/decompress=%v", name, dec)] = func(t *testing.T) *reader.Reader {
				r, err := reader.NewStream(bytes.NewReader(testkit.CorpusBytes(t, name)), opts)
				if err != nil {
					t.Skipf("not a stream: %v", err)
				}
				t.Cleanup(func() { r.Close() })
				return r
			}
		}
	}
	for _, name := range testkit.ThreadsNames(t) {
		cases[name+"/dir"] = func(t *testing.T) *reader.Reader {
			r, err := reader.Open(testkit.ThreadsDir(name), reader.Options{Decompress: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r
		}
	}
	takes := map[string]func(int) int{
		"all":   func(int) int { return 1 << 30 },
		"none":  func(int) int { return 0 },
		"1":     func(int) int { return 1 },
		"mixed": func(i int) int { return i % 7 },
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) {
			want, wantEnd := walk(t, open(t), nil)
			if len(want) == 0 {
				return
			}
			for tn, take := range takes {
				got, end := walk(t, open(t), take)
				if end != wantEnd {
					t.Errorf("take %s: ended with %s; Next alone, %s", tn, end, wantEnd)
				}
				if len(got) != len(want) {
					t.Errorf("take %s: %d records; Next alone, %d", tn, len(got), len(want))
				}
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("take %s: record %d is %+v; Next alone, %+v", tn, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestRunCut: a recording cut anywhere, walked in runs, stops with the
// error Next alone stops with, after the same records.
func TestRunCut(t *testing.T) {
	for _, name := range []string{"mstange_perf6.16_x86_64_zstd_compressed2.pipe.data", "mstange_perf6.16_x86_64_sleep.data"} {
		data := testkit.CorpusBytes(t, name)
		for cut := len(data) - 1; cut > len(data)/2; cut -= len(data)/97 + 1 {
			t.Run(fmt.Sprintf("%s/%d", name, cut), func(t *testing.T) {
				open := func() *reader.Reader {
					f, err := os.CreateTemp(t.TempDir(), "cut")
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { f.Close() })
					if _, err := f.Write(data[:cut]); err != nil {
						t.Fatal(err)
					}
					r, err := reader.NewFile(f, int64(cut), reader.Options{Decompress: true})
					if err != nil {
						t.Skip(err)
					}
					t.Cleanup(func() { r.Close() })
					return r
				}
				want, wantEnd := walk(t, open(), nil)
				got, end := walk(t, open(), func(i int) int { return 1 + i%5 })
				if end != wantEnd || len(got) != len(want) {
					t.Errorf("in runs: %d records, %s; Next alone: %d records, %s", len(got), end, len(want), wantEnd)
				}
			})
		}
	}
}
