package btf

// TestLibbpf is the differential test against libbpf itself: the oracle
// (testdata/oracle/libbpf.c) is built in the test, and every option
// combination is compared on the values and random values of every type of
// every fixture, with the BTF as clang wrote it, and of every hand-built
// case of TestFormat, with the BTF as cilium/ebpf's Builder writes it.
//
// Two libbpfs: the system's (Debian 12's libbpf-dev 1.1, with every option
// but emit_strings, which came in 1.6), and the libbpf 1.7 of the modern
// perf's Debian sid root (scripts/modern-perf.sh), with every option. The
// port follows libbpf 1.7, which perf 7.2 is built with (see compare).

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

// libbpfOracle is a running oracle over one BTF.
type libbpfOracle struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// oracleBuild is an oracle binary and how to run it.
type oracleBuild struct {
	name string
	run  func(btfPath string) []string
}

// buildOracles compiles the oracle against both libbpfs, or ends the test
// when gcc, libbpf-dev or the modern root is missing.
func buildOracles(t *testing.T) []oracleBuild {
	t.Helper()
	gcc := testkit.Command(t, "gcc")
	if _, err := os.Stat("/usr/include/bpf/btf.h"); err != nil {
		testkit.Missing(t, "no libbpf headers (/usr/include/bpf/btf.h): apt-get install libbpf-dev")
	}
	dir := t.TempDir()
	build := func(out string, args ...string) string {
		bin := filepath.Join(dir, out)
		args = append([]string{"-O2", "-Wall", "-o", bin, "testdata/oracle/libbpf.c"}, args...)
		if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("building the oracle: gcc %v: %v\n%s", args, err, b)
		}
		return bin
	}
	sys := build("libbpf-system", "-lbpf")
	l := testkit.Libbpf17(t)
	modern := build("libbpf-modern", "-DEMIT_STRINGS", "-I"+l.Include, filepath.Join(l.Lib, "libbpf.so.1"),
		"-Wl,--allow-shlib-undefined") // its libc is the root's, newer than the host's
	return []oracleBuild{
		{"libbpf 1.1", func(p string) []string { return []string{sys, p} }},
		{"libbpf 1.7", func(p string) []string { return l.Run(modern, p) }},
	}
}

func startOracle(t *testing.T, ob oracleBuild, btfPath string) *libbpfOracle {
	t.Helper()
	argv := ob.run(btfPath)
	cmd := exec.Command(argv[0], argv[1:]...)
	in, out := testkit.Pipes(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return &libbpfOracle{cmd, in, bufio.NewReaderSize(out, 1<<16)}
}

// dump asks libbpf to dump data as type id with o's options.
func (l *libbpfOracle) dump(t *testing.T, id btf.TypeID, o *Dumper, data []byte) (int, string) {
	t.Helper()
	b := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	indent, dhex := "-", "-"
	if o.Indent != "" {
		indent = o.Indent
	}
	if len(data) > 0 {
		dhex = hex.EncodeToString(data)
	}
	fmt.Fprintf(l.in, "%d %d %d %d %d %d %s %s\n", id, b(o.Compact), b(o.SkipNames), b(o.EmitZeroes), b(o.EmitStrings), o.IndentLevel, indent, dhex)
	var ret, n int
	if _, err := fmt.Fscanf(l.out, "%d %d\n", &ret, &n); err != nil {
		t.Fatalf("oracle: %v", err)
	}
	buf := make([]byte, n+1)
	if _, err := io.ReadFull(l.out, buf); err != nil {
		t.Fatalf("oracle: %v", err)
	}
	return ret, string(buf[:n])
}

// optionSets are the option combinations compared: every combination of
// Compact, SkipNames, EmitZeroes and (withStrings) EmitStrings, with two
// indentations.
func optionSets(withStrings bool) []Dumper {
	var sets []Dumper
	n := 8
	if withStrings {
		n = 16
	}
	for bits := range n {
		for _, ind := range []struct {
			level int
			str   string
		}{{0, ""}, {2, ".."}} {
			sets = append(sets, Dumper{Compact: bits&1 != 0, SkipNames: bits&2 != 0, EmitZeroes: bits&4 != 0,
				EmitStrings: bits&8 != 0, IndentLevel: ind.level, Indent: ind.str})
		}
	}
	return sets
}

// randomData returns a value's worth of bytes, or fewer, or more.
func randomData(r *rand.Rand, size int64) []byte {
	n := int(min(max(size, 8), 1024))
	switch r.IntN(4) {
	case 0:
		n = r.IntN(n + 2)
	case 1:
		n += r.IntN(8)
	}
	data := make([]byte, n)
	for i := range data {
		switch r.IntN(5) {
		case 0:
			data[i] = 0
		case 1:
			data[i] = 0xff
		case 2:
			data[i] = byte(0x20 + r.IntN(95))
		default:
			data[i] = byte(r.Uint32())
		}
	}
	return data
}

// oracles are the two libbpfs, running over one BTF.
type oracles struct {
	old, modern *libbpfOracle
	builds      []oracleBuild
	compared    int // dumps compared with both
	changed     int // of them, where libbpf 1.1 and 1.7 differ
}

func startOracles(t *testing.T, builds []oracleBuild, btfPath string) *oracles {
	o := &oracles{old: startOracle(t, builds[0], btfPath), modern: startOracle(t, builds[1], btfPath), builds: builds}
	t.Cleanup(func() {
		t.Logf("%d dumps compared with libbpf 1.7 (%d with 1.1 too); 1.1 differs from 1.7 in %d", o.compared, o.compared/2, o.changed)
	})
	return o
}

// compare dumps data as typ with every option set, here and in both
// libbpfs. The port must print what libbpf 1.7 prints, always; and so what
// libbpf 1.1 prints wherever 1.1 agrees with 1.7. Where it does not,
// libbpf changed since 1.1 (seen here: with emit_zeroes 1.1 prints no NUL
// that ends a char array and stops the arrays around it; it fails structs
// whose bitfields end in the last bytes of the data): those are counted in
// o.changed and logged.
func compare(t *testing.T, o *oracles, id btf.TypeID, typ btf.Type, enums *EnumKinds, data []byte) {
	t.Helper()
	for _, opts := range optionSets(true) {
		opts.Enums = enums
		got, err := opts.Dump(typ, data)
		ret, want := o.modern.dump(t, id, &opts, data)
		o.compared++
		if got != want || (err != nil) != (ret < 0) {
			t.Errorf("%s: %v, options %+v, data %x:\n\tDump   %q, %v\n\tlibbpf %q, %d", o.builds[1].name, typ, opts, data, got, err, want, ret)
		}
		if opts.EmitStrings {
			continue // libbpf 1.1 has no emit_strings
		}
		ret11, want11 := o.old.dump(t, id, &opts, data)
		if want11 == want && (ret11 < 0) == (ret < 0) {
			continue
		}
		if o.changed++; o.changed == 1 {
			t.Logf("%s prints otherwise than %s (libbpf changed since), e.g. %v, options %+v, data %x:\n\t1.7 %q, %d\n\t1.1 %q, %d",
				o.builds[0].name, o.builds[1].name, typ, opts, data, want, ret, want11, ret11)
		}
	}
}

func TestLibbpf(t *testing.T) {
	builds := buildOracles(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, fx := range fixtures {
		t.Run(filepath.Base(fx.obj), func(t *testing.T) {
			vars, rodata, enums, types := fixtureSpec(t, fx)
			o := startOracles(t, builds, fx.obj)
			for _, v := range vars {
				typ := v.Type.(*btf.Var).Type
				id, err := types.TypeID(typ)
				if err != nil {
					t.Fatal(err)
				}
				size := resolveSize(typ, defaultPtrSize)
				// the fixture's own value, then random ones
				compare(t, o, id, typ, enums, rodata[v.Offset:int64(v.Offset)+size])
				for range 10 {
					compare(t, o, id, typ, enums, randomData(r, size))
				}
			}
		})
	}
	t.Run("hand-built", func(t *testing.T) {
		for _, c := range formatCases() {
			if c.noOracle || c.typ == nil || strings.HasPrefix(c.name, "huge") {
				continue
			}
			b, err := btf.NewBuilder(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			id, err := b.Add(c.typ)
			if err != nil {
				continue // a type the kernel's format cannot hold
			}
			raw, err := b.Marshal(nil, &btf.MarshalOptions{Order: binary.LittleEndian})
			if err != nil {
				continue
			}
			path := filepath.Join(t.TempDir(), "raw.btf")
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			o := startOracles(t, builds, path)
			compare(t, o, id, c.typ, nil, c.data)
			for range 3 {
				compare(t, o, id, c.typ, nil, randomData(r, resolveSize(c.typ, defaultPtrSize)))
			}
		}
	})
}
