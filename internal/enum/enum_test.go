package enum

import "testing"

type color int

type kind uint16

func TestString(t *testing.T) {
	colors := []string{1: "red", 2: "green"}
	kinds := []string{"UNKNOWN", "BPF"}
	for _, tc := range []struct{ got, want string }{
		{String(colors, color(1), "color"), "red"},
		{String(colors, color(2), "color"), "green"},
		{String(colors, color(0), "color"), "color(0)"}, // the table's gap
		{String(colors, color(3), "color"), "color(3)"},
		{String(colors, color(-1), "color"), "color(-1)"},
		{String(kinds, kind(0), "kind"), "UNKNOWN"},
		{String(kinds, kind(65535), "kind"), "kind(65535)"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
