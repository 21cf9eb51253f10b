package testkit

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Update is set by -update: golden tests rewrite their files instead of
// comparing with them (`go test ./... -update`, `make golden`). Every test
// package that imports testkit accepts the flag.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata/ instead of comparing with them")

// Golden compares got with the golden file at path, or writes it with -update.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (go test -update rewrites it):\n%s", path, Diff(want, got))
	}
}

// Diff shows the first differing lines of two texts.
func Diff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	var b bytes.Buffer
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < 10; i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, w, g)
			shown++
		}
	}
	return b.String()
}
