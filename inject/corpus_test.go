package inject_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Corpus files with something to say (../shared/corpus/MANIFEST.md).
const (
	corruptFile   = "quipper_CORRUPTED_zero_size_sample.pipe.data" // a SAMPLE of size 0
	ksymbolBPFile = "quipper_perf5.19_x86_64_branch_spec_ksymbol_bpf.data"
)

// TestCorpus (Done-when 4): inject with no matching programs, from an empty
// snapshot and from the running kernel (another machine's programs: ids
// and tags may collide, KSYMBOL addresses do not), leaves every corpus file
// byte for byte as it is; the corrupt file fails with the reader's error;
// the 5.19 file with BPF programs is read to the end.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.data"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files in %s (%v): the tests read the shared corpus in place", corpusDir, err)
	}
	live, err := bpfprog.NewLive()
	if err != nil {
		t.Fatalf("the running kernel as a source (run as root): %v", err)
	}
	sources := []struct {
		name string
		src  bpfprog.Source
	}{{"empty snapshot", &bpfprog.Snapshot{}}, {"live", live}}
	seen := map[string]bool{}
	for _, path := range files {
		name := filepath.Base(path)
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want := readFile(t, path)
			for _, s := range sources {
				out, sum, err := injectFile(t, path, t.TempDir(), s.src, inject.Options{})
				if name == corruptFile {
					var fe *reader.FormatError
					if !errors.As(err, &fe) || !errors.Is(err, reader.ErrCorrupt) {
						t.Errorf("%s: error %v, want the reader's FormatError (corrupt)", s.name, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", s.name, err)
					continue
				}
				if got := readFile(t, out); !bytes.Equal(got, want) {
					t.Errorf("%s: the output differs from the input: %s", s.name, firstDiff(got, want))
				}
				if sum.Injected != 0 {
					t.Errorf("%s: %d records added", s.name, sum.Injected)
				}
				if name == ksymbolBPFile {
					if len(sum.Programs) == 0 {
						t.Errorf("%s: no BPF programs found in the file with BPF events", s.name)
					}
					outcomes := map[inject.Outcome]int{}
					for _, p := range sum.Programs {
						outcomes[p.Outcome]++
					}
					t.Logf("%s: %d BPF programs: %v", s.name, len(sum.Programs), outcomes)
					for _, p := range sum.Programs {
						if p.Outcome == inject.Injected || p.Outcome == inject.AlreadyPresent {
							t.Errorf("%s: program %d of another machine: %v", s.name, p.ID, p.Outcome)
						}
					}
				}
			}
		})
	}
	for _, f := range []string{corruptFile, ksymbolBPFile} {
		if !seen[f] {
			t.Errorf("%s is not in %s", f, corpusDir)
		}
	}
}
