package doc_test

import (
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/doc"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestEntryLines pins perf's line of an entry (perf_event__fprintf_bpf_metadata()),
// with and without its index, escaped, and that IsEntryLine knows perf's
// (without a prefix) and no other.
func TestEntryLines(t *testing.T) {
	for _, c := range []struct {
		prefix, key, value string
		i                  int
		want, unindexed    string
		isEntry            bool
	}{
		{"", "version", `"1.0.5"`, 0,
			"  entry 0:              version = \"1.0.5\"\n",
			"  entry:              version = \"1.0.5\"\n", true},
		{"\t", "build", "42", 12,
			"\t  entry 12:                build = 42\n",
			"  entry:                build = 42\n", false},
		{"", "a_key_longer_than_twenty", "{1,0}", 3,
			"  entry 3: a_key_longer_than_twenty = {1,0}\n",
			"  entry: a_key_longer_than_twenty = {1,0}\n", true},
		// what came from the input is escaped: no terminal control
		{"", "k\x1b[2J", "v\nx", 1,
			"  entry 1:             k\\x1b[2J = v\\nx\n",
			"  entry:             k\\x1b[2J = v\\nx\n", true},
		// a key of blanks is none perf writes
		{"", "a b", "1", 0,
			"  entry 0:                  a b = 1\n",
			"  entry:                  a b = 1\n", false},
	} {
		var b, u strings.Builder
		if err := doc.WriteEntry(&b, c.prefix, c.i, c.key, c.value); err != nil {
			t.Fatal(err)
		}
		if err := doc.WriteUnindexedEntry(&u, c.key, c.value); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("WriteEntry(%q, %d, %q, %q) = %q, want %q", c.prefix, c.i, c.key, c.value, b.String(), c.want)
		}
		if u.String() != c.unindexed {
			t.Errorf("WriteUnindexedEntry(%q, %q) = %q, want %q", c.key, c.value, u.String(), c.unindexed)
		}
		line := strings.TrimSuffix(b.String(), "\n")
		if got := perfdata.IsEntryLine([]byte(line)); got != c.isEntry {
			t.Errorf("IsEntryLine(%q) = %v, want %v", line, got, c.isEntry)
		}
		if line := strings.TrimSuffix(u.String(), "\n"); perfdata.IsEntryLine([]byte(line)) {
			t.Errorf("IsEntryLine(%q) of the unindexed form", line)
		}
	}
	for _, line := range []string{"", "  entry ", "  entry 1:", " entry 1: k = v", "  entry x: k = v", "  entry 1:k = v"} {
		if perfdata.IsEntryLine([]byte(line)) {
			t.Errorf("IsEntryLine(%q)", line)
		}
	}
}
