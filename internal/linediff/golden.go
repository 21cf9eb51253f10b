package linediff

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Golden compares got with the golden file at path, failing t with the
// unified diff from the file to got if they differ; or, if update, writes
// got to path (and the directories it needs) and logs that it did. how
// says how the golden is rewritten ("go test -update"), in the messages of
// a golden missing or differing. It is the compare of testkit's goldens
// and bpfmetatest's, which cannot import testkit: testkit defines the
// -update flag, and a user's test package of bpfmetatest defines its own.
func Golden(t testing.TB, path string, got []byte, update bool, how string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s writes it)", err, how)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (%s rewrites it):\n%s", path, how, Unified(path, "got", string(want), string(got)))
	}
}
