package annotate

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// The regular expressions the line matchers stand for: perf script's
// lines, and FlameGraph's stackcollapse-perf.pl's (Perl's \s of a byte
// string).
var (
	sampleRE        = regexp.MustCompile(`^[^ \t].*?[ \t]+-?\d+(/-?\d+)?([ \t]|$)`)
	recordRE        = regexp.MustCompile(`^PERF_RECORD_[A-Z0-9_]+( |$)`)
	metadataEntryRE = regexp.MustCompile(`^  entry \d+: +[^ ]+ = `)
	headerRE        = regexp.MustCompile(`^([^\t\n\v\f\r ].+?)[\t\n\v\f\r ]+(\d+)/*(\d+)*[\t\n\v\f\r ]+`)
	eventRE         = regexp.MustCompile(`:[\t\n\v\f\r ]*(\d+)*[\t\n\v\f\r ]+([^\t\n\v\f\r ]+):[\t\n\v\f\r ]*$`)
	stackRE         = regexp.MustCompile(`^[\t\n\v\f\r ]*(\w+)[\t\n\v\f\r ]*(.+) \((.*)\)`)
	goRE            = regexp.MustCompile(`\.\(.*\)\.`)
)

// pieces are what the random lines are made of: the bytes and words the
// expressions turn on. A byte outside ASCII is one that is not UTF-8, which
// Go's expressions take as one character, as Perl takes every byte of a
// line read without an encoding (and the matchers do): Go's . would take
// the two bytes of é as one.
var pieces = []string{" ", " ", "  ", "\t", "\r", "\v", "\f", "1", "23", "-", "/", ":", ".", "(", ")", " (", ").", ".(",
	"a", "_", "Z", "x", "\xe9", "\xff", "PERF_RECORD_", "  entry ", " = ", "=", "cpu-clock:", "[000]", "0x1f"}

func randomLine(r *rand.Rand) []byte {
	var b []byte
	for range r.IntN(14) {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return b
}

// Each matcher matches what its regular expression matches (Go's
// leftmost-first submatches are Perl's), on 300,000 random lines of
// the bytes that matter and on perf script's own.
func TestLineMatchersAsRegexps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lines := [][]byte{[]byte("a.test 15810  3719.246015:    1001001 cpu-clock:ppp: "), []byte("java 1/2 x"), []byte("\t4c1db abc (x) y (z)"), []byte("1a  (x)"), []byte("ab  (x)")}
	for range 300_000 {
		lines = append(lines, randomLine(r))
	}
	for _, line := range lines {
		if got, want := sampleLine(line), sampleRE.Match(line); got != want {
			t.Errorf("sampleLine(%q) = %v, want %v", line, got, want)
		}
		if got, want := recordLine(line), recordRE.Match(line); got != want {
			t.Errorf("recordLine(%q) = %v, want %v", line, got, want)
		}
		if got, want := perfdata.IsEntryLine(line), metadataEntryRE.Match(line); got != want {
			t.Errorf("perfdata.IsEntryLine(%q) = %v, want %v", line, got, want)
		}
		comm, ok := headerLine(line)
		if m := headerRE.FindSubmatch(line); ok != (m != nil) || ok && !bytes.Equal(comm, m[1]) {
			t.Errorf("headerLine(%q) = %q %v, want %q", line, comm, ok, m)
		}
		period, event, ok := eventFields(line)
		if m := eventRE.FindSubmatch(line); ok != (m != nil) || ok && (!bytes.Equal(period, m[1]) || !bytes.Equal(event, m[2])) {
			t.Errorf("eventFields(%q) = %q %q %v, want %q", line, period, event, ok, m)
		}
		sym, dso, ok := stackFields(line)
		if m := stackRE.FindSubmatch(line); ok != (m != nil) || ok && (!bytes.Equal(sym, m[2]) || !bytes.Equal(dso, m[3])) {
			t.Errorf("stackFields(%q) = %q %q %v, want %q", line, sym, dso, ok, m)
		}
		if got, want := goMethod(string(line)), goRE.Match(line); got != want {
			t.Errorf("goMethod(%q) = %v, want %v", line, got, want)
		}
	}
}
