package inject_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/internal/testkit/rectest"
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
