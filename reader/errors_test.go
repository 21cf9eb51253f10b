package reader_test

import (
	"errors"
	"testing"

	"github.com/bpfmeta/bpfmeta/reader"
)

// TestFormatErrorText: the one place that says where in the input an error
// is (dump's malformed records say it with a FormatError too): the file of a
// directory recording first, then the message, then the offset, and for a
// record inside a compressed one both the offset in the decompressed
// stream and the compressed record's.
func TestFormatErrorText(t *testing.T) {
	for _, c := range []struct {
		name string
		err  reader.FormatError
		want string
	}{
		{"plain", reader.FormatError{Offset: 0x1a8, Outer: -1, Msg: "bad record size 0 (type SAMPLE)"},
			"bad record size 0 (type SAMPLE) at 0x1a8"},
		{"offset 0", reader.FormatError{Offset: 0, Outer: -1, Msg: "empty input (0 bytes)"},
			"empty input (0 bytes) at 0x0"},
		{"compressed", reader.FormatError{Offset: 0x40, Outer: 0x2000, Msg: "KSYMBOL record of 16 bytes, want at least 24"},
			"KSYMBOL record of 16 bytes, want at least 24 at decompressed offset 0x40 (data of the compressed record at 0x2000)"},
		{"compressed at 0", reader.FormatError{Offset: 0x8, Outer: 0, Msg: "m"},
			"m at decompressed offset 0x8 (data of the compressed record at 0x0)"},
		{"file", reader.FormatError{Offset: 0x10, Outer: -1, Msg: "m", File: "data.3"},
			"data.3: m at 0x10"},
		{"file compressed", reader.FormatError{Offset: 0x10, Outer: 0x100, Msg: "m", File: "data.3"},
			"data.3: m at decompressed offset 0x10 (data of the compressed record at 0x100)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.err.Err = reader.ErrCorrupt
			if got := c.err.Error(); got != c.want {
				t.Errorf("Error() = %q, want %q", got, c.want)
			}
			if !errors.Is(&c.err, reader.ErrCorrupt) {
				t.Errorf("errors.Is(%v, ErrCorrupt) = false", &c.err)
			}
		})
	}
}
