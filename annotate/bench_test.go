package annotate_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
