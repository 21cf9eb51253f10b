package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// clean makes text safe to print on a terminal: C0 and C1 control
// characters, DEL and bytes that are not UTF-8 are shown escaped (\x1b,
// \n, \t), as git and ls show them, so that nothing a recording, a
// snapshot or a file name holds can act on the terminal. Everything bpfmeta
// prints as text goes through it (JSON is escaped as JSON requires).
func clean(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// needsEscape reports whether clean changes s.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return true
		}
		i += n
	}
	return false
}

// quoteName is a file or program name as a message shows it: as it is when
// it is plain, else in double quotes with clean's escapes and quotes and
// backslashes escaped, as coreutils quotes names ('%q'-style), so that a
// name cannot pass for the rest of the message.
func quoteName(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/+,:=@%~", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == utf8.RuneError && n <= 1, r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			b.WriteString(clean(s[i : i+n]))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// plural is "1 sample", "2 samples".
func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
