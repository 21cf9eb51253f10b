package bpfprog

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestSnapshotErrorsQuoteNothing: an error about a file given as a snapshot
// says the line and the field, and quotes none of its keys, tags,
// addresses or values: the file may be a secret (bpfmeta runs as root).
func TestSnapshotErrorsQuoteNothing(t *testing.T) {
	golden, err := os.ReadFile(snapshotGolden)
	if err != nil {
		t.Fatal(err)
	}
	g := string(golden)
	lines := strings.SplitAfter(g, "\n")
	const secret = "S3cr3t"
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"tag", strings.Replace(g, `"tag":"e21be2de8fc54252"`, `"tag":"`+secret+`"`, 1), []string{"line 2", "tag"}},
		{"function tag", strings.Replace(g, `"tag":"5d126c929afd31f7"`, `"tag":"`+secret+`0123456789"`, 1), []string{"line 2", "funcs.tag"}},
		{"address", strings.Replace(g, `"addr":"0xffffffffc0023054"`, `"addr":"0x`+secret+`"`, 1), []string{"line 2", "funcs[0].addr"}},
		{"address without 0x", strings.Replace(g, `"addr":"0xffffffffc0023054"`, `"addr":"`+secret+`"`, 1), []string{"line 2", "funcs[0].addr"}},
		{"type", strings.Replace(g, `"type":"socket_filter"`, `"type":"`+secret+`"`, 1), []string{"line 2", "type"}},
		{"a number for an id", strings.Replace(g, `"id":97`, `"id":-7`+strings.Repeat("7", 6), 1), []string{"line 2", "id"}},
		{"syntax", lines[0] + `{"program":` + secret + `}` + "\n", []string{"line 2", "byte"}},
		{"v1 key", "{\n  \"format_version\": 1, \"" + secret + "\": [" + secret + "]}", []string{"field"}},
		{"v1 tag", "{\n  \"format_version\": 1, \"programs\": [{\"id\":1,\"tag\":\"" + secret + "\"}]}", []string{"program 0", "tag"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openBytes([]byte(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			for _, bad := range []string{secret, "S'", "'S", "7777"} {
				if strings.Contains(msg, bad) {
					t.Errorf("%q quotes the file (%q)", msg, bad)
				}
			}
		})
	}
}

// TestSnapshotDeviceSniffed: a snapshot path that is an endless device
// (/dev/zero) or any stream that does not start as a snapshot is refused
// from its first bytes, not spooled up to MaxSnapshotSpool first.
func TestSnapshotDeviceSniffed(t *testing.T) {
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err != nil {
			t.Skipf("no %s: %v", dev, err)
		}
		start := time.Now()
		_, err := ReadSnapshotFile(dev)
		if err == nil || !strings.Contains(err.Error(), "not a bpfmeta snapshot") {
			t.Errorf("%s: %v, want not a bpfmeta snapshot", dev, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: %v to fail: it was read on", dev, d)
		}
	}
}
