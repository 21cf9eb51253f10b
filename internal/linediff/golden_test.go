package linediff

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeT records what Golden said, without ending the test.
type fakeT struct {
	testing.TB
	failed bool
	msgs   []string
}

func (f *fakeT) Helper()                   {}
func (f *fakeT) Errorf(s string, a ...any) { f.failed = true; f.Logf(s, a...) }
func (f *fakeT) Logf(s string, a ...any)   { f.msgs = append(f.msgs, fmt.Sprintf(s, a...)) }
func (f *fakeT) Fatal(a ...any)            { f.Fatalf("%s", fmt.Sprint(a...)) }
func (f *fakeT) Fatalf(s string, a ...any) {
	f.Errorf(s, a...)
	panic(f)
}

// TestGolden: the golden compare, in each case a golden meets: equal,
// differing (the diff and how to rewrite it), missing (how to write it),
// and under update, written where it was missing or differed, its
// directory made, and named in the log.
func TestGolden(t *testing.T) {
	const how = "go test -update, or X=1,"
	for _, tc := range []struct {
		name    string
		file    *string // the golden's text before, nil for none
		got     string
		update  bool
		failed  bool
		says    []string // each in what it said
		written bool     // the golden is got after
	}{
		{name: "equal", file: ptr("a\nb\n"), got: "a\nb\n"},
		{name: "differs", file: ptr("a\nb\nc\n"), got: "a\nB\nc\n", failed: true,
			says: []string{"GOLDEN differs (go test -update, or X=1, rewrites it):\n", "--- GOLDEN\n+++ got\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"}},
		{name: "missing", got: "a\n", failed: true,
			says: []string{"no such file or directory (go test -update, or X=1, writes it)"}},
		{name: "update differs", file: ptr("a\n"), got: "b\n", update: true, says: []string{"wrote GOLDEN"}, written: true},
		{name: "update missing", got: "b\n", update: true, says: []string{"wrote GOLDEN"}, written: true},
		{name: "update equal", file: ptr("b\n"), got: "b\n", update: true, says: []string{"wrote GOLDEN"}, written: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "x.golden")
			if tc.file != nil {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(*tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f := &fakeT{}
			func() {
				defer func() {
					if r := recover(); r != nil && r != any(f) {
						panic(r)
					}
				}()
				Golden(f, path, []byte(tc.got), tc.update, how)
			}()
			said := strings.ReplaceAll(strings.Join(f.msgs, "\n"), path, "GOLDEN")
			if f.failed != tc.failed {
				t.Errorf("failed %v, want %v: %s", f.failed, tc.failed, said)
			}
			for _, s := range tc.says {
				if !strings.Contains(said, s) {
					t.Errorf("said %q, want it to say %q", said, s)
				}
			}
			b, err := os.ReadFile(path)
			switch {
			case tc.written && (err != nil || string(b) != tc.got):
				t.Errorf("golden after: %q, %v; want %q written", b, err, tc.got)
			case !tc.written && tc.file != nil && string(b) != *tc.file:
				t.Errorf("golden after: %q; want it untouched (%q)", b, *tc.file)
			case !tc.written && tc.file == nil && err == nil:
				t.Errorf("a golden was written: %q", b)
			}
		})
	}
}

func ptr(s string) *string { return &s }
