package annotate_test

import (
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/annotate"
)

// Lines perf script prints besides samples and frames (perf 7.2's
// --show-bpf-events and --show-round-events, -F +srcline, copied from its
// output) are perf script output; lines that only look like them are not.
func TestPerfScriptLines(t *testing.T) {
	for _, tc := range []struct {
		line   string
		parsed bool
	}{
		{"PERF_RECORD_BPF_METADATA prog bpf_prog_5d126c929afd31f7_bpfprogt_multi_function_main", true},
		{"PERF_RECORD_BPF_METADATA prog bpf_prog_5d126c929afd31f7_", true},
		{`  entry 0:              version = "3.14159"`, true},
		{"  entry 3:             negative = -5", true},
		{`  entry 4: a_key_that_is_much_longer_than_sixty_three_bytes_so_perf_cuts_i = "cut"`, true},
		{"PERF_RECORD_FINISHED_ROUND", true},
		{"swapper       0 [000]     0.000000: PERF_RECORD_KSYMBOL addr ffffffffc00271d0 len 40 type 1 flags 0x0 name bpf_prog_5d126c929afd31f7_bpfprogt_multi_function_main", true},
		{"  bpf_prog_5d126c929afd31f7_bpfprogt_multi_function_main[5]", true},
		{"  [kernel.kallsyms][ffffffff8224215b]", true},
		{"  memfd:sealed-91173221a7ea (deleted)[1cfd64]", true},
		{"  libc_start_call_main.h:58", true},
		{"  rtld.c:84 (inlined)", true},
		{"  :0", true},
		{"PERF_RECORD_", false},
		{"PERF_RECORD_x y", false},
		{"  entry 0: version", false},
		{"   rtld.c:84", false},
		{"  rtld.c:", false},
		{"  libc.so.6[]", false},
		{"  libc.so.6[xyz]", false},
		{"  hello world", false},
		{"  ", false},
	} {
		st, err := annotate.Run(strings.NewReader(tc.line+"\n"), &strings.Builder{}, annotate.NewTable(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Unparsed == 0; got != tc.parsed {
			t.Errorf("%q: perf script output %v, want %v", tc.line, got, tc.parsed)
		}
	}
}

// A frame whose symbol perf could not resolve in an unnamed program's dso
// ([unknown] (bpf_prog_<tag>), as the kernel's bpf_prog_ksym_set_name()
// names a program without a name or BTF) gets its label in the dso.
func TestAnnotateUnnamedDso(t *testing.T) {
	const sym = "bpf_prog_0123456789abcdef"
	tab := annotate.NewTable(nil)
	tab.Add(sym, entries("version", `"1"`))
	for in, want := range map[string]string{
		"\tffffffffc0000bf0 [unknown] (" + sym + ")\n":       "\tffffffffc0000bf0 [unknown] (" + sym + "[version=1])\n",
		"\tffffffffc0000bf0 " + sym + "+0x4 (" + sym + ")\n": "\tffffffffc0000bf0 " + sym + "[version=1]+0x4 (" + sym + ")\n",
	} {
		if got, _ := tab.Annotate(nil, []byte(in)); string(got) != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// Text that went through a CRLF tool: perf script -F ip,sym lines ending
// in \r\n get their label before the \r, every byte read written.
func TestAnnotateCRLF(t *testing.T) {
	tab := testTable()
	lab := "[version=1.4.2,build=abc,value=42]"
	for in, want := range map[string]string{
		" ffffffffc0000bf0 " + mainSym + "\r\n":              " ffffffffc0000bf0 " + mainSym + lab + "\r\n",
		" ffffffffc0000bf0 " + mainSym + "\r":                " ffffffffc0000bf0 " + mainSym + lab + "\r",
		"\t" + mainSym + "+0x5 (" + mainSym + ")\r\n":        "\t" + mainSym + lab + "+0x5 (" + mainSym + ")\r\n",
		" ffffffffc0000bf0 " + mainSym + "+0x1c\r\n":         " ffffffffc0000bf0 " + mainSym + lab + "+0x1c\r\n",
		"\tffffffffc0000bf0 [unknown] (" + mainSym + ")\r\n": "\tffffffffc0000bf0 [unknown] (" + mainSym + lab + ")\r\n",
		" ffffffffc0000bf0 " + mainSym + "\r\r\n":            " ffffffffc0000bf0 " + mainSym + "\r\r\n",
	} {
		var out strings.Builder
		st, err := annotate.Run(strings.NewReader(in), &out, tab)
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("%q: got %q, want %q", in, out.String(), want)
		}
		if want != in && (st.Annotated != 1 || st.Unparsed != 0) {
			t.Errorf("%q: %+v, want a frame labelled, every line parsed", in, st)
		}
	}
}
