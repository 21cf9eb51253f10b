package testkit

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/linediff"
)

// Update is set by -update: golden tests rewrite their files instead of
// comparing with them (`go test ./... -update`, `make golden`). Every test
// package that imports testkit accepts the flag.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata/ instead of comparing with them")

// Golden compares got with the golden file at path, or writes it with
// -update (and logs that it did).
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
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
		t.Fatalf("golden file: %v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it):\n%s", path, linediff.Unified(path, "got", string(want), string(got)))
	}
}

// Diff is the unified diff from want to got.
func Diff(want, got []byte) string { return linediff.Unified("want", "got", string(want), string(got)) }
