package annotate_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/annotate"
)

// BenchTextEnv sizes the generated perf script text BenchmarkProfile
// reads, in MiB (default 32): BPFMETA_BENCH_TEXT_MB=1024 for the 1 GB of
// issue 49.
const BenchTextEnv = "BPFMETA_BENCH_TEXT_MB"

// genText is perf script -g text of size bytes, generated as it is read:
// the test recording's samples again and again, each round's threads
// other ones (64 rounds of them), so that the profile has more samples to
// tell apart than the text has stacks.
type genText struct {
	rounds [][]byte
	left   int64
	round  int
	off    int
}

var tidRE = regexp.MustCompile(`(?m)^(a\.test) (\d+) `)

func newGenText(b *testing.B) *genText {
	text := busyText(b)
	g := &genText{}
	for r := range 64 {
		g.rounds = append(g.rounds, tidRE.ReplaceAllFunc(text, func(m []byte) []byte {
			tid, _ := strconv.Atoi(string(tidRE.FindSubmatch(m)[2]))
			return fmt.Appendf(nil, "a.test %d ", tid+r*100000)
		}))
	}
	return g
}

// reset starts the text again, size bytes of it.
func (g *genText) reset(size int64) *genText {
	g.left, g.round, g.off = size, 0, 0
	return g
}

func (g *genText) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	r := g.rounds[g.round]
	n := copy(p, r[g.off:])
	if int64(n) > g.left {
		n = int(g.left)
	}
	g.off += n
	g.left -= int64(n)
	if g.off == len(r) {
		g.off, g.round = 0, (g.round+1)%len(g.rounds)
	}
	if g.left == 0 && n > 0 && p[n-1] != '\n' {
		// end on a whole line
		if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
			n = i + 1
		}
	}
	return n, nil
}

// BenchmarkProfile is --pprof against --folded on the same generated
// text, both read, annotated and written: the time per line of each and
// pprof/folded, their ratio (issue 49: within 2x).
// go test -run - -bench Profile ./annotate
func BenchmarkProfile(b *testing.B) {
	mb := int64(32)
	if s := os.Getenv(BenchTextEnv); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatalf("%s=%s: %v", BenchTextEnv, s, err)
		}
		mb = n
	}
	size := mb << 20
	tab := busyTable(b, "version", "build")
	g := newGenText(b)
	var folded, pprof time.Duration
	var lines int64
	b.SetBytes(2 * size)
	for b.Loop() {
		start := time.Now()
		f := annotate.NewFolder()
		st, err := annotate.Fold(g.reset(size), f, tab)
		if err != nil {
			b.Fatal(err)
		}
		f.WriteTo(io.Discard)
		folded += time.Since(start)
		lines += st.Lines

		start = time.Now()
		p := annotate.NewProfiler()
		if _, err := annotate.Profile(g.reset(size), p, tab); err != nil {
			b.Fatal(err)
		}
		if err := p.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
		pprof += time.Since(start)
	}
	b.ReportMetric(float64(folded.Nanoseconds())/float64(lines), "folded-ns/line")
	b.ReportMetric(float64(pprof.Nanoseconds())/float64(lines), "pprof-ns/line")
	b.ReportMetric(float64(pprof)/float64(folded), "pprof/folded")
}
