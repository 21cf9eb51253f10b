package annotate

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"regexp"

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
	// Unparsed counts the lines that are not perf script output: not a
	// comment, an empty line, a sample's first line or a frame.
	Unparsed int64
}

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
	var st Stats
	br := bufio.NewReaderSize(r, MaxLine)
	var out []byte
	long := false // within a line longer than MaxLine
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			switch {
			case errors.Is(err, bufio.ErrBufferFull) || long:
				// a piece of a long line: passed on as it is
				if !long {
					st.Lines++
					st.Unparsed++
				}
				long = errors.Is(err, bufio.ErrBufferFull)
				if lw != nil {
					// stackcollapse-perf.pl has no frame this long; the
					// folder sees none of it
				} else if _, werr := bw.Write(line); werr != nil {
					return st, werr
				}
			default:
				st.Lines++
				var ok bool
				var label string
				out, ok, label = t.annotate(out[:0], line)
				labelled := label != ""
				if label == Ambiguous {
					st.Ambiguous++
				}
				if !ok {
					st.Unparsed++
				}
				if labelled {
					st.Annotated++
				}
				if lw != nil {
					if werr := lw.Line(out); werr != nil {
						return st, werr
					}
				} else if _, werr := bw.Write(out); werr != nil {
					return st, werr
				}
			}
		}
		switch {
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			if bw != nil {
				return st, bw.Flush()
			}
			return st, nil
		default:
			return st, err
		}
	}
}

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
	out, _, label := t.annotate(dst, line)
	return out, label != ""
}

var (
	bpfProg = []byte("bpf_prog_")
	unknown = []byte("[unknown] (")
)

func (t *Table) annotate(dst, line []byte) (out []byte, parsed bool, label string) {
	body := bytes.TrimSuffix(line, []byte("\n"))
	parsed = perfScriptLine(body)
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
			e := bytes.IndexByte(body[p:], ')')
			if e < 0 {
				continue
			}
			end = p + e
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
		l := t.labelAt(body[p:end], ip, hasIP)
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
		return srcline(line) || stackRE.Match(line) || sampleRE.Match(line[i:]) || metadataEntryRE.Match(line)
	}
	return sampleRE.Match(line) || recordRE.Match(line)
}

// sampleRE is a sample's first line: comm, then pid or pid/tid, -1 where
// perf knows none (perf script's ":-1    -1" for a sample of no thread).
var sampleRE = regexp.MustCompile(`^[^ \t].*?[ \t]+-?\d+(/-?\d+)?([ \t]|$)`)

var (
	// recordRE is a record perf script prints without a sample's header
	// (--show-round-events, --show-bpf-events): perf_event__fprintf()'s
	// PERF_RECORD_<type> and what follows it, PERF_RECORD_FINISHED_ROUND
	// or PERF_RECORD_BPF_METADATA prog <name>.
	recordRE = regexp.MustCompile(`^PERF_RECORD_[A-Z0-9_]+( |$)`)
	// metadataEntryRE is an entry of a BPF_METADATA record, as perf's
	// perf_event__fprintf_bpf_metadata() prints it: "  entry %d: %20s = %s".
	metadataEntryRE = regexp.MustCompile(`^  entry \d+: +[^ ]+ = `)
)

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
