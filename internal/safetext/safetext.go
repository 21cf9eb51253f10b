// Package safetext makes text from recordings, snapshots and file names
// safe to print on a terminal. It is the one escaping rule of bpfmeta's
// text output: C0 and C1 control characters, DEL and bytes that are not
// UTF-8 are shown escaped (\x1b, \n, \t), as git and ls show them, and so
// are Unicode's invisible format characters and line separators (\u202e:
// bidirectional overrides, zero-width spaces, U+2028), so that nothing an
// input holds can move the cursor, recolour, ring, start a line of its own
// or show text in another order than it has. (perf script prints such
// bytes raw.) JSON output is escaped as JSON requires, and those of them
// JSON leaves raw as \u escapes (JSON); bytes written into a recording are
// never changed.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// unsafe reports whether rune r (n bytes long) at the start of a string
// must be escaped.
func unsafe(r rune, n int) bool {
	return r == utf8.RuneError && n <= 1 || r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 ||
		r > 0xa0 && unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// Clean returns s with every control character, DEL and invalid byte
// escaped: \n, \t and \r by name, the others as \xHH.
func Clean(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		escape(&b, s[i:i+n], r, n)
		i += n
	}
	return b.String()
}

// escape writes the rune r, s its bytes, escaped if it must be.
func escape(b *strings.Builder, s string, r rune, n int) {
	switch {
	case !unsafe(r, n):
		b.WriteString(s)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == utf8.RuneError:
		fmt.Fprintf(b, `\x%02x`, s[0])
	case r < 0x100:
		fmt.Fprintf(b, `\x%02x`, r)
	case r < 0x10000:
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		fmt.Fprintf(b, `\U%08x`, r)
	}
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, n) {
			return true
		}
		i += n
	}
	return false
}

// JSON returns the JSON text b (encoding/json's) with every character
// Clean escapes that JSON leaves as it is, DEL, C1 controls and Unicode's
// format characters and line separators, written as a \u escape: the same
// document, safe on a terminal. Such characters can only be in strings.
func JSON(b []byte) []byte {
	var out []byte // nil until something is escaped
	done := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		// encoding/json escapes controls below 0x20 in strings (those
		// left are the document's newlines) and writes invalid UTF-8 as
		// U+FFFD
		if r < 0x20 || r == utf8.RuneError || !unsafe(r, n) {
			i += n
			continue
		}
		out = append(out, b[done:i]...)
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
		done = i
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// Quote returns a file or program name as a message shows it: as it is
// when it is plain (letters, digits and ._-/+,:=@%~), else in double
// quotes with Clean's escapes and with quotes and backslashes escaped, as
// coreutils quotes names, so that a name cannot pass for the rest of the
// message.
func Quote(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '\\' || r == '"' {
			b.WriteByte('\\')
		}
		escape(&b, s[i:i+n], r, n)
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

func isPlain(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/+,:=@%~", r)) {
			return false
		}
	}
	return s != ""
}
