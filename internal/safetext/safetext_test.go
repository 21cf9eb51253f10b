package safetext

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
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
		// JSON: a document of s (and a key of it) that decodes to what
		// encoding/json's does, with nothing raw outside its newlines
		b, err := json.MarshalIndent(map[string][]string{s: {s}}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(b)
		for _, r := range string(out) {
			if r != '\n' && unsafe(r, utf8.RuneLen(r)) {
				t.Fatalf("%q: %U raw in JSON %s", s, r, out)
			}
		}
		var want, got map[string][]string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: JSON %s decodes to %q (%v), want %q", s, out, got, err, want)
		}
	})
}

// TestJSON: what Clean escapes and encoding/json leaves raw (DEL, C1
// controls, bidirectional overrides, zero-width and line-separating
// characters, a format character beyond the BMP) comes out of JSON as \u
// escapes, in a document that decodes to the same value; the rest of the
// document, its newlines and indentation too, is unchanged.
func TestJSON(t *testing.T) {
	v := map[string]string{"k\u202e": "a\x7fb\u0085c\u200bd\u2028e\U000e0001f\x1b\n<&>é😀"}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(b)
	for _, r := range string(got) {
		if r != '\n' && unsafe(r, utf8.RuneLen(r)) {
			t.Errorf("%q left raw in %s", r, got)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || !maps.Equal(back, v) {
		t.Errorf("decodes to %q (%v), want %q", back, err, v)
	}
	if !bytes.Contains(got, []byte(`\u007f`)) || !bytes.Contains(got, []byte(`\udb40\udc01`)) || !bytes.Contains(got, []byte("é😀")) {
		t.Errorf("JSON(%s) = %s", b, got)
	}
	plain := []byte("{\n  \"a\": \"b é\"\n}")
	if got := JSON(plain); !bytes.Equal(got, plain) {
		t.Errorf("JSON(%s) = %s, want it unchanged", plain, got)
	}
}
