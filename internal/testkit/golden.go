package testkit

import (
	"flag"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/linediff"
)

// Update is set by -update: golden tests rewrite their files instead of
// comparing with them (`go test ./... -update`, `make golden`). Every test
// package that imports testkit accepts the flag.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata/ instead of comparing with them")

// Golden compares got with the golden file at path, or writes it with
// -update (and logs that it did): linediff.Golden.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	linediff.Golden(t, path, got, *Update, "go test -update")
}

// Diff is the unified diff from want to got.
func Diff(want, got []byte) string { return linediff.Unified("want", "got", string(want), string(got)) }
