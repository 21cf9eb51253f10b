package btf

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// DumpJSON is what JSON gives for a value, read back from the text Dumper
// (with perf's options: Compact, SkipNames, EmitStrings) printed for it,
// where the text alone tells the value: a whole string, an integer, a
// float, an enumerator (its name), a "0x..." number (as a string). ok is
// false for what it cannot tell: arrays, structs and unions (the text has
// no types, and libbpf writes adjacent strings without a separator), a
// string cut short (perf keeps 255 bytes) or with a backslash. A BPF_METADATA
// record holds only this text.
func DumpJSON(text string) (typed json.RawMessage, ok bool) {
	var j jsonDumper
	switch {
	case len(text) >= 2 && text[0] == '"' && text[len(text)-1] == '"':
		s, ok := dumpedString(text[1 : len(text)-1])
		if !ok {
			return nil, false
		}
		j.str(s)
	case dumped().int.MatchString(text):
		if v, err := strconv.ParseInt(text, 10, 64); err == nil {
			j.int(v)
		} else if v, err := strconv.ParseUint(text, 10, 64); err == nil {
			j.uintValue(v)
		} else {
			return nil, false
		}
	case dumped().float.MatchString(text):
		j.out.WriteString(text) // %f's digits are a JSON number
	case dumped().hex.MatchString(text), dumped().name.MatchString(text):
		j.str(text)
	default:
		return nil, false
	}
	return j.out.Bytes(), true
}

// dumped compiles the patterns DumpJSON reads the text with on first use,
// not at every start of a program that imports btf but never dumps (the
// four compilations were a third of a millisecond of bpfmeta's start-up).
var dumped = sync.OnceValue(func() dumpedPatterns {
	return dumpedPatterns{
		int:   regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`),
		float: regexp.MustCompile(`^-?(0|[1-9][0-9]*)\.[0-9]+$`),
		hex:   regexp.MustCompile(`^0x[0-9a-f]+$`),
		name:  regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`),
	}
})

// dumpedPatterns are the shapes of a dumped scalar DumpJSON tells apart.
type dumpedPatterns struct{ int, float, hex, name *regexp.Regexp }

// dumpedString reads back a string as EmitStrings prints it (libbpf's
// btf_dump_string_data): printable ASCII as it is, a quote or a backslash
// too, any other byte as \xHH. A backslash makes it ambiguous (\x41 is
// also four printable bytes): only a string without one is read back.
func dumpedString(s string) (string, bool) {
	return s, !strings.Contains(s, `\`)
}
