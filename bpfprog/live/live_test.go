package live

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"

	"github.com/cilium/ebpf"
)

// want is what a fixture program must look like, loader aside.
type want struct {
	funcs  []string // BTF names of its functions in kernel order ("" without func_info)
	keys   []string // metadata keys; nil if perf writes no metadata
	values []string // metadata values exactly as perf 7.2 writes them
	// ciliumValues, if set, are the values when cilium/ebpf loaded the
	// program: the BTF it gives the kernel may differ from libbpf's.
	ciliumValues []string
}

var metaKeys = []string{"version", "value", "build", "negative",
	"a_key_that_is_much_longer_than_sixty_three_bytes_so_perf_cuts_i", "long_value"}

// metaValues were read from perf 7.2.13's BPF_METADATA records for meta.bpf.o.
var metaValues = []string{`"3.14159"`, `42`, `"abc"`, `-5`, `"cut"`, `"` + strings.Repeat("A", 254)}

var richKeys = []string{"point", "flags", "color", "nocolor", "big", "union", "u64", "bool",
	"schar", "uchar", "ints", "grid", "escapes", "empty", "full", "zero", "points"}

// richValues were read from perf 7.2.13's BPF_METADATA records for
// rich.bpf.o and rich19.bpf.o (libbpf 1.7's btf_dump, emit_strings).
var richValues = []string{`{-7,65535,"hi"}`, `{0x5,0x11,0x1,0x77,200,}`, `BLUE`, `7`, `SMALL`,
	`{1094861636,['D','C','B','A',],}`, `18446744073709551615`, `1`, `-128`, `255`, `[1,0,-1,0,]`,
	`["ab""cde"]`, `"q"\\x09\x0a\x7f\xc3\xa9"`, `""`, `['a','b','c','d',]`, `0`, `[{1,2,"a"},{0,0,""},]`}

// richCilium14Values are richValues where cilium/ebpf loaded clang 14's
// object: clang 14 writes enum big as a 64-bit ENUM with its values cut to
// 32 bits, which cilium/ebpf gives the kernel as an unsigned ENUM64, so
// that -3 matches no value (perf 7.2 prints the same; libbpf, loading the
// same object, matches SMALL).
var richCilium14Values = append(append(slices.Clone(richValues[:4]), "18446744073709551613ULL"), richValues[5:]...)

var manyFuncs = []string{"bpfprogt_manyfunc", "bpfprogt_f1", "bpfprogt_f2", "bpfprogt_f3",
	"bpfprogt_f4", "bpfprogt_f5", "bpfprogt_f6", "bpfprogt_f7", "bpfprogt_f8"}

// wants is keyed by object/program.
var wants = map[string]want{
	"meta/bpfprogt_multi_function_main": {
		funcs: []string{"bpfprogt_multi_function_main", "bpfprogt_sub_add", "bpfprogt_sub_mul"},
		keys:  metaKeys, values: metaValues,
	},
	"meta/bpfprogt_second": {
		funcs: []string{"bpfprogt_second", "bpfprogt_sub_add"}, keys: metaKeys, values: metaValues,
	},
	"meta/bpfprogt_single_function": {
		funcs: []string{"bpfprogt_single_function"}, keys: metaKeys, values: metaValues,
	},
	"rich/bpfprogt_rich": {funcs: []string{"bpfprogt_rich"}, keys: richKeys, values: richValues,
		ciliumValues: richCilium14Values},
	"rich19/bpfprogt_rich19":     {funcs: []string{"bpfprogt_rich19"}, keys: richKeys, values: richValues},
	"nometa/bpfprogt_nometa":     {funcs: []string{"bpfprogt_nometa", "bpfprogt_nometa_sub"}},
	"rodata/bpfprogt_rodata":     {funcs: []string{"bpfprogt_rodata"}},
	"manyfunc/bpfprogt_manyfunc": {funcs: manyFuncs, keys: []string{"answer"}, values: []string{"42"}},
	"asm/" + testkit.AsmProgName: {funcs: []string{""}, keys: []string{"version", "build_num"}, values: []string{`"` + testkit.AsmVersion + `"`, fmt.Sprint(testkit.AsmBuildNum)}},
}

func wantFor(t *testing.T, l loadedProg) want {
	t.Helper()
	w, ok := wants[l.Object+"/"+l.Name]
	if !ok {
		t.Fatalf("%v: no expectation for this program", l)
	}
	return w
}

// TestLiveAgainstPerf loads the fixtures with cilium/ebpf and with bpftool,
// before and during recordings by perf 7.2 and perf 6.1, and compares what
// the Kernel reads with /proc/kallsyms and with the KSYMBOL, BPF_EVENT and
// BPF_METADATA records the perfs write.
func TestLiveAgainstPerf(t *testing.T) {
	live := newKernel(t)
	perfModern, perfStock := testkit.PerfModern(t), testkit.PerfStock(t)
	bpffs := testkit.MountBPFFS(t)
	dir := t.TempDir()

	// Programs loaded before the recordings start: perf synthesizes them.
	beforeSet := loadAll(t, bpffs, "before")
	before := readLoaded(t, live, beforeSet)
	r := recordBefore(t, dir, perfModern, perfStock)
	modernBefore, stockBefore := r[0], r[1]

	// Programs loaded while both perfs record: the kernel emits their
	// KSYMBOLs, perf 7.2 adds BPF_METADATA at the end.
	modernRec := startPerf(t, perfModern, dir, "during-modern")
	stockRec := startPerf(t, perfStock, dir, "during-stock")
	modernRec.WaitReady(t)
	stockRec.WaitReady(t)
	duringSet := loadAll(t, bpffs, "during")
	during := readLoaded(t, live, duringSet)
	// The side-band thread reads new programs as their BPF_EVENTs arrive;
	// keep them loaded until perf has stopped.
	time.Sleep(500 * time.Millisecond)
	modernDuring := stopPerf(t, modernRec)
	stockDuring := stopPerf(t, stockRec)

	allSet := append(slices.Clone(beforeSet), duringSet...)
	all := append(slices.Clone(before), during...)

	t.Run("fixtures", func(t *testing.T) {
		for i, l := range allSet {
			checkFixture(t, l, all[i])
		}
	})
	t.Run("kallsyms", func(t *testing.T) {
		syms := kallsyms(t)
		for i, l := range allSet {
			for j, f := range all[i].Funcs {
				if !slices.Contains(syms[f.Addr], f.KernelName) {
					t.Errorf("%v func %d: kallsyms has %q at %x, want KernelName %q", l, j, syms[f.Addr], f.Addr, f.KernelName)
				}
			}
		}
	})
	t.Run("perf7.2/before", func(t *testing.T) { checkSynthesized(t, modernBefore, beforeSet, before, true) })
	t.Run("perf6.1/before", func(t *testing.T) { checkSynthesized(t, stockBefore, beforeSet, before, false) })
	t.Run("perf7.2/during", func(t *testing.T) { checkDuring(t, modernDuring, duringSet, during, true) })
	t.Run("perf6.1/during", func(t *testing.T) { checkDuring(t, stockDuring, duringSet, during, false) })
	// The values need package btf's formatter.
	t.Run("values", func(t *testing.T) {
		checkValues(t, modernBefore, beforeSet, before)
		checkValues(t, modernDuring, duringSet, during)
	})
}

// checkFixture compares a program with what its source and loader make it.
func checkFixture(t *testing.T, l loadedProg, p *bpfprog.Program) {
	t.Helper()
	w := wantFor(t, l)
	if p.ID != l.ID || p.Type != ebpf.SocketFilter {
		t.Errorf("%v: id %d type %v", l, p.ID, p.Type)
	}
	if want := l.Name[:min(len(l.Name), 15)]; p.Name != want {
		t.Errorf("%v: Name %q, want %q (bpf_prog_info.name keeps 15 bytes)", l, p.Name, want)
	}
	var btfNames []string
	for _, f := range p.Funcs {
		btfNames = append(btfNames, f.BTFName)
	}
	if !slices.Equal(btfNames, w.funcs) {
		t.Fatalf("%v: functions %q, want %q", l, btfNames, w.funcs)
	}
	short := func(i int) string { // the name after the tag, as both perf and the kernel build it
		if w.funcs[i] == "" {
			return l.Name
		}
		return w.funcs[i]
	}
	for i, f := range p.Funcs {
		if want := "bpf_prog_" + f.Tag.String() + "_" + short(i); f.PerfName != want {
			t.Errorf("%v func %d: PerfName %q, want %q", l, i, f.PerfName, want)
		}
		tag := f.Tag
		if i == 0 {
			tag = p.Tag // the kernel names the main function with the program's tag
		}
		if want := "bpf_prog_" + tag.String() + "_" + short(i); f.KernelName != want {
			t.Errorf("%v func %d: KernelName %q, want %q", l, i, f.KernelName, want)
		}
		if f.Addr == 0 || f.Len == 0 {
			t.Errorf("%v func %d: addr %x len %d", l, i, f.Addr, f.Len)
		}
	}
	if len(p.Funcs) == 1 && p.Funcs[0].Tag != p.Tag {
		t.Errorf("%v: single function with tag %s, program tag %s", l, p.Funcs[0].Tag, p.Tag)
	}
	if len(p.Funcs) > 1 && p.Funcs[0].Tag == p.Tag {
		t.Errorf("%v: main function tag equals the program tag %s", l, p.Tag)
	}

	if w.keys == nil {
		if p.Metadata != nil || p.MetadataErr != nil {
			t.Errorf("%v: metadata %+v, error %v; want none", l, p.Metadata, p.MetadataErr)
		}
		if _, err := p.BPFMetadata(); !errors.Is(err, bpfprog.ErrNoMetadata) {
			t.Errorf("%v: BPFMetadata() error %v, want bpfprog.ErrNoMetadata", l, err)
		}
		return
	}
	md := p.Metadata
	if md == nil {
		t.Fatalf("%v: no metadata (%v)", l, p.MetadataErr)
	}
	var me *bpfprog.MetadataError
	if p.MetadataErr != nil && (!errors.As(p.MetadataErr, &me) || me.Key == "") {
		t.Errorf("%v: metadata error %v, want none or one about a value", l, p.MetadataErr)
	}
	if !slices.Equal(keys(md.Entries), w.keys) {
		t.Errorf("%v: keys %q, want %q", l, keys(md.Entries), w.keys)
	}
	if len(md.ProgNames) != len(p.Funcs) || !strings.Contains(md.MapName, ".rodata") || !slices.Contains(p.MapIDs, md.MapID) {
		t.Errorf("%v: metadata %d names for %d functions, map %d %q of %v", l, len(md.ProgNames), len(p.Funcs), md.MapID, md.MapName, p.MapIDs)
	}
	switch {
	case l.Loader == "bpftool":
		// One BTF for the object: the map's BTF is the program's, so
		// perf's BPF_METADATA names are its KSYMBOL names.
		if md.BTFID != p.BTFID {
			t.Errorf("%v: map BTF %d, program BTF %d; libbpf loads one", l, md.BTFID, p.BTFID)
		}
		for i, f := range p.Funcs {
			if md.ProgNames[i] != f.PerfName {
				t.Errorf("%v func %d: metadata prog_name %q, PerfName %q", l, i, md.ProgNames[i], f.PerfName)
			}
		}
	case l.Object == "asm":
		// No func_info: perf falls back to the program name.
		if md.ProgNames[0] != p.Funcs[0].PerfName {
			t.Errorf("%v: metadata prog_name %q, PerfName %q", l, md.ProgNames[0], p.Funcs[0].PerfName)
		}
	default:
		// cilium/ebpf gives each map a BTF object of its own.
		if md.BTFID == p.BTFID || md.BTFID == 0 {
			t.Errorf("%v: map BTF %d, program BTF %d; cilium/ebpf loads one per map", l, md.BTFID, p.BTFID)
		}
		for i, f := range p.Funcs {
			if prefix := "bpf_prog_" + f.Tag.String(); !strings.HasPrefix(md.ProgNames[i], prefix) || md.ProgNames[i] == f.PerfName {
				t.Errorf("%v func %d: metadata prog_name %q, want %s + a name from the map's BTF", l, i, md.ProgNames[i], prefix)
			}
		}
	}
}

// checkSynthesized checks a recording of programs loaded before it: per
// program KSYMBOL x n (PerfName, address, length), BPF_EVENT (id, tag), and
// from perf 7.2 BPF_METADATA x n (prog_names, keys) right after.
func checkSynthesized(t *testing.T, recs []perfRecord, loaded []loadedProg, progs []*bpfprog.Program, modern bool) {
	for i, l := range loaded {
		p := progs[i]
		at := loadEvent(t, recs, l, p)
		if at < 0 {
			continue
		}
		if e := recs[at].BPFEvent; e.Flags != 0 {
			t.Errorf("%v: BPF_EVENT %+v, want flags 0", l, *e)
		}
		n := len(p.Funcs)
		if at < n {
			t.Errorf("%v: BPF_EVENT at %#x has no %d KSYMBOLs before it", l, recs[at].Offset, n)
			continue
		}
		for j, f := range p.Funcs {
			r := recs[at-n+j]
			if k := r.KSymbol; k == nil || k.Name != f.PerfName || k.Addr != f.Addr || k.Len != f.Len || k.Flags != 0 || k.Type != 1 {
				t.Errorf("%v func %d: record %v, want KSYMBOL addr %x len %d name %s", l, j, r, f.Addr, f.Len, f.PerfName)
			}
		}
		next := func(k int) *perfBPFMetadata {
			if at+1+k < len(recs) {
				return recs[at+1+k].Metadata
			}
			return nil
		}
		if !modern || p.Metadata == nil {
			if m := next(0); m != nil {
				t.Errorf("%v: BPF_METADATA %+v after its BPF_EVENT, want none", l, *m)
			}
			continue
		}
		for j, name := range p.Metadata.ProgNames {
			m := next(j)
			if m == nil || m.ProgName != name || !slices.Equal(keys(m.Entries), keys(p.Metadata.Entries)) {
				t.Errorf("%v func %d: after BPF_EVENT: %+v, want BPF_METADATA prog %s keys %q", l, j, m, name, keys(p.Metadata.Entries))
			}
		}
	}
	if !modern {
		for _, r := range recs {
			if r.Metadata != nil {
				t.Fatalf("perf 6.1 wrote a BPF_METADATA: %v", r)
			}
		}
	}
}

// checkDuring checks a recording of programs loaded while it ran: the
// kernel's KSYMBOLs (KernelName) before each BPF_EVENT, and from perf 7.2
// the BPF_METADATA records appended at the end, in ascending id order.
func checkDuring(t *testing.T, recs []perfRecord, loaded []loadedProg, progs []*bpfprog.Program, modern bool) {
	lastMeta := 0
	for i, l := range loaded {
		p := progs[i]
		at := loadEvent(t, recs, l, p)
		if at < 0 {
			continue
		}
		// The kernel emits the KSYMBOLs just before the BPF_EVENT; other
		// CPUs' records may come between them in the file.
		for j, f := range p.Funcs {
			var k *perfKSymbol
			for x := at - 1; x >= 0 && k == nil; x-- {
				if ks := recs[x].KSymbol; ks != nil && ks.Addr == f.Addr && ks.Flags&ksymUnregister == 0 {
					k = ks
				}
			}
			if k == nil || k.Name != f.KernelName || k.Len != f.Len {
				t.Errorf("%v func %d: kernel KSYMBOL %+v, want addr %x len %d name %s", l, j, k, f.Addr, f.Len, f.KernelName)
			}
		}
		if !modern {
			continue
		}
		if p.Metadata == nil {
			for _, r := range recs {
				if m := r.Metadata; m != nil && slices.ContainsFunc(p.Funcs, func(f bpfprog.Func) bool { return m.ProgName == f.PerfName }) {
					t.Errorf("%v: perf wrote BPF_METADATA %+v for a program without metadata", l, *m)
				}
			}
			continue
		}
		// After the program's BPF_EVENT (programs synthesized at the start
		// can have the same names and keys) and after the records of the
		// programs with lower ids.
		start := max(lastMeta, at+1)
		x := findMetadataRun(recs, start, p.Metadata.ProgNames, keys(p.Metadata.Entries))
		if x < 0 {
			t.Errorf("%v: no BPF_METADATA records %q with keys %q after record %d", l, p.Metadata.ProgNames, keys(p.Metadata.Entries), start)
			continue
		}
		lastMeta = x + len(p.Metadata.ProgNames)
	}
	if !modern {
		for _, r := range recs {
			if r.Metadata != nil {
				t.Fatalf("perf 6.1 wrote a BPF_METADATA: %v", r)
			}
		}
	}
}

// checkValues compares the metadata values with the fixtures' and with
// perf 7.2's records byte for byte. It fails until package btf formats values.
func checkValues(t *testing.T, recs []perfRecord, loaded []loadedProg, progs []*bpfprog.Program) {
	t.Helper()
	for i, l := range loaded {
		p := progs[i]
		w := wantFor(t, l)
		if w.keys == nil {
			continue
		}
		md, err := p.BPFMetadata()
		if err != nil {
			t.Errorf("%v: %v", l, err)
			continue
		}
		var values []string
		for _, e := range md.Entries {
			values = append(values, e.Value)
		}
		want := w.values
		if l.Loader == "cilium" && w.ciliumValues != nil {
			want = w.ciliumValues
		}
		if !slices.Equal(values, want) {
			t.Errorf("%v: values %q, want %q", l, values, want)
		}
		x := findMetadataRun(recs, 0, md.ProgNames, keys(md.Entries))
		if x < 0 {
			t.Errorf("%v: no BPF_METADATA records for %q", l, md.ProgNames)
			continue
		}
		for j := range md.ProgNames {
			if got := recs[x+j].Metadata.Entries; !sameEntries(got, md.Entries) {
				t.Errorf("%v func %d: perf wrote %q, want %q", l, j, got, md.Entries)
			}
		}
	}
}

// TestLookup checks how the Kernel answers for a program that exists, has
// another tag, and is gone.
func TestLookup(t *testing.T) {
	live := newKernel(t)
	progs, unload := testkit.LoadCilium(t, "meta")
	for _, l := range progs {
		p, err := live.Program(l.ID)
		if err != nil {
			t.Fatal(err)
		}
		if q, err := live.Lookup(l.ID, p.Tag); err != nil || q.ID != l.ID {
			t.Errorf("%v: Lookup with its tag: %v", l, err)
		}
		other := p.Tag
		other[0] ^= 0xff
		_, err = live.Lookup(l.ID, other)
		var tm *bpfprog.TagMismatchError
		if !errors.Is(err, bpfprog.ErrTagMismatch) || !errors.As(err, &tm) || tm.Got != p.Tag || tm.Want != other || tm.ID != l.ID {
			t.Errorf("%v: Lookup with another tag: %v, want a *bpfprog.TagMismatchError", l, err)
		}
	}
	unload()
	for _, l := range progs {
		testkit.WaitUnloaded(t, l.ID)
		if _, err := live.Lookup(l.ID, perfdata.BPFTag{}); !errors.Is(err, bpfprog.ErrNotFound) || errors.Is(err, bpfprog.ErrTagMismatch) {
			t.Errorf("%v: Lookup after unload: %v, want bpfprog.ErrNotFound", l, err)
		}
	}
	// Programs are numbered from 1.
	if _, err := live.Program(0); !errors.Is(err, bpfprog.ErrNotFound) {
		t.Errorf("Program(0): %v, want bpfprog.ErrNotFound", err)
	}
}

// TestPrograms checks that the walk finds what the test loaded, in id
// order, and that a list of programs is all of them or an error.
func TestPrograms(t *testing.T) {
	live := newKernel(t)
	progs, _ := testkit.LoadCilium(t, "meta")
	seen := map[uint32]bool{}
	var last uint32
	for p, err := range live.All() {
		if err != nil {
			t.Errorf("Programs: %v", err)
			continue
		}
		if p.ID <= last {
			t.Errorf("Programs: id %d after %d", p.ID, last)
		}
		last = p.ID
		seen[p.ID] = true
	}
	for _, l := range progs {
		if !seen[l.ID] {
			t.Errorf("Programs did not yield %v", l)
		}
	}

	var ids []uint32
	for _, l := range progs {
		ids = append(ids, l.ID)
	}
	got, err := live.Programs(ids...)
	if err != nil || len(got) != len(ids) {
		t.Fatalf("Programs(%v): %d programs, %v", ids, len(got), err)
	}
	for i, p := range got {
		if p.ID != ids[i] {
			t.Errorf("Programs(%v)[%d] is program %d", ids, i, p.ID)
		}
	}
	// Programs are numbered from 1: there is no program 0.
	if got, err := live.Programs(append(ids, 0)...); got != nil || !errors.Is(err, bpfprog.ErrNotFound) || strings.Contains(err.Error(), "could not be read") {
		t.Errorf("Programs with one id not loaded: %d programs, %v; want none and that program's error", len(got), err)
	}
	if got, err := live.Programs(0, ids[0], 0); got != nil || !errors.Is(err, bpfprog.ErrNotFound) || !strings.Contains(err.Error(), "2 programs could not be read, the first: program 0:") {
		t.Errorf("Programs with two ids not loaded: %d programs, %v; want none, and the count", len(got), err)
	}
	all, err := live.Programs()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range progs {
		if !slices.ContainsFunc(all, func(p *bpfprog.Program) bool { return p.ID == l.ID }) {
			t.Errorf("Programs() does not have %v", l)
		}
	}
}

// permissionChildEnv makes the test binary, re-run by TestPermission as an
// unprivileged user, try to read program ids.
const permissionChildEnv = "BPFPROG_TEST_PERMISSION_CHILD"

// TestPermission runs the reads as user nobody: the errors must say
// permission, not "not found" or "no metadata".
func TestPermission(t *testing.T) {
	if id := os.Getenv(permissionChildEnv); id != "" {
		permissionChild(t, id)
		return
	}
	testkit.BPF(t)
	progs, _ := testkit.LoadCilium(t, "meta")
	if k, err := Open(); k == nil || err != nil {
		t.Fatalf("Open as root with a program loaded: %v, %v", k, err)
	}
	// The test binary lives in a directory only root can enter.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "bpfprog-perm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := dir + "/bpfprog.test"
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	cmd := exec.Command(bin, "-test.run=^TestPermission$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", permissionChildEnv, progs[0].ID))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("unprivileged child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "permission-ok") {
		t.Fatalf("unprivileged child:\n%s", out)
	}
}

func permissionChild(t *testing.T, idArg string) {
	var id uint32
	if _, err := fmt.Sscan(idArg, &id); err != nil {
		t.Fatal(err)
	}
	live, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	_, err = live.Program(id)
	if !errors.Is(err, os.ErrPermission) || errors.Is(err, bpfprog.ErrNotFound) || !strings.Contains(err.Error(), "CAP_SYS_ADMIN") {
		t.Fatalf("Program(%d) as nobody: %v, want a permission error", id, err)
	}
	n := 0
	for p, err := range live.All() {
		n++
		if p != nil || !errors.Is(err, os.ErrPermission) {
			t.Fatalf("Programs as nobody: %v %v, want a permission error", p, err)
		}
	}
	if n != 1 {
		t.Fatalf("Programs as nobody yielded %d times, want one error", n)
	}
	if k, err := Open(); k != nil || err != ErrNoAccess {
		t.Fatalf("Open as nobody: %v, %v, want ErrNoAccess (Check's error)", k, err)
	}
	fmt.Println("permission-ok")
}

// sameEntries compares entries as perf records them: keys and values.
func sameEntries(a, b []bpfprog.Entry) bool {
	return slices.EqualFunc(a, b, func(x, y bpfprog.Entry) bool { return x.Key == y.Key && x.Value == y.Value })
}
