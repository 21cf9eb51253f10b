package stable_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/stable"
)

// objectText is programs --stable's text of the fixture object name,
// computed from the file.
func objectText(t *testing.T, name string) string {
	t.Helper()
	progs, err := stable.ObjectFile(testkit.Fixture(name))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := stable.WritePrograms(&b, stable.Programs(progs)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestObjectFile: what perf will record of an object's programs, from the
// file, without root: the name cut as the kernel cuts it, the functions,
// the entries with a struct's named form; no metadata for a program
// without bpf_metadata_ variables or with more than perf takes (203). Each
// is checked against the loaded programs in bpfmetatest's
// TestObjectIsLoaded.
func TestObjectFile(t *testing.T) {
	for _, tc := range []struct{ object, want string }{
		{"versioned100", `bpfprogt_versio
  functions: bpfprogt_versioned
  entry:              version = "1.0.0"
  entry:                  abi = {1,"x86_64"}
  named:                  abi = {"major":1,"minor":0,"arch":"x86_64"}
  entry:                  api = 3
`},
		{"nometa", "bpfprogt_nometa\n  functions: bpfprogt_nometa, bpfprogt_nometa_sub\n  no metadata\n"},
		{"rodata", "bpfprogt_rodata\n  functions: bpfprogt_rodata\n  no metadata\n"},
		{"many203", "bpfprogt_many20\n  functions: bpfprogt_many203\n  no metadata\n"},
	} {
		if got := objectText(t, tc.object); got != tc.want {
			t.Errorf("%s:\n%s", tc.object, testkit.Diff([]byte(tc.want), []byte(got)))
		}
	}
	// 202 variables: perf's limit, all of them
	if got := objectText(t, "many202"); strings.Count(got, "  entry: ") != 202 {
		t.Errorf("many202: %d entries", strings.Count(got, "  entry: "))
	}
}

// TestObjectSpecValues: a spec whose variables the test set gives their
// values, as the load will.
func TestObjectSpecValues(t *testing.T) {
	spec, err := ebpf.LoadCollectionSpec(testkit.Fixture("versioned100"))
	if err != nil {
		t.Fatal(err)
	}
	v := spec.Variables["bpf_metadata_api"]
	if v == nil {
		t.Fatalf("no variable bpf_metadata_api: %v", spec.Variables)
	}
	if err := v.Set(int32(4)); err != nil {
		t.Fatal(err)
	}
	progs, err := stable.ObjectPrograms(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := stable.WritePrograms(&b, stable.Programs(progs)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  entry:                  api = 4\n") {
		t.Errorf("api set to 4:\n%s", b.String())
	}
}
