package btf

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// fixture is a BPF object whose bpf_metadata_ values a perf >= 6.17 wrote
// into a golden file (go test -update, see testdata/regen.sh).
type fixture struct {
	src, obj, golden string
	prog             string // the program, whose records carry the values
	clang            string // the compiler that built obj
}

var fixtures = []fixture{
	{"testdata/kinds.bpf.c", "testdata/kinds.bpf.o", "testdata/kinds.golden", "btfkinds_prog", "clang-14"},
	// clang 14: 64-bit enums are 8-byte ENUMs, no enum is signed (kflag)
	{"testdata/enums.bpf.c", "testdata/enums.clang14.bpf.o", "testdata/enums.clang14.golden", "btfenums_prog", "clang-14"},
	// clang 19: ENUM64, and kflag on signed enums
	{"testdata/enums.bpf.c", "testdata/enums.clang19.bpf.o", "testdata/enums.clang19.golden", "btfenums_prog", "clang-19"},
}

// kindsFixture is the fixture of (almost) every kind.
var kindsFixture = fixtures[0]

const (
	metadataPrefix = "bpf_metadata_"
	keyLen         = 64 // BPF_METADATA_KEY_LEN
)

// entry is one BPF_METADATA entry.
type entry struct{ key, value string }

// fixtureVars returns the bpf_metadata_ variables of fx's object in offset
// order (the order libbpf gives the kernel, and so perf), the .rodata
// bytes, and the kinds of its enums as clang wrote them.
func fixtureVars(tb testing.TB, fx fixture) ([]btf.VarSecinfo, []byte, *EnumKinds) {
	vars, rodata, enums, _ := fixtureSpec(tb, fx)
	return vars, rodata, enums
}

// fixtureSpec is fixtureVars with the spec of the types, which knows
// their ids.
func fixtureSpec(tb testing.TB, fx fixture) ([]btf.VarSecinfo, []byte, *EnumKinds, *btf.Spec) {
	tb.Helper()
	spec, err := ebpf.LoadCollectionSpec(fx.obj)
	if err != nil {
		tb.Fatal(err)
	}
	m := spec.Maps[".rodata"]
	if m == nil || len(m.Contents) != 1 {
		tb.Fatalf("%s: no .rodata map with contents", fx.obj)
	}
	ds, ok := m.Value.(*btf.Datasec)
	if !ok {
		tb.Fatalf("%s: .rodata value is %T, not a DATASEC", fx.obj, m.Value)
	}
	rodata, ok := m.Contents[0].Value.([]byte)
	if !ok {
		tb.Fatalf("%s: .rodata contents are %T", fx.obj, m.Contents[0].Value)
	}
	var vars []btf.VarSecinfo
	for _, v := range ds.Vars {
		if strings.HasPrefix(v.Type.TypeName(), metadataPrefix) {
			vars = append(vars, v)
		}
	}
	slices.SortStableFunc(vars, func(a, b btf.VarSecinfo) int { return int(a.Offset) - int(b.Offset) })
	enums, err := ReadEnumKinds(rawBTF(tb, fx.obj), spec.Types)
	if err != nil {
		tb.Fatalf("%s: %v", fx.obj, err)
	}
	return vars, rodata, enums, spec.Types
}

// rawBTF returns the .BTF section of an object: the types as clang wrote
// them.
func rawBTF(tb testing.TB, obj string) []byte {
	tb.Helper()
	f, err := elf.Open(obj)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".BTF")
	if sec == nil {
		tb.Fatalf("%s: no .BTF section", obj)
	}
	raw, err := sec.Data()
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// metadataKey is the key perf's bpf_metadata_fill_event() writes:
// snprintf(key, 64, "%s", name without the prefix).
func metadataKey(name string) string {
	k := strings.TrimPrefix(name, metadataPrefix)
	if len(k) > keyLen-1 {
		k = k[:keyLen-1]
	}
	return k
}

func TestGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(filepath.Base(fx.obj), func(t *testing.T) {
			if *testkit.Update {
				regenerateGolden(t, fx)
			}
			checkGolden(t, fx)
		})
	}
}

func checkGolden(t *testing.T, fx fixture) {
	want := readGolden(t, fx.golden)
	vars, rodata, enums := fixtureVars(t, fx)
	if len(vars) != len(want) {
		t.Errorf("%d bpf_metadata_ variables in %s, %d entries in %s", len(vars), fx.obj, len(want), fx.golden)
	}
	d := perfDumper
	d.Enums, d.Truncate = enums, valueLen-1
	for i, v := range vars {
		if i >= len(want) {
			break
		}
		vr := v.Type.(*btf.Var)
		key := metadataKey(vr.Name)
		if key != want[i].key {
			t.Errorf("entry %d: key %q, golden %q", i, key, want[i].key)
			continue
		}
		// as perf does it: the VAR's type, at its offset in the map value
		got, err := d.DumpVar(v, rodata)
		if got != want[i].value {
			t.Errorf("%s: DumpVar = %q (err %v)\n\t     perf = %q", key, got, err, want[i].value)
		}
		// Dump over the variable's own bytes agrees here: its offset in
		// .rodata keeps the alignment of its members.
		size := resolveSize(vr.Type, defaultPtrSize)
		gotN, errN := d.Dump(vr.Type, rodata[v.Offset:int64(v.Offset)+size])
		if gotN != want[i].value {
			t.Errorf("%s: Dump = %q (err %v)\n\t   perf = %q", key, gotN, errN, want[i].value)
		}
		if (err == nil) != (errN == nil) {
			t.Errorf("%s: DumpVar error %v, Dump error %v", key, err, errN)
		}
	}
}

// TestGoldenErrors checks which fixture values libbpf fails on; perf keeps
// their partial output.
func TestGoldenErrors(t *testing.T) {
	vars, rodata, _ := fixtureVars(t, kindsFixture)
	failing := map[string]error{
		// a bitfield of an __int128: btf_dump_get_bitfield_value() -EINVAL
		"i128_bitfield": ErrInvalidType,
	}
	for _, v := range vars {
		key := metadataKey(v.Type.TypeName())
		_, err := perfFormatVar(v, rodata, valueLen)
		if want := failing[key]; want == nil && err != nil {
			t.Errorf("%s: unexpected error %v", key, err)
		} else if want != nil && !errors.Is(err, want) {
			t.Errorf("%s: error %v, want %v", key, err, want)
		}
	}
}

func readGolden(tb testing.TB, path string) []entry {
	tb.Helper()
	var entries []entry
	sc := bufio.NewScanner(bytes.NewReader(testkit.ReadFile(tb, path)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, quoted, ok := strings.Cut(line, "\t")
		if !ok {
			tb.Fatalf("%s:%d: no tab", path, n)
		}
		value, err := strconv.Unquote(quoted)
		if err != nil {
			tb.Fatalf("%s:%d: value: %v", path, n, err)
		}
		entries = append(entries, entry{key, value})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return entries
}

// regenerateGolden rebuilds the fixture, loads it, records with the modern
// perf and writes the entries of its BPF_METADATA record as the golden file.
// It needs root, clang, bpftool and a perf >= 6.17.
func regenerateGolden(t *testing.T, fx fixture) {
	testkit.BPF(t)
	clang := testkit.Command(t, fx.clang)
	bpftool := testkit.Command(t, "bpftool")
	perfModern := testkit.PerfModern(t)
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
		}
		return out
	}

	run(clang, "-O2", "-g", "-target", "bpf", "-I/usr/include/x86_64-linux-gnu",
		"-fdebug-prefix-map="+filepath.Dir(fx.src)+"=.", "-c", fx.src, "-o", fx.obj)

	pin := filepath.Join(testkit.MountBPFFS(t), fx.prog)
	run(bpftool, "prog", "loadall", fx.obj, pin)
	defer func() {
		// unpinned, the program goes away soon after: wait, so that the
		// next fixture's recording does not see it too
		os.RemoveAll(pin)
		for i := 0; i < 100 && exec.Command(bpftool, "prog", "show", "name", fx.prog).Run() == nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}()

	// loaded before perf starts, so perf synthesizes BPF_METADATA at start
	data := filepath.Join(t.TempDir(), "kinds.data")
	run(perfModern, "record", "-q", "-o", data, "--", "true")
	version := strings.TrimSpace(string(run(perfModern, "version")))

	entries, err := recordedMetadata(data, "_"+fx.prog)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# BPF_METADATA entries of %s as %s recorded them.\n", filepath.Base(fx.obj), version)
	fmt.Fprintf(&b, "# Regenerate with btf/testdata/regen.sh. One entry a line: key TAB value (Go-quoted).\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "%s\t%q\n", e.key, e.value)
	}
	if err := os.WriteFile(fx.golden, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordedMetadata returns the entries of the BPF_METADATA records in a
// perf.data file (file mode, uncompressed) for the programs whose prog_name
// ends in suffix. All such records must agree.
func recordedMetadata(path, suffix string) ([]entry, error) {
	const (
		recordBPFMetadata = 84  // PERF_RECORD_BPF_METADATA
		progNameLen       = 512 // BPF_PROG_NAME_LEN (KSYM_NAME_LEN)
		valueLen          = 256 // BPF_METADATA_VALUE_LEN
		entrySize         = keyLen + valueLen
		entriesOff        = 8 + progNameLen + 8
	)
	file, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(file) < 104 || string(file[:8]) != "PERFILE2" {
		return nil, fmt.Errorf("%s: not a perf.data file", path)
	}
	le := binary.LittleEndian
	dataOff, dataSize := le.Uint64(file[40:]), le.Uint64(file[48:])
	if dataOff+dataSize > uint64(len(file)) {
		return nil, fmt.Errorf("%s: data section [%d, +%d) past the end", path, dataOff, dataSize)
	}
	cstr := func(b []byte) string {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b)
	}
	var found []entry
	n := 0
	for off := dataOff; off < dataOff+dataSize; {
		if off+8 > dataOff+dataSize {
			return nil, fmt.Errorf("%s: record header at offset %d cut", path, off)
		}
		typ, size := le.Uint32(file[off:]), uint64(le.Uint16(file[off+6:]))
		if size < 8 || off+size > dataOff+dataSize {
			return nil, fmt.Errorf("%s: bad record size %d at offset %d", path, size, off)
		}
		rec := file[off : off+size]
		off += size
		if typ != recordBPFMetadata || !strings.HasSuffix(cstr(rec[8:8+progNameLen]), suffix) {
			continue
		}
		nr := le.Uint64(rec[8+progNameLen:])
		if entriesOff+nr*entrySize > size {
			return nil, fmt.Errorf("%s: BPF_METADATA at offset %d: %d entries do not fit in %d bytes", path, off-size, nr, size)
		}
		var entries []entry
		for i := range nr {
			e := rec[entriesOff+i*entrySize:]
			entries = append(entries, entry{cstr(e[:keyLen]), cstr(e[keyLen:entrySize])})
		}
		if n > 0 && !slices.Equal(entries, found) {
			return nil, fmt.Errorf("%s: BPF_METADATA records for *%s differ", path, suffix)
		}
		found = entries
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no BPF_METADATA record for a program *%s", path, suffix)
	}
	return found, nil
}
