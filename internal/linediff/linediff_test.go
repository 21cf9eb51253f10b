package linediff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"x\n", "x\n", ""},
		{"a\nb\nc\n", "a\nB\nc\n", "--- a\n+++ b\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"", "a\n", "--- a\n+++ b\n@@ -0,0 +1 @@\n+a\n"},
		{"a\n", "", "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n"},
		{"a\n", "a", "--- a\n+++ b\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"},
		// far apart: two hunks, 3 lines of context each
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n",
			"--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+Y\n 12\n"},
		// a line gone: the rest is not shown as changed
		{"f\n  a = 1\n  b = 2\n  c = 3\n", "f\n  a = 1\n  c = 3\n", "--- a\n+++ b\n@@ -1,4 +1,3 @@\n f\n   a = 1\n-  b = 2\n   c = 3\n"},
	} {
		if got := Unified("a", "b", tc.a, tc.b); got != tc.want {
			t.Errorf("Unified(%q, %q) =\n%s\nwant\n%s", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestUnifiedApplies: the diff's kept and added lines are b, its kept and
// removed lines a, and no more lines change than must, on random texts.
func TestUnifiedApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := func() []string {
		l := make([]string, r.IntN(30))
		for i := range l {
			l[i] = fmt.Sprint(r.IntN(5))
		}
		return l
	}
	for range 2000 {
		a, b := text(), text()
		ops := diff(a, b)
		var ga, gb []string
		for _, o := range ops {
			if o.kind != '+' {
				ga = append(ga, o.line)
			}
			if o.kind != '-' {
				gb = append(gb, o.line)
			}
		}
		if strings.Join(ga, "\n") != strings.Join(a, "\n") || strings.Join(gb, "\n") != strings.Join(b, "\n") {
			t.Fatalf("diff(%q, %q) = %v", a, b, ops)
		}
	}
}
