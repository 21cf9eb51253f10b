package annotate

import (
	"bufio"
	"bytes"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/bpfmeta/bpfmeta/internal/budget"
)

// The regular expressions of FlameGraph's stackcollapse-perf.pl (commit
// 41fee1f, 2024), with Perl's \s, \S of a byte string ([\t\n\v\f\r ]).
var (
	// a sample's first line: comm, pid[/tid]
	headerRE = regexp.MustCompile(`^([^\t\n\v\f\r ].+?)[\t\n\v\f\r ]+(\d+)/*(\d+)*[\t\n\v\f\r ]+`)
	// its end: [period] event:
	eventRE = regexp.MustCompile(`:[\t\n\v\f\r ]*(\d+)*[\t\n\v\f\r ]+([^\t\n\v\f\r ]+):[\t\n\v\f\r ]*$`)
	// a frame: pc, symbol, (dso)
	stackRE = regexp.MustCompile(`^[\t\n\v\f\r ]*(\w+)[\t\n\v\f\r ]*(.+) \((.*)\)`)
	goRE    = regexp.MustCompile(`\.\(.*\)\.`)
)

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
	pname       string
	havePname   bool
	period      uint64
	eventFilter string
}

// NewFolder returns an empty Folder.
func NewFolder() *Folder {
	return &Folder{stacks: map[string]uint64{}, mem: budget.Meter{What: "folded stacks"}}
}

// stackCost is what a stack costs beside its bytes: its map entry.
const stackCost = 64

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
	if m := headerRE.FindSubmatch(line); m != nil {
		f.header(line, string(m[1]))
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
	// unshift @stack, @inline: kept reversed, outermost last
	for i := len(inline) - 1; i >= 0; i-- {
		f.stack = append(f.stack, inline[i])
	}
	return nil
}

// endStack counts the stack read, at the blank line that ends a sample:
// unshift @stack, $pname; $collapsed{join(";", @stack)} += $period.
func (f *Folder) endStack() error {
	if !f.named() {
		return nil
	}
	var b strings.Builder
	b.WriteString(f.pname)
	for i := len(f.stack) - 1; i >= 0; i-- {
		b.WriteByte(';')
		b.WriteString(f.stack[i])
	}
	key := b.String()
	if _, ok := f.stacks[key]; !ok {
		f.size += int64(len(key)) + stackCost
		if err := f.mem.Set(f.size); err != nil {
			return err
		}
	}
	f.stacks[key] += f.period
	f.stack = f.stack[:0]
	f.pname, f.havePname = "", false
	return nil
}

// header starts a sample at its header line (comm, and the period and
// event when perf script prints them): samples of an event other than the
// first one seen are not counted, as stackcollapse-perf.pl's default.
func (f *Folder) header(line []byte, comm string) {
	period := ""
	if e := eventRE.FindSubmatch(line); e != nil {
		period = string(e[1])
		event := string(e[2])
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
	if strings.IndexByte(fn, '(') >= 0 && !goRE.MatchString(fn) {
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

// stackLine matches stackRE, ^\s*(\w+)\s*(.+) \((.*)\), and returns its
// symbol and dso: by hand for what perf script prints (the greedy (.+)
// ends at the last " (" before the last ")"), by the regular expression
// where Perl would backtrack into the \w+.
func stackLine(line []byte) (rawfunc, mod string, ok bool) {
	i := 0
	for i < len(line) && isPerlSpace(line[i]) {
		i++
	}
	j := i
	for j < len(line) && isWord(line[j]) {
		j++
	}
	if j == i {
		return "", "", false
	}
	k := j
	for k < len(line) && isPerlSpace(line[k]) {
		k++
	}
	closing := bytes.LastIndexByte(line, ')')
	if closing < 0 {
		return "", "", false
	}
	p := bytes.LastIndex(line[:closing], []byte(" ("))
	if p <= k || bytes.IndexByte(line, '\n') >= 0 {
		m := stackRE.FindSubmatch(line)
		if m == nil {
			return "", "", false
		}
		return string(m[2]), string(m[3]), true
	}
	return string(line[k:p]), string(line[p+2 : closing]), true
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
