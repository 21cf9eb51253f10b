package snapshot

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// TestSnapshotErrorsQuoteNothing: an error about a file given as a snapshot
// says the line and the field, and quotes none of its keys, tags,
// addresses or values: the file may be a secret (bpfmeta runs as root).
func TestSnapshotErrorsQuoteNothing(t *testing.T) {
	g := string(testkit.ReadFile(t, snapshotGolden))
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
// from its first bytes, not spooled up to MaxSpool first.
func TestSnapshotDeviceSniffed(t *testing.T) {
	for _, dev := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := os.Stat(dev); err != nil {
			t.Skipf("no %s: %v", dev, err)
		}
		start := time.Now()
		_, err := Open(dev)
		if err == nil || !strings.Contains(err.Error(), "not a bpfmeta snapshot") {
			t.Errorf("%s: %v, want not a bpfmeta snapshot", dev, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: %v to fail: it was read on", dev, d)
		}
	}
}

// TestSnapshotArraysBounded: the arrays of a program (functions, map ids,
// prog_names, entries) are refused past what a program can have, as they
// are decoded: a line of a few MiB of "funcs":[{},{},...] decoded whole
// took 319 MiB. The error says the line and the array.
func TestSnapshotArraysBounded(t *testing.T) {
	g := string(testkit.ReadFile(t, snapshotGolden))
	many := func(elem string, n int) string { return strings.TrimSuffix(strings.Repeat(elem+",", n), ",") }
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"funcs", `"funcs":[`, `"funcs":[` + many("{}", 1<<20) + `,`, "more than 256 functions"},
		{"map_ids", `"map_ids":[29]`, `"map_ids":[` + many("1", 1<<20) + `]`, "more than 1024 map ids"},
		{"prog_names", `"prog_names":[`, `"prog_names":[` + many(`""`, 1<<20) + `,`, "more than 256 prog_names"},
		{"entries", `"entries":[`, `"entries":[` + many("{}", 203) + `,`, "more than 202 metadata entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Replace(g, tc.old, tc.new, 1)
			if in == g {
				t.Fatalf("the golden snapshot has no %s", tc.old)
			}
			_, err := openBytes([]byte(in))
			if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error of line 2 that says %q", err, tc.want)
			}
		})
	}
}

// TestSnapshotV1Budget: a version 1 snapshot is one JSON document, read
// value by value: a value longer than a program line may be (one program
// of 32 MiB) is refused with the line it starts on, having been read no
// further than that; a document of many programs of a usual size is read.
func TestSnapshotV1Budget(t *testing.T) {
	head := "{\n  \"format_version\": 1,\n  \"programs\": [\n"
	big := head + `{"id":1,"funcs":[` + strings.Repeat("{},", 16<<20/3) + "{}]}\n]}\n"
	_, err := openBytes([]byte(big))
	if err == nil || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "longer than 4 MiB") {
		t.Errorf("a program of 16 MiB: %v, want line 4, longer than 4 MiB", err)
	}
	var b strings.Builder
	b.WriteString(head)
	const n = 100_000
	for i := range n {
		fmt.Fprintf(&b, "    {\"id\": %d, \"tag\": \"e21be2de8fc54252\", \"funcs\": [{\"addr\": \"0x1\"}]},\n", i+1)
	}
	b.WriteString("    {\"id\": 0}\n  ]\n}\n")
	s, err := openBytes([]byte(b.String()))
	if err != nil || s.Len() != n+1 {
		t.Fatalf("%d programs of a usual size: %v", n+1, err)
	}
}
