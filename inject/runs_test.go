package inject_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/recrun"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// recordsOnly and writeRecordOnly hide the reader's runs and the
// writer's WriteRun: inject then hands every record over by itself.
type (
	recordsOnly     struct{ inject.Recording }
	writeRecordOnly struct{ inject.RecordWriter }
)

// TestRunsAsRecords: inject passing records on a run at a time writes
// what it writes handing each record over by itself, byte for byte, with
// the same summary, calls Options.Progress after the same records, and
// Options.OtherMachine as often: every golden case from its snapshot,
// every corpus recording and directory recording from an empty source.
func TestRunsAsRecords(t *testing.T) {
	type input struct {
		path string
		src  bpfprog.Source
	}
	var ins []input
	golden, _ := filepath.Glob(filepath.Join(casesDir, "*.data"))
	for _, p := range golden {
		ins = append(ins, input{p, readSnapshot(t, strings.TrimSuffix(p, ".data")+".snapshot.json")})
	}
	for _, p := range testkit.CorpusFiles(t) {
		ins = append(ins, input{p, &bpfprog.List{}})
	}
	for _, n := range testkit.ThreadsNames(t) {
		ins = append(ins, input{testkit.ThreadsDir(n), &bpfprog.List{}})
	}
	if len(golden) == 0 {
		t.Fatalf("no golden cases in %s", casesDir)
	}
	for _, in := range ins {
		t.Run(filepath.Base(in.path), func(t *testing.T) {
			type result struct {
				out      string
				sum      *inject.Summary
				err      string
				progress []int64 // the reader's offset at each call
				other    int
			}
			inject1 := func(runs bool) result {
				var res result
				out, err := rectest.Through(t, in.path, t.TempDir(), reader.Options{Decompress: true}, writer.Options{}, func(r *reader.Reader, w *writer.Writer) (err error) {
					opts := inject.Options{
						Progress:     func() { res.progress = append(res.progress, r.Offset()) },
						OtherMachine: func(*inject.OtherMachine) { res.other++ },
					}
					if runs {
						res.sum, err = inject.Run(r, w, in.src, opts)
					} else {
						res.sum, err = inject.Run(recordsOnly{r}, writeRecordOnly{w}, in.src, opts)
					}
					return err
				})
				if err != nil {
					res.err = err.Error()
					return res
				}
				res.out = out
				return res
			}
			got, want := inject1(true), inject1(false)
			if got.err != want.err {
				t.Fatalf("in runs: error %q; a record at a time: %q", got.err, want.err)
			}
			if got.err != "" {
				return
			}
			if !reflect.DeepEqual(got.sum, want.sum) {
				t.Errorf("in runs, the summary is\n%+v\na record at a time\n%+v", got.sum, want.sum)
			}
			if !reflect.DeepEqual(got.progress, want.progress) || got.other != want.other {
				t.Errorf("in runs, Progress at %d and OtherMachine %d times; a record at a time, at %d and %d times", got.progress, got.other, want.progress, want.other)
			}
			if st, err := os.Stat(want.out); err == nil && st.IsDir() {
				testkit.SameDir(t, got.out, want.out)
			} else if a, b := testkit.ReadFile(t, got.out), testkit.ReadFile(t, want.out); !bytes.Equal(a, b) {
				t.Errorf("in runs: %s", testkit.FirstDiff(a, b))
			}
		})
	}
}

// runSpy is a recording whose runs (recrun.SourceOf finds its Run and
// Pass first) are the reader's, and that keeps the type of every record
// passed in a run, by its offset.
type runSpy struct {
	*reader.Reader
	runs   recrun.Source
	passed map[int64]perfdata.RecordType
}

func newRunSpy(r *reader.Reader) *runSpy {
	return &runSpy{Reader: r, runs: recrun.SourceOf(r), passed: map[int64]perfdata.RecordType{}}
}

func (s *runSpy) Run() recrun.Run { return s.runs.Run() }

func (s *runSpy) Pass(u recrun.Run) {
	off, raw := u.Taken()
	for len(raw) > 0 {
		h := perfdata.DecodeEventHeaderLittle(raw)
		s.passed[off] = h.Type
		off, raw = off+int64(h.Size), raw[h.Size:]
	}
	s.runs.Pass(u)
}

// TestRunsEndWherePassesSays: a record of every kernel type (and of two
// user types) amid SAMPLEs is in a run of inject's and of writer.Copy's
// exactly when recrun.Passes says it can be: the one rule both follow.
func TestRunsEndWherePassesSays(t *testing.T) {
	le := binary.LittleEndian
	types := []perfdata.RecordType{perfdata.RecordFinishedRound, perfdata.RecordBPFMetadata}
	for typ := range perfdata.UserTypeStart {
		types = append(types, typ)
	}
	for _, typ := range types {
		s := testkit.NewStream(le)
		for i := range 10 {
			s.Sample(0xffffffff81000000 + uint64(i))
		}
		at := int64(s.Len()) // the record of type typ
		switch typ {
		case perfdata.RecordSample:
			s.Sample(0xffffffff82000000)
		case perfdata.RecordKSymbol:
			s.KSymbol(0xffffffffc0000000, 64, "bpf_prog_0123456789abcdef_f", false, true)
		case perfdata.RecordBPFEvent:
			s.BPFEvent(perfdata.BPFEventProgLoad, 7, perfdata.BPFTag{1, 2, 3}, true)
		case perfdata.RecordBPFMetadata:
			s.Metadata(perfdata.BPFMetadata{ProgName: "bpf_prog_0123456789abcdef_f"})
		default:
			s.Record(typ, s.Trailer(true))
		}
		for i := range 10 {
			s.Sample(0xffffffff83000000 + uint64(i))
		}
		users := map[string]func(*runSpy, *writer.Writer) error{
			"inject": func(r *runSpy, w *writer.Writer) error {
				_, err := inject.Run(r, w, &bpfprog.List{}, inject.Options{})
				return err
			},
			"writer.Copy": func(r *runSpy, w *writer.Writer) error {
				_, err := writer.Copy(w, r, nil)
				return err
			},
		}
		for name, user := range users {
			t.Run(fmt.Sprintf("%v/%s", typ, name), func(t *testing.T) {
				r, err := reader.NewStream(bytes.NewReader(s.Bytes()), reader.Options{Decompress: true})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				w, err := writer.New(io.Discard, r, writer.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Abort()
				spy := newRunSpy(r)
				if err := user(spy, w); err != nil {
					t.Fatal(err)
				}
				samples := 0
				for off, p := range spy.passed {
					switch {
					case off == at:
					case p == perfdata.RecordSample:
						samples++
					default:
						t.Fatalf("a %v record at %#x in a run", p, off)
					}
				}
				if samples < 15 {
					t.Errorf("%d SAMPLEs of 20 passed in runs", samples)
				}
				_, inRun := spy.passed[at]
				if want := recrun.Passes(typ); inRun != want {
					t.Errorf("the %v record in a run: %v; recrun.Passes: %v", typ, inRun, want)
				}
			})
		}
	}
}
