package annotate_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/annotate"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// The cost per line of annotate and of perf script producing the same
// text, for testdata/busy.meta.data (11,028 lines of perf script -g
// output): annotate must cost well under what perf script takes.
// go test -run - -bench 'Annotate|PerfScript' ./annotate

func busyText(b *testing.B) []byte {
	text, err := os.ReadFile(filepath.Join("testdata", "busy.perf61.txt"))
	if err != nil {
		b.Fatal(err)
	}
	return text
}

func reportPerLine(b *testing.B, lines int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
}

func BenchmarkAnnotate(b *testing.B) {
	text := busyText(b)
	tab := busyTable(b, "version", "build")
	lines := bytes.Count(text, []byte("\n"))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := annotate.Run(bytes.NewReader(text), io.Discard, tab); err != nil {
			b.Fatal(err)
		}
	}
	reportPerLine(b, lines)
}

func BenchmarkAnnotateFolded(b *testing.B) {
	text := busyText(b)
	tab := busyTable(b, "version", "build")
	lines := bytes.Count(text, []byte("\n"))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		f := annotate.NewFolder()
		if _, err := annotate.Fold(bytes.NewReader(text), f, tab); err != nil {
			b.Fatal(err)
		}
		f.WriteTo(io.Discard)
	}
	reportPerLine(b, lines)
}

// BenchmarkPerfScript is perf 7.2's perf script of the same recording (its
// records read, symbols resolved, text written), per line of its output,
// its start (reading kallsyms) included: on a recording this small it takes
// most of the time (a 3.3 MB perf record -a -g recording takes 1.2 us a
// line).
func BenchmarkPerfScript(b *testing.B) {
	perf := testkit.PerfModern(b)
	rec := filepath.Join("testdata", "busy.meta.data")
	var lines int
	for b.Loop() {
		out, err := exec.Command(perf, "script", "-i", rec).Output()
		if err != nil {
			b.Fatal(err)
		}
		lines = bytes.Count(out, []byte("\n"))
	}
	reportPerLine(b, lines)
}

// Crafted lines cost what real text costs a byte, within a small factor:
// every line is scanned a bounded number of times, whatever it holds
// (60 KB lines of digits, of " 1x", of blanks before "1x", of "[unknown]
// (bpf_prog_..." without its ")", of " 1.000000:x"). With Go's regular
// expressions, and a ")" looked for from each dso, they cost 6 to 140
// times what real text costs a byte (15 to 31 MB/s, " 1x" 6 MB/s, against
// 880 MB/s; --folded 10 to 16 MB/s against 58 MB/s); now at most 2.2
// times (417 MB/s against 936 MB/s; --folded faster than real text).
// go test -run - -bench 'Crafted' ./annotate
func BenchmarkAnnotateCrafted(b *testing.B) {
	for _, mode := range []string{"", "folded", "pprof"} {
		for _, c := range craftedTexts(b) {
			name := c.name
			if mode != "" {
				name = mode + "/" + name
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(c.text)))
				tab := busyTable(b, "version", "build")
				for b.Loop() {
					var err error
					switch mode {
					case "folded":
						f := annotate.NewFolder()
						_, err = annotate.Fold(bytes.NewReader(c.text), f, tab)
						f.WriteTo(io.Discard)
					case "pprof":
						p := annotate.NewProfiler()
						if _, err = annotate.Profile(bytes.NewReader(c.text), p, tab); err == nil {
							err = p.Write(io.Discard)
						}
					default:
						_, err = annotate.Run(bytes.NewReader(c.text), io.Discard, tab)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

type crafted struct {
	name string
	text []byte
}

// craftedTexts are 4 MB of each crafted line, and of the real text.
func craftedTexts(b *testing.B) []crafted {
	const size = 4 << 20
	line := func(piece string) []byte {
		l := append(bytes.Repeat([]byte(piece), 60_000/len(piece)), '\n')
		return bytes.Repeat(l, size/len(l))
	}
	real := busyText(b)
	return []crafted{
		{"real", bytes.Repeat(real, size/len(real))},
		{"digits", line("7")},
		{"1x", line(" 1x")},
		{"blanks", line("a" + strings.Repeat(" ", 1000) + "1x")},
		{"unknown", line("\tffffffffc0000bf0 [unknown] (bpf_prog_0123456789abcdef")},
		{"colons", line(" 1.000000:x")},
	}
}
