package inject_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Corpus files with something to say (testdata/corpus/MANIFEST.md).
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
	t.Run("empty snapshot", func(t *testing.T) { testCorpus(t, &bpfprog.List{}) })
	t.Run("live", func(t *testing.T) {
		testkit.BPF(t)
		live, err := live.New()
		if err != nil {
			t.Fatalf("the running kernel as a source: %v", err)
		}
		testCorpus(t, live)
	})
}

func testCorpus(t *testing.T, src bpfprog.Source) {
	seen := map[string]bool{}
	_, isLive := src.(*live.Kernel)
	for _, name := range testkit.CorpusNames(t) {
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			path := testkit.CorpusFile(t, name)
			if isLive && ofThisMachine(t, path) {
				// The project's own recordings were made on a machine like
				// this one: on the one that made them, in the same boot,
				// their programs are the kernel's, and inject rightly adds
				// their metadata.
				t.Skip("recorded on a machine of this name and kernel: its programs may be the running kernel's")
			}
			want := testkit.ReadFile(t, path)
			out, sum, err := injectFile(t, path, t.TempDir(), src, inject.Options{})
			if name == corruptFile {
				var fe *reader.FormatError
				if !errors.As(err, &fe) || !errors.Is(err, reader.ErrCorrupt) {
					t.Errorf("error %v, want the reader's FormatError (corrupt)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := testkit.ReadFile(t, out); !bytes.Equal(got, want) {
				t.Errorf("the output differs from the input: %s", testkit.FirstDiff(got, want))
			}
			if sum.Injected != 0 {
				t.Errorf("%d records added", sum.Injected)
			}
			if name == ksymbolBPFile {
				if len(sum.Programs) == 0 {
					t.Errorf("no BPF programs found in the file with BPF events")
				}
				outcomes := map[inject.Outcome]int{}
				for _, p := range sum.Programs {
					outcomes[p.Outcome]++
				}
				t.Logf("%d BPF programs: %v", len(sum.Programs), outcomes)
				for _, p := range sum.Programs {
					if p.Outcome == inject.Injected || p.Outcome == inject.AlreadyPresent {
						t.Errorf("program %d of another machine: %v", p.ID, p.Outcome)
					}
				}
			}
		})
	}
	for _, f := range []string{corruptFile, ksymbolBPFile} {
		if !seen[f] {
			t.Errorf("%s is not in %s", f, testkit.CorpusDir())
		}
	}
}

// ofThisMachine says whether the recording at path says it was made on a
// machine of this one's host name and kernel release.
func ofThisMachine(t *testing.T, path string) bool {
	r, err := reader.Open(path, reader.Options{})
	if err != nil {
		return false
	}
	defer r.Close()
	for {
		if o, done := r.Origin(); done {
			host, _ := os.Hostname()
			var u unix.Utsname
			if unix.Uname(&u) != nil {
				return false
			}
			return o.Hostname == host && o.OSRelease == unix.ByteSliceToString(u.Release[:])
		}
		if !r.Next() {
			return false
		}
	}
}
