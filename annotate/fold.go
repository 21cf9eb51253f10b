package annotate

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/bpfmeta/bpfmeta/internal/budget"
)

// FlameGraph's stackcollapse-perf.pl (commit 41fee1f, 2024) reads lines
// with regular expressions, here matched by hand, each line scanned once
// (headerLine, eventFields, stackFields, goMethod), with Perl's \s and \S
// of a byte string ([\t\n\v\f\r ]): TestLineMatchersAsRegexps checks
// them against the expressions.

// A Folder folds perf script text into stacks as stackcollapse-perf.pl
// does with its defaults (process names, tidied symbols, the first event
// seen; no addresses, inlining or annotations): one line per distinct
// stack, comm;outermost;...;innermost and the sum of its samples' periods,
// sorted. Like stackcollapse-perf.pl it keeps every distinct stack until
// the end, which is what the output is; it draws them from the process's
// memory budget, so that input with endless distinct stacks is refused
// rather than taking the machine's memory.
type Folder struct {
	stacks map[string]uint64
	size   int64
	mem    budget.Meter

	stack       []string // innermost first... as read: outermost last
	stackSize   int64    // what stack takes, drawn from the budget with the stacks
	pname       string
	havePname   bool
	period      uint64
	eventFilter string

	samples, frames int64 // samples counted (their first lines), frames in their stacks
}

// Samples is the number of samples read, of the event folded.
func (f *Folder) Samples() int64 { return f.samples }

// Frames is the number of frames in the samples' stacks: none when the
// text has no callchains (perf record without -g), where
// stackcollapse-perf.pl folds nothing.
func (f *Folder) Frames() int64 { return f.frames }

// NoCallchains reports samples without a stack to fold: the text has no
// callchains (perf record without -g), and the folded output is empty.
func (f *Folder) NoCallchains() bool { return f.samples > 0 && f.frames == 0 }

// NewFolder returns an empty Folder.
func NewFolder() *Folder {
	return &Folder{stacks: map[string]uint64{}, mem: budget.Meter{What: "folded stacks"}}
}

// stackCost is what a stack costs beside its bytes: its map entry.
const stackCost = 64

// frameCost is what a frame of the stack being read costs beside its
// bytes: its string's header and allocation, and its place in a slice
// grown by doubling.
const frameCost = 48

// maxKeptStack is the most frames whose slice is kept for the next stack:
// one of a stack longer than any a kernel unwinds (perf's
// kernel.perf_event_max_stack is 127 by default) is given back.
const maxKeptStack = 4096

// Line takes one line of perf script output (its newline, if any,
// included), as stackcollapse-perf.pl's main loop does.
func (f *Folder) Line(line []byte) error {
	if bytes.HasPrefix(line, []byte("#")) {
		return nil
	}
	line = bytes.TrimSuffix(line, []byte("\n")) // chomp
	if len(line) == 0 {
		return f.endStack()
	}
	if comm, ok := headerLine(line); ok {
		f.header(line, string(comm))
		return nil
	}
	rawfunc, mod, ok := stackLine(line)
	if !ok {
		return nil // warn "Unrecognized line"
	}
	if !f.named() {
		return nil
	}
	rawfunc = rawfunc[:trimOffset([]byte(rawfunc))] // s/\+0x[\da-f]+$//
	if strings.HasPrefix(rawfunc, "(") {
		return nil
	}
	parts := []string{rawfunc}
	if rawfunc == "" {
		parts = nil // Perl's split of "" is an empty list
	} else if strings.Contains(rawfunc, "->") {
		parts = strings.Split(rawfunc, "->")
		for len(parts) > 0 && parts[len(parts)-1] == "" { // Perl's split drops trailing empty fields
			parts = parts[:len(parts)-1]
		}
	}
	var inline []string
	for _, fn := range parts {
		fn = f.tidy(fn, mod)
		if len(inline) > 0 && !strings.Contains(fn, "_[i]") {
			fn += "_[i]"
		}
		inline = append(inline, fn)
	}
	// unshift @stack, @inline: kept reversed, outermost last; charged to
	// the budget as it grows, a stack of millions of frames is refused as
	// it is read
	for i := len(inline) - 1; i >= 0; i-- {
		f.stack = append(f.stack, inline[i])
		f.stackSize += int64(len(inline[i])) + frameCost
	}
	f.frames += int64(len(inline))
	return f.mem.Set(f.size + f.stackSize)
}

// endStack counts the stack read, at the blank line that ends a sample:
// unshift @stack, $pname; $collapsed{join(";", @stack)} += $period.
func (f *Folder) endStack() error {
	if !f.named() {
		return nil
	}
	n := len(f.pname) + len(f.stack)
	for _, fn := range f.stack {
		n += len(fn)
	}
	// the key is made beside the stack
	if err := f.mem.Set(f.size + f.stackSize + int64(n) + stackCost); err != nil {
		return err
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(f.pname)
	for i := len(f.stack) - 1; i >= 0; i-- {
		b.WriteByte(';')
		b.WriteString(f.stack[i])
	}
	key := b.String()
	if _, ok := f.stacks[key]; !ok {
		f.size += int64(len(key)) + stackCost
	}
	f.stacks[key] += f.period
	clear(f.stack)
	f.stack, f.stackSize = f.stack[:0], 0
	if cap(f.stack) > maxKeptStack {
		f.stack = nil
	}
	f.pname, f.havePname = "", false
	return f.mem.Set(f.size)
}

// header starts a sample at its header line (comm, and the period and
// event when perf script prints them): samples of an event other than the
// first one seen are not counted, as stackcollapse-perf.pl's default.
func (f *Folder) header(line []byte, comm string) {
	period := ""
	if p, ev, ok := eventFields(line); ok {
		period = string(p)
		event := string(ev)
		if f.eventFilter == "" {
			f.eventFilter = event
		} else if event != f.eventFilter {
			return
		}
	}
	// if (not $period) { $period = 1 }
	p, err := strconv.ParseUint(period, 10, 64)
	if err != nil || p == 0 {
		p = 1
	}
	f.period = p
	f.pname, f.havePname = strings.ReplaceAll(comm, " ", "_"), true
	f.samples++
}

// tidy is a frame's name as stackcollapse-perf.pl tidies it: [unknown]
// named by its dso mod, $tidy_generic, $tidy_java.
func (f *Folder) tidy(fn, mod string) string {
	if fn == "[unknown]" {
		if mod != "[unknown]" {
			fn = mod
			if i := strings.LastIndexByte(fn, '/'); i >= 0 {
				fn = fn[i+1:]
			}
		} else {
			fn = "unknown"
		}
		fn = "[" + fn + "]"
	}
	// $tidy_generic
	fn = strings.ReplaceAll(fn, ";", ":")
	if strings.IndexByte(fn, '(') >= 0 && !goMethod(fn) {
		fn = cutParen(fn)
	}
	if strings.ContainsAny(fn, `"'`) {
		fn = strings.Map(func(r rune) rune {
			if r == '"' || r == '\'' {
				return -1
			}
			return r
		}, fn)
	}
	// $tidy_java
	if strings.HasPrefix(f.pname, "java") && strings.Contains(fn, "/") {
		fn = strings.TrimPrefix(fn, "L")
	}
	return fn
}

// stackLine returns the symbol and dso of a frame (stackFields).
func stackLine(line []byte) (rawfunc, mod string, ok bool) {
	sym, dso, ok := stackFields(line)
	return string(sym), string(dso), ok
}

// stackFields matches ^\s*(\w+)\s*(.+) \((.*)\) as Perl does and returns
// its symbol and dso: the greedy (.+) ends at the last " (" before the last
// ")"; where that is not after \w+\s*, Perl backtracks into the \s*, then
// into the \w+, leaving (.+) the one byte before the " (". Perl's . is not
// a newline, which a line (without its own) has none of: one that has is
// not a frame.
func stackFields(line []byte) (sym, dso []byte, ok bool) {
	if bytes.IndexByte(line, '\n') >= 0 {
		return nil, nil, false
	}
	i := 0
	for i < len(line) && isPerlSpace(line[i]) {
		i++
	}
	j := i
	for j < len(line) && isWord(line[j]) {
		j++
	}
	k := j
	for k < len(line) && isPerlSpace(line[k]) {
		k++
	}
	closing := bytes.LastIndexByte(line, ')')
	if j == i || closing < 0 {
		return nil, nil, false
	}
	p := bytes.LastIndex(line[:closing], []byte(" ("))
	switch {
	case p > k:
		return line[k:p], line[p+2 : closing], true
	case p >= i+2:
		return line[p-1 : p], line[p+2 : closing], true
	}
	return nil, nil, false
}

// headerLine matches ^([^\s].+?)\s+(\d+)/*(\d+)*\s+, a sample's first line
// (comm, pid[/tid]), and returns its comm: up to the first blanks after
// its first two bytes that are followed by digits, slashes and digits,
// and blanks.
func headerLine(line []byte) ([]byte, bool) {
	h, ok := headerOf(line)
	return h.comm, ok
}

// A header is what headerRE's groups hold of a sample's first line: the
// comm, the pid (or tid), the tid after a slash (nil without one), and
// where the match ends (after the blanks that follow them).
type header struct {
	comm, pid, tid []byte
	end            int
}

// headerOf matches a sample's first line as headerLine does, scanning it
// once.
func headerOf(line []byte) (header, bool) {
	if len(line) < 3 || isPerlSpace(line[0]) || bytes.IndexByte(line, '\n') >= 0 {
		return header{}, false
	}
	for e := 2; e < len(line); {
		for e < len(line) && !isPerlSpace(line[e]) {
			e++
		}
		s := e
		for s < len(line) && isPerlSpace(line[s]) {
			s++
		}
		d := s
		for d < len(line) && isDigit(line[d]) {
			d++
		}
		t := d
		for d > s && t < len(line) && line[t] == '/' {
			t++
		}
		u := t
		for d > s && t < len(line) && isDigit(line[t]) {
			t++
		}
		if d > s && t < len(line) && isPerlSpace(line[t]) {
			h := header{comm: line[:e], pid: line[s:d], end: t}
			if t > u {
				h.tid = line[u:t]
			}
			for h.end < len(line) && isPerlSpace(line[h.end]) {
				h.end++
			}
			return h, true
		}
		e = max(s, t) // no blank between s and where it failed
	}
	return header{}, false
}

// eventFields matches :\s*(\d+)*\s+(\S+):\s*$, the end of a sample's first
// line (its period, and its event), and returns the period ("" without
// one) and the event: the line's last word ends in ':' and follows
// blanks, which follow ':', blanks and digits.
func eventFields(line []byte) (period, event []byte, ok bool) {
	end := len(line)
	for end > 0 && isPerlSpace(line[end-1]) {
		end--
	}
	if end == 0 || line[end-1] != ':' || bytes.IndexByte(line, '\n') >= 0 {
		return nil, nil, false
	}
	r := end - 1
	for r > 0 && !isPerlSpace(line[r-1]) {
		r--
	}
	w := r
	for w > 0 && isPerlSpace(line[w-1]) {
		w--
	}
	d := w
	for d > 0 && isDigit(line[d-1]) {
		d--
	}
	s := d
	for d < w && s > 0 && isPerlSpace(line[s-1]) {
		s--
	}
	if r == end-1 || w == r || s == 0 || line[s-1] != ':' {
		return nil, nil, false
	}
	return line[d:w], line[r : end-1], true
}

// goMethod matches \.\(.*\)\., a Go method's name (pkg.(*T).m), whose
// parenthesis $tidy_generic keeps.
func goMethod(fn string) bool {
	i := strings.Index(fn, ".(")
	return i >= 0 && strings.LastIndex(fn, ").") >= i+2
}

func isPerlSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// named is Perl's truth of $pname: defined, not "" and not "0".
func (f *Folder) named() bool { return f.havePname && f.pname != "" && f.pname != "0" }

// cutParen is s/\((?!anonymous namespace\)).*//: s up to its first "("
// that does not open "(anonymous namespace)".
func cutParen(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '(' && !strings.HasPrefix(s[i+1:], "anonymous namespace)") {
			return s[:i]
		}
	}
	return s
}

// WriteTo writes the folded stacks, sorted as Perl's sort { $a cmp $b }
// sorts them (by bytes), and gives back their memory.
func (f *Folder) WriteTo(w io.Writer) (int64, error) {
	defer f.mem.Close()
	keys := make([]string, 0, len(f.stacks))
	for k := range f.stacks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	bw := bufio.NewWriter(w)
	var n int64
	for _, k := range keys {
		m, _ := bw.WriteString(k)
		bw.WriteByte(' ')
		c, _ := bw.WriteString(strconv.FormatUint(f.stacks[k], 10))
		bw.WriteByte('\n')
		n += int64(m + c + 2)
	}
	return n, bw.Flush()
}
