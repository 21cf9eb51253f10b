package inject_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog/live"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

const (
	// maxInjectRSS bounds bpfmeta inject's peak memory in pipe mode
	// (issue 5, Done-when 3 and 5).
	maxInjectRSS = 64 << 20
	// bigStreamSize is the least size of the stream the memory test feeds
	// through bpfmeta inject: well above maxInjectRSS.
	bigStreamSize = 256 << 20
	// copyBufSize is the buffer of the test's stream copies.
	copyBufSize = 1 << 16
)

// statsMetadataRE is perf report --stats' line for BPF_METADATA.
var statsMetadataRE = regexp.MustCompile(`(?m)^\s*BPF_METADATA events:\s+(\d+)`)

// TestPipeEndToEnd (Done-when 3): `perf record -o - ... | bpfmeta inject |
// perf-modern report -i - --stats` works and counts the added records, and
// bpfmeta's peak RSS stays under 64 MiB, also on a stream of 256 MiB made
// from that recording.
func TestPipeEndToEnd(t *testing.T) {
	perfStock, perfModern, bpffs := requireLive(t)
	bin := buildBpfmeta(t)
	before := loadFixtures(t, filepath.Join(bpffs, "before"), "meta", "nometa")
	pin := filepath.Join(bpffs, "during")
	dir := t.TempDir()
	// A few hundred samples of a shell loop, then the programs loaded during.
	workload := "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; " + loadCommand(t, pin, "meta", "nometa") + " && sleep 0.2"

	rec := exec.Command(perfStock, "record", "-N", "-B", "-F", "999", "-o", "-", "--", "sh", "-c", workload)
	inj, injRSS := timed(t, bin, "inject")
	rep := exec.Command(perfModern, "report", "-i", "-", "--stats")
	var recErr, injErr, repOut, repErr bytes.Buffer
	rec.Stderr, inj.Stderr, rep.Stdout, rep.Stderr = &recErr, &injErr, &repOut, &repErr
	// perf record | tee raw | bpfmeta inject | tee injected | perf report
	recOut, err := rec.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	injIn, injOut := testkit.Pipes(t, inj)
	repIn, err := rep.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	rawPath, injectedPath := filepath.Join(dir, "raw.pipe.data"), filepath.Join(dir, "injected.pipe.data")
	tee := func(dst io.WriteCloser, path string, src io.Reader) chan error {
		done := make(chan error, 1)
		go func() {
			f, err := os.Create(path)
			if err == nil {
				_, err = io.CopyBuffer(io.MultiWriter(dst, f), src, make([]byte, copyBufSize))
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			dst.Close()
			io.Copy(io.Discard, src)
			done <- err
		}()
		return done
	}
	for _, c := range []*exec.Cmd{rep, inj, rec} {
		if err := c.Start(); err != nil {
			t.Fatalf("%s: %v", c.Path, err)
		}
		t.Cleanup(func() {
			if c.ProcessState == nil {
				c.Process.Kill()
				c.Wait()
			}
		})
	}
	tee1, tee2 := tee(injIn, rawPath, recOut), tee(repIn, injectedPath, injOut)
	for _, e := range []chan error{tee1, tee2} {
		if err := <-e; err != nil {
			t.Fatalf("copying the stream: %v", err)
		}
	}
	for _, c := range []struct {
		cmd *exec.Cmd
		log *bytes.Buffer
	}{{rec, &recErr}, {inj, &injErr}, {rep, &repErr}} {
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", c.cmd.Path, err, c.log)
		}
	}
	checkRSS(t, injRSS, "perf record -o - | bpfmeta inject")

	// What perf report counted is what the stream has: the records of the
	// programs loaded before after their BPF_EVENTs, those of the ones
	// loaded during at the end.
	out := readRecording(t, injectedPath)
	if out.Format != perfdata.FormatPipe {
		t.Fatalf("bpfmeta inject wrote a %v recording to a pipe", out.Format)
	}
	n := len(allMetadata(out))
	m := statsMetadataRE.FindSubmatch(repOut.Bytes())
	if m == nil {
		t.Fatalf("perf-modern report --stats counted no BPF_METADATA records:\n%s\n%s", repOut.String(), repErr.String())
	}
	if got, _ := strconv.Atoi(string(m[1])); got != n {
		t.Errorf("perf-modern report --stats counted %d BPF_METADATA records, the stream has %d", got, n)
	}
	live, err := live.New()
	if err != nil {
		t.Fatal(err)
	}
	funcs := func(ids []uint32) int {
		n := 0
		for _, id := range ids {
			p, err := live.Program(id)
			if err != nil {
				t.Fatalf("program %d: %v", id, err)
			}
			if p.Metadata != nil {
				n += len(p.Funcs)
			}
		}
		return n
	}
	nBefore := 0
	for _, id := range before {
		nBefore += len(metadataAfter(t, out, id))
	}
	during := pinnedIDs(t, pin)
	if want := funcs(before); nBefore != want {
		t.Errorf("%d records after the BPF_EVENTs of the programs loaded before, want %d", nBefore, want)
	}
	if got, want := len(tailMetadata(t, out)), funcs(during); got != want {
		t.Errorf("%d records at the end, want %d for the programs loaded during the recording", got, want)
	}
	t.Logf("perf report --stats: %d BPF_METADATA records; bpfmeta peak RSS %d KiB", n, rss(t, injRSS)>>10)

	bigStream(t, bin, rawPath, funcs(during))
}

// bigStream feeds bpfmeta inject a stream of bigStreamSize bytes: the
// recording at raw with its SAMPLE records repeated before its last
// FINISHED_ROUND, and checks the output as it streams by and the peak RSS.
func bigStream(t *testing.T, bin, raw string, wantTail int) {
	t.Helper()
	in := readRecording(t, raw)
	top := in.Top()
	last := -1
	var block []byte
	samples := 0
	for i, x := range top {
		switch x.Type {
		case perfdata.RecordFinishedRound:
			last = i
		case perfdata.RecordSample:
			block = append(block, x.Raw...)
			samples++
		}
	}
	if last < 0 || samples == 0 {
		t.Fatalf("%s: %d samples, last FINISHED_ROUND at %d: nothing to repeat", raw, samples, last)
	}
	// The repeated block: the recording's samples, then a FINISHED_ROUND.
	for len(block) < copyBufSize {
		block = append(block, block...)
	}
	fr := top[last].Raw
	block = append(block, fr...)
	samplesPerBlock := 0
	for off := 0; off < len(block); {
		h := perfdata.DecodeEventHeader(block[off:], in.Order)
		if h.Type == perfdata.RecordSample {
			samplesPerBlock++
		}
		off += int(h.Size)
	}

	inj, injRSS := timed(t, bin, "inject")
	var injErr bytes.Buffer
	inj.Stderr = &injErr
	stdin, stdout := testkit.Pipes(t, inj)
	if err := inj.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if inj.ProcessState == nil {
			inj.Process.Kill()
			inj.Wait()
		}
	})
	blocks := 0
	fed := make(chan error, 1)
	go func() {
		var err error
		w := bufio.NewWriterSize(stdin, copyBufSize)
		write := func(b []byte) {
			if err == nil {
				_, err = w.Write(b)
			}
		}
		write(perfdata.PipeHeader(in.Order))
		for _, x := range top[:last] {
			write(x.Raw)
		}
		for size := 0; size < bigStreamSize && err == nil; size += len(block) {
			write(block)
			blocks++
		}
		for _, x := range top[last:] {
			write(x.Raw)
		}
		write(in.Trailing)
		if err == nil {
			err = w.Flush()
		}
		stdin.Close()
		fed <- err
	}()
	r, err := reader.NewStream(bufio.NewReaderSize(stdout, copyBufSize), reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[perfdata.RecordType]int{}
	tail := 0
	for r.Next() {
		typ := r.Record().Header.Type
		counts[typ]++
		switch typ {
		case perfdata.RecordFinishedRound:
			tail = 0
		case perfdata.RecordBPFMetadata:
			tail++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("reading bpfmeta inject's output: %v", err)
	}
	io.Copy(io.Discard, stdout)
	if err := <-fed; err != nil {
		t.Fatalf("feeding bpfmeta inject: %v", err)
	}
	if err := inj.Wait(); err != nil {
		t.Fatalf("bpfmeta inject: %v\n%s", err, injErr.String())
	}
	if want := samples + blocks*samplesPerBlock; counts[perfdata.RecordSample] != want {
		t.Errorf("the output has %d SAMPLE records, want %d", counts[perfdata.RecordSample], want)
	}
	if tail != wantTail {
		t.Errorf("the output ends in %d BPF_METADATA records, want %d", tail, wantTail)
	}
	checkRSS(t, injRSS, "bpfmeta inject of a 256 MiB stream")
	t.Logf("%d MiB stream (%d records): bpfmeta peak RSS %d KiB", blocks*len(block)>>20, blocks*samplesPerBlock, rss(t, injRSS)>>10)
}

// timeCmd reports a command's peak RSS from its rusage (wait4).
const timeCmd = "/usr/bin/time"

// timed returns the command bin args run under timeCmd, which writes the
// peak RSS (KiB) to the returned file. The test cannot take it from its own
// child's rusage: Go starts children with vfork (CLONE_VM), and the kernel
// folds the parent's RSS high-water mark into the child's ru_maxrss at
// exec, so a child of a 100 MiB test reports at least 100 MiB. timeCmd
// forks, so its child's ru_maxrss is the child's own.
func timed(t *testing.T, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	if _, err := os.Stat(timeCmd); err != nil {
		t.Fatalf("measuring peak RSS needs %s (apt-get install time): %v", timeCmd, err)
	}
	out := filepath.Join(t.TempDir(), "maxrss")
	return exec.Command(timeCmd, append([]string{"-o", out, "-f", "%M", bin}, args...)...), out
}

// rss is the peak RSS in bytes that timed's file records.
func rss(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kib, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %q: %v", timeCmd, b, err)
	}
	return kib << 10
}

func checkRSS(t *testing.T, path, what string) {
	t.Helper()
	if n := rss(t, path); n >= maxInjectRSS {
		t.Errorf("%s: peak RSS %d KiB, want under %d KiB", what, n>>10, maxInjectRSS>>10)
	}
}
