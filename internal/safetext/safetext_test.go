package safetext

import (
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain text, über ✓", "plain text, über ✓"},
		{"a\nb\tc\rd", `a\nb\tc\rd`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"bell\a del\x7f", `bell\x07 del\x7f`},
		{"csi \x9b2J", `csi \x9b2J`},     // a lone C1 byte is not UTF-8
		{"c1 \u009b2J", `c1 \x9b2J`},     // C1 as UTF-8
		{"bad \xff\xfe", `bad \xff\xfe`}, // invalid UTF-8
		{"cut \xe2\x9c", `cut \xe2\x9c`}, // a rune cut short
		{"nbsp\u00a0ok", "nbsp\u00a0ok"}, // U+00A0 is printable
		// invisible format characters and separators: text shown out of
		// order (Trojan Source), hidden, or on a line of its own
		{"prog_\u202etxt.exe", `prog_\u202etxt.exe`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"tag\U000e0041", `tag\U000e0041`},
	} {
		if got := Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"perf.data", "perf.data"},
		{"/tmp/a-b_c+d,e:f=g@h%i~j", "/tmp/a-b_c+d,e:f=g@h%i~j"},
		{"", `""`},
		{"with space", `"with space"`},
		{`q"uote\`, `"q\"uote\\"`},
		{"x\n\x1b[31mbpfmeta: all good\x1b[0m\r.data", `"x\n\x1b[31mbpfmeta: all good\x1b[0m\r.data"`},
		{"evil\u202eatad.txt", `"evil\u202eatad.txt"`},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzClean: the result of Clean and Quote is valid UTF-8 with no control
// character, and Clean leaves safe text alone.
func FuzzClean(f *testing.F) {
	f.Add("x\n\x1b[31m\x9b\a\x7f\xff")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Clean(s), Quote(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%q: invalid UTF-8 out: %q", s, out)
			}
			for _, r := range out {
				if unsafe(r, utf8.RuneLen(r)) {
					t.Fatalf("%q: control character %U out: %q", s, r, out)
				}
			}
		}
		if !needsEscape(s) && Clean(s) != s {
			t.Fatalf("Clean changed safe text %q", s)
		}
	})
}
