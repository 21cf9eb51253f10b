package annotate

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/bpfmeta/bpfmeta/perfdata"
)

// MaxLine is the longest line read whole. perf script's lines are far
// shorter (a frame: an address, a symbol of at most KSYM_NAME_LEN, a dso
// path); a longer line is passed on a piece at a time, unchanged and
// counted as not parsed, so that memory does not grow with the input.
const MaxLine = 64 << 10

// Stats counts what Run read.
type Stats struct {
	Lines     int64 // lines read
	Annotated int64 // frames given a label
	Ambiguous int64 // of them, labelled Ambiguous
	// NotInRecording counts the frames labelled NotInRecording, of the
	// Annotated.
	NotInRecording int64
	// Unparsed counts the lines that are not perf script output: not a
	// comment, an empty line, a sample's first line or a frame.
	Unparsed int64
}

// MostlyUnparsed reports text of which more than half the lines are not
// perf script output: annotate was given something else (a recording,
// another tool's text), and its output is not what was meant.
func (st Stats) MostlyUnparsed() bool { return st.Lines > 0 && st.Unparsed*2 > st.Lines }

// OftenNotInRecording reports that more than 1% of the frames labelled lie
// in no load of their name in the recording: the text may come from
// another recording, or its times are not perf's (perf script --reltime,
// --deltatime). A frame now and then is a sample perf read before the
// function's KSYMBOL.
func (st Stats) OftenNotInRecording() bool { return st.NotInRecording*100 > st.Annotated }

// LineWriter takes lines as Run reads them (the folded stacks' Folder).
type LineWriter interface {
	Line(line []byte) error
}

// Run reads perf script text from r and writes it to w with every BPF
// function frame labelled (Annotate). Every other byte is written as read.
func Run(r io.Reader, w io.Writer, t *Table) (Stats, error) {
	return run(r, bufio.NewWriterSize(w, 64<<10), nil, t)
}

// Fold reads perf script text from r and hands f its lines, every BPF
// function frame labelled.
func Fold(r io.Reader, f *Folder, t *Table) (Stats, error) {
	return run(r, nil, f, t)
}

func run(r io.Reader, bw *bufio.Writer, lw LineWriter, t *Table) (Stats, error) {
	l := liner{t: t, bw: bw, lw: lw}
	br := bufio.NewReaderSize(r, MaxLine)
	long := false // within a line longer than MaxLine
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			var werr error
			switch {
			case errors.Is(err, bufio.ErrBufferFull) || long:
				// a piece of a long line: passed on as it is
				if !long {
					l.st.Lines++
					l.st.Unparsed++
				}
				long = errors.Is(err, bufio.ErrBufferFull)
				if lw == nil {
					// stackcollapse-perf.pl has no frame this long; the
					// folder sees none of it
					_, werr = bw.Write(line)
				}
			default:
				werr = l.line(line)
			}
			if werr != nil {
				return l.st, werr
			}
		}
		switch {
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			if bw != nil {
				return l.st, bw.Flush()
			}
			return l.st, nil
		default:
			return l.st, err
		}
	}
}

// A liner annotates whole lines, one after the other, and counts them.
type liner struct {
	t   *Table
	bw  *bufio.Writer
	lw  LineWriter
	st  Stats
	out []byte
	// at is the time of the sample whose lines are read: its first line's
	// (perf script's default prints it; a callchain's frames follow on
	// lines that start with a tab), until the blank line that ends it.
	at textTime
}

func (l *liner) line(line []byte) error {
	l.st.Lines++
	switch body := lineBody(line); {
	case len(body) == 0:
		l.at = textTime{}
	case body[0] != '\t':
		l.at = sampleTime(body)
	}
	var ok bool
	var label string
	l.out, ok, label = l.t.annotate(l.out[:0], line, l.at)
	switch label {
	case "":
	case Ambiguous:
		l.st.Ambiguous++
	case NotInRecording:
		l.st.NotInRecording++
	}
	if !ok {
		l.st.Unparsed++
	}
	if label != "" {
		l.st.Annotated++
	}
	if l.lw != nil {
		return writeLine(l.lw, l.out, label)
	}
	_, err := l.bw.Write(l.out)
	return err
}

// lineBody is line without its newline, and without a carriage return
// before it (text that went through a CRLF tool): the bytes written stay
// those read.
func lineBody(line []byte) []byte {
	return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
}

// sampleTime is the time a sample's first line prints, as perf's
// perf_sample__fprintf_start() does: " %5lu.%06lu: " (or %09lu with
// --ns), seconds on perf's clock; the first such field of the line.
func sampleTime(line []byte) textTime {
	for c := 0; c < len(line); c++ {
		if line[c] != ':' || c+1 < len(line) && !isBlank(line[c+1]) {
			continue
		}
		f := c
		for f > 0 && isDigit(line[f-1]) {
			f--
		}
		frac := c - f
		if frac != 6 && frac != 9 || f < 2 || line[f-1] != '.' {
			continue
		}
		s := f - 1
		for s > 0 && isDigit(line[s-1]) {
			s--
		}
		if s == f-1 || f-1-s > 10 || s > 0 && !isBlank(line[s-1]) {
			continue
		}
		secs, _ := strconv.ParseUint(string(line[s:f-1]), 10, 64)
		ns, _ := strconv.ParseUint(string(line[f:c]), 10, 64)
		if frac == 6 {
			lo := secs*1e9 + ns*1e3
			return textTime{lo, lo + 999, true}
		}
		lo := secs*1e9 + ns
		return textTime{lo, lo, true}
	}
	return textTime{}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// Annotate returns line (with its newline, if any) with the label of its
// BPF function frame, appended to dst, whether the line is perf script
// output, and whether it got a label.
//
// A frame is what perf's sample__fprintf_callchain() and
// sample__fprintf_sym() print: [ip ]sym[+0xoff][ (dso)], the symbol after
// the address (and a space), or first on the line after blanks when -F has
// no ip. The label goes right after the symbol, before +0x..., which
// stackcollapse-perf.pl strips from the end of a symbol. A frame whose
// symbol is [unknown] and whose dso is a BPF function (perf names the dso
// of a JITed function as its symbol) gets the label inside the dso's
// parentheses, so that stackcollapse-perf.pl's [dso] frame carries it.
// The frame's address, when perf printed it, tells loads of one function
// name apart (Table.SetLoads).
func (t *Table) Annotate(dst, line []byte) ([]byte, bool) {
	out, _, label := t.annotate(dst, line, textTime{})
	return out, label != ""
}

var (
	bpfProg = []byte("bpf_prog_")
	unknown = []byte("[unknown] (")
)

func (t *Table) annotate(dst, line []byte, at textTime) (out []byte, parsed bool, label string) {
	body := lineBody(line)
	parsed = perfScriptLine(body)
	closing := -1 // the first ')' at or after the dso looked at: each byte looked for once
	for off := 0; ; {
		i := bytes.Index(body[off:], bpfProg)
		if i < 0 {
			break
		}
		p := off + i
		off = p + len(bpfProg)
		if !progSymbol(body[p:]) {
			continue
		}
		var end int // where the symbol (without +0x...) ends
		var ip uint64
		var hasIP bool // the frame's address, before its symbol
		switch {
		case p > 0 && body[p-1] == '(' && p >= len(unknown) && bytes.Equal(body[p-len(unknown):p], unknown) && symbolAt(body, p-len(unknown)):
			if closing < p {
				if closing = bytes.IndexByte(body[p:], ')'); closing >= 0 {
					closing += p
				} else {
					closing = len(body)
				}
			}
			if closing == len(body) {
				continue
			}
			end = closing
			ip, hasIP = addressBefore(body, p-len(unknown))
		case symbolAt(body, p):
			e := bytes.IndexAny(body[p:], " \t")
			if e < 0 {
				e = len(body) - p
			}
			end = p + trimOffset(body[p:p+e])
			ip, hasIP = addressBefore(body, p)
		default:
			continue
		}
		l := t.labelAt(body[p:end], ip, hasIP, at)
		if l == "" {
			break
		}
		dst = append(dst, line[:end]...)
		dst = append(dst, l...)
		return append(dst, line[end:]...), parsed, l
	}
	return append(dst, line...), parsed, ""
}

// progSymbol reports whether b starts with a name of a JITed function,
// perfdata.ParseBPFProgName's bpf_prog_<tag>[_<name>], ended in perf
// script's text by '+' (an offset), a blank or ')' (an unnamed function's
// dso, [unknown] (bpf_prog_<tag>)).
func progSymbol(b []byte) bool {
	n := min(len(b), perfdata.BPFProgNamePrefixLen+1)
	if i := bytes.IndexAny(b[:n], "+ \t)"); i >= 0 {
		n = i
	}
	_, _, ok := perfdata.ParseBPFProgName(b[:n])
	return ok
}

// symbolAt reports whether a symbol starts at p: after an address and a
// space, or after nothing but blanks.
func symbolAt(b []byte, p int) bool {
	if p == 0 || b[p-1] != ' ' && b[p-1] != '\t' {
		return false
	}
	q := p - 1
	for q > 0 && (b[q-1] == ' ' || b[q-1] == '\t') {
		q--
	}
	if q == 0 {
		return true // only blanks before it
	}
	if b[p-1] != ' ' {
		return false
	}
	h := p - 1
	for h > 0 && isHex(b[h-1]) {
		h--
	}
	return h < p-1 && (h == 0 || b[h-1] == ' ' || b[h-1] == '\t')
}

// addressBefore returns the address right before the symbol at p (ip
// sym, as perf prints a frame: "%16" PRIx64 and a space), if there is one.
func addressBefore(b []byte, p int) (uint64, bool) {
	if p == 0 || b[p-1] != ' ' {
		return 0, false
	}
	h := p - 1
	for h > 0 && isHex(b[h-1]) {
		h--
	}
	if h == p-1 || p-1-h > 16 {
		return 0, false
	}
	var ip uint64
	for _, c := range b[h : p-1] {
		ip <<= 4
		if c <= '9' {
			ip |= uint64(c - '0')
		} else {
			ip |= uint64(c - 'a' + 10)
		}
	}
	return ip, true
}

// trimOffset returns the length of sym without a +0x<hex> suffix (perf
// script -F +symoff, and its default with callchains).
func trimOffset(sym []byte) int {
	i := bytes.LastIndex(sym, []byte("+0x"))
	if i < 0 || i+3 == len(sym) {
		return len(sym)
	}
	for _, c := range sym[i+3:] {
		if !isHex(c) {
			return len(sym)
		}
	}
	return i
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// perfScriptLine reports whether line (without its newline) is a line of
// perf script output: empty, a comment (perf script --header), a frame
// (blanks, an address, a space and more; or blanks and a symbol), a
// sample's first line (a name, then a pid or pid/tid), a frame's source
// line, or a record printed without a sample's header.
func perfScriptLine(line []byte) bool {
	if len(line) == 0 || line[0] == '#' {
		return true
	}
	if isBlank(line[0]) {
		i := 0
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		h := i
		for h < len(line) && isHex(line[h]) {
			h++
		}
		if h > i && h+1 < len(line) && line[h] == ' ' {
			return true // a frame: ip sym...
		}
		// a frame without an address, sym (dso); a sample's first line,
		// which perf script right-aligns (comm in %16s); a frame's source
		// line (-F +srcline); an entry of a BPF_METADATA record
		_, _, frame := stackFields(line)
		return srcline(line) || frame || sampleLine(line[i:]) || perfdata.IsEntryLine(line)
	}
	return sampleLine(line) || recordLine(line)
}

// The lines perf script prints are told by hand, each scanned once (no
// regular expression runs on untrusted lines: Go's are linear, but at a
// tenth of the rate of real text on crafted lines); what each matches
// is written as the regular expression it is, which
// TestLineMatchersAsRegexps checks them against.

// sampleLine is a sample's first line, ^[^ \t].*?[ \t]+-?\d+(/-?\d+)?([ \t]|$):
// comm, then pid or pid/tid, -1 where perf knows none (perf script's
// ":-1    -1" for a sample of no thread).
func sampleLine(line []byte) bool {
	if len(line) == 0 || isBlank(line[0]) {
		return false
	}
	for e := 1; e < len(line); {
		w := e // the blanks after comm, and what follows them
		for w < len(line) && !isBlank(line[w]) {
			w++
		}
		s := w
		for s < len(line) && isBlank(line[s]) {
			s++
		}
		if s == w {
			return false
		}
		d, ok := signedDigits(line, s)
		if ok && d < len(line) && line[d] == '/' {
			if t, ok := signedDigits(line, d+1); ok && (t == len(line) || isBlank(line[t])) {
				return true
			}
		}
		if ok && (d == len(line) || isBlank(line[d])) {
			return true
		}
		e = s // no blank between s and where the digits failed
	}
	return false
}

// signedDigits is the end of -?\d+ at line[s:], and whether it is there.
func signedDigits(line []byte, s int) (int, bool) {
	if s < len(line) && line[s] == '-' {
		s++
	}
	d := s
	for d < len(line) && isDigit(line[d]) {
		d++
	}
	return d, d > s
}

// recordLine is a record perf script prints without a sample's header
// (--show-round-events, --show-bpf-events), ^PERF_RECORD_[A-Z0-9_]+( |$):
// perf_event__fprintf()'s PERF_RECORD_<type> and what follows it,
// PERF_RECORD_FINISHED_ROUND or PERF_RECORD_BPF_METADATA prog <name>.
func recordLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("PERF_RECORD_"))
	if !ok {
		return false
	}
	n := 0
	for n < len(rest) && ('A' <= rest[n] && rest[n] <= 'Z' || isDigit(rest[n]) || rest[n] == '_') {
		n++
	}
	return n > 0 && (n == len(rest) || rest[n] == ' ')
}

// srcline reports whether line is the line perf script -F +srcline prints
// after a frame: map__fprintf_srcline()'s "\n  " and what __get_srcline()
// returns, file:line (" (inlined)" for an inlined function's; the file may
// be empty) or, where it has no line, the dso's short name and the
// address, dso[addr].
func srcline(line []byte) bool {
	if len(line) < 3 || line[0] != ' ' || line[1] != ' ' || isBlank(line[2]) {
		return false
	}
	s := bytes.TrimSuffix(line[2:], []byte(" (inlined)"))
	end := len(s)
	if s[end-1] == ']' {
		i := bytes.LastIndexByte(s, '[')
		if i < 0 || i+2 > end-1 {
			return false
		}
		for _, c := range s[i+1 : end-1] {
			if !isHex(c) {
				return false
			}
		}
		return true
	}
	d := end
	for d > 0 && '0' <= s[d-1] && s[d-1] <= '9' {
		d--
	}
	return d < end && d > 0 && s[d-1] == ':'
}
