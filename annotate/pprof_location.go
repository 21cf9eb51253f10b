package annotate

import (
	"bytes"
	"io"
	"strings"

	"github.com/google/pprof/profile"
)

// location returns the location of frame (a frame's line without its
// leading blanks: [ip ]sym[+0xoff][ (dso)], as annotate labelled it),
// made at its first sample; nil for text that is no frame.
func (p *Profiler) location(frame []byte, label string) (*location, error) {
	if l, ok := p.locs[string(frame)]; ok {
		return l, nil
	}
	ip, hasIP := frameAddress(frame)
	rest := frame
	if hasIP {
		rest = bytes.TrimLeft(frame[bytes.IndexByte(frame, ' '):], " ")
	}
	sym, dso := rest, []byte(nil)
	if i := dsoAt(rest); i > 0 {
		sym, dso = rest[:i-1], rest[i+1:len(rest)-1]
	}
	sym = sym[:trimOffset(sym)]
	if len(sym) == 0 {
		return nil, nil
	}
	name := string(sym)
	file := string(dso)
	if name == "[unknown]" && (label != "" && strings.HasSuffix(file, label) || progSymbol(dso)) {
		// perf names a JITed function's dso after the function (its
		// KSYMBOL's name), where annotate put the label
		name = file
		file = strings.TrimSuffix(file, label)
	}
	loc := &profile.Location{ID: uint64(len(p.prof.Location) + 1), Address: ip}
	if err := p.grow(int64(len(frame)) + locationCost); err != nil {
		return nil, err
	}
	if file != "" {
		m, err := p.mapping(file)
		if err != nil {
			return nil, err
		}
		loc.Mapping = m
	}
	if name != "[unknown]" {
		f, err := p.function(name, file)
		if err != nil {
			return nil, err
		}
		loc.Line = []profile.Line{{Function: f}}
	}
	l := &location{loc: loc}
	if label != "" && label != Ambiguous && strings.Contains(name, label) {
		l.meta = metadataLabels(label)
	}
	p.prof.Location = append(p.prof.Location, loc)
	p.locs[string(frame)] = l
	return l, nil
}

// dsoAt returns where the " (dso)" that ends a frame opens (the index of
// its "("), 0 if none does: the parenthesis that matches the last one,
// after a space, so that a dso perf names with its own parentheses
// (/memfd:x (deleted), as map__fprintf_dsoname() prints a dso's long
// name) stays whole.
func dsoAt(rest []byte) int {
	if len(rest) == 0 || rest[len(rest)-1] != ')' {
		return 0
	}
	depth := 0
	for i := len(rest) - 1; i > 0; i-- {
		switch rest[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				if rest[i-1] == ' ' {
					return i
				}
				return 0
			}
		}
	}
	return 0
}

// frameAddress returns the address a frame starts with: hex digits and a
// space, as perf prints a callchain's ip ("%16" PRIx64) and its symbol.
func frameAddress(frame []byte) (uint64, bool) {
	h := 0
	for h < len(frame) && isHex(frame[h]) {
		h++
	}
	if h == 0 || h > 16 || h+1 >= len(frame) || frame[h] != ' ' {
		return 0, false
	}
	return addressBefore(frame, h+1)
}

// function is the function name of the dso file, made at its first frame.
func (p *Profiler) function(name, file string) (*profile.Function, error) {
	key := name + "\x00" + file
	if f, ok := p.funcs[key]; ok {
		return f, nil
	}
	if err := p.grow(int64(2*len(key)) + functionCost); err != nil {
		return nil, err
	}
	f := &profile.Function{ID: uint64(len(p.prof.Function) + 1), Name: name, SystemName: name}
	p.prof.Function = append(p.prof.Function, f)
	p.funcs[key] = f
	return f, nil
}

// mapping is the mapping of the dso file, made at its first frame. Its
// frames have their functions already: pprof is not to look for file to
// symbolize them (a path on this machine may be another build, a BPF
// function's or [kernel.kallsyms] no file at all).
func (p *Profiler) mapping(file string) (*profile.Mapping, error) {
	if m, ok := p.mappings[file]; ok {
		return m, nil
	}
	if err := p.grow(int64(2*len(file)) + mappingCost); err != nil {
		return nil, err
	}
	m := &profile.Mapping{ID: uint64(len(p.prof.Mapping) + 1), File: file, HasFunctions: true}
	p.prof.Mapping = append(p.prof.Mapping, m)
	p.mappings[file] = m
	return m, nil
}

// metadataLabels are the sample labels of a label Table.format made,
// [key=value,...]: bpf_key and the value, its %XX written as the byte
// (format escapes every byte of [ , = ] % in keys and values, so the
// label splits back into them).
func metadataLabels(label string) [][2]string {
	body, ok := strings.CutPrefix(label, "[")
	if body, ok = strings.CutSuffix(body, "]"); !ok {
		return nil
	}
	var out [][2]string
	for _, e := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			return nil // not a label format made
		}
		out = append(out, [2]string{MetadataLabelPrefix + unescape(k), unescape(v)})
	}
	return out
}

// unescape is s with each %XX written as its byte, escape's inverse.
func unescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isUpperHex(s[i+1]) && isUpperHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}

// Write ends the sample being read and writes the profile, gzipped
// profile.proto as profile.Write encodes it, and gives back its memory.
func (p *Profiler) Write(w io.Writer) error {
	defer p.mem.Close()
	if err := p.end(); err != nil {
		return err
	}
	for _, s := range p.prof.Sample {
		if n := len(p.prof.SampleType) - len(s.Value); n > 0 {
			s.Value = append(s.Value, make([]int64, n)...)
		}
	}
	if err := p.prof.CheckValid(); err != nil {
		return err
	}
	return p.prof.Write(w)
}
