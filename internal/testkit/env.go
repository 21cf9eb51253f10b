// Package testkit is what bpfmeta's tests share: requirements, corpus, perf, fixtures, goldens.
//
// It is what bpfmeta's tests share: the rule for tests that need something
// from the machine (root, a kernel that loads BPF programs, perf, clang),
// the repository's test data (the corpus of real recordings and what perf
// counted in them, the BPF fixtures), golden files, benchmark inputs,
// loading BPF programs and recording with perf, and the small helpers
// several packages' tests would otherwise each write (a directory's names, a
// command's pipes, a thread pinned to a CPU). What needs reader or writer is
// in testkit/rectest.
//
// A test that needs what the machine does not have skips with a one-line
// reason under plain `go test ./...`, and fails instead when
// BPFMETA_REQUIRE_ALL=1 (set by `make test` and CI), so that CI can never
// silently check less than it should.
//
// It is for tests only; nothing outside _test.go files imports it.
package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// requireAllEnv is the environment variable that turns every skip for a
// missing requirement into a failure.
const requireAllEnv = "BPFMETA_REQUIRE_ALL"

// ModernPerfEnv names the perf >= 6.17 the oracle tests compare with; it
// defaults to defaultModernPerf, which scripts/modern-perf.sh installs.
const (
	ModernPerfEnv     = "BPFMETA_MODERN_PERF"
	defaultModernPerf = "/opt/bpfmeta-perf/perf"
)

// requireAll reports whether missing requirements fail tests instead of
// skipping them.
func requireAll() bool { return os.Getenv(requireAllEnv) == "1" }

// Missing ends the test because something it needs is missing: a skip
// under plain go test, a failure with BPFMETA_REQUIRE_ALL=1.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if requireAll() {
		t.Fatalf("%s (%s=1: a missing requirement is a failure)", msg, requireAllEnv)
	}
	t.Skip(msg)
}

// Root ends the test unless it runs as root.
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "needs root (CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON)")
	}
}

var bpfOK = sync.OnceValue(func() error {
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}})
	if err != nil {
		return err
	}
	return p.Close()
})

// BPF ends the test unless it can load BPF programs and read them back by
// id: root on a kernel with BPF.
func BPF(t testing.TB) {
	t.Helper()
	Root(t)
	if err := bpfOK(); err != nil {
		Missing(t, "cannot load a BPF program: %v", err)
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		Missing(t, "needs a kernel with BTF: %v", err)
	}
	Exclusive(t)
}

// Command returns the path of a program the test runs, or ends the test
// when it is not installed.
func Command(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "needs %s: %v", name, err)
	}
	return p
}

// PerfStock returns the system's perf (Debian 12: perf 6.1, which writes no
// BPF_METADATA records and cannot read them).
func PerfStock(t testing.TB) string {
	t.Helper()
	p := Command(t, "perf")
	Exclusive(t)
	return p
}

var (
	versionRE  = regexp.MustCompile(`^perf version (\d+)\.(\d+)`)
	modernPerf = sync.OnceValues(func() (string, error) {
		p := os.Getenv(ModernPerfEnv)
		if p == "" {
			p = defaultModernPerf
		}
		out, err := exec.Command(p, "version", "--build-options").CombinedOutput()
		if err != nil {
			return p, fmt.Errorf("%s: %v (scripts/modern-perf.sh installs it; %s names another)", p, err, ModernPerfEnv)
		}
		m := versionRE.FindStringSubmatch(string(out))
		if m == nil {
			return p, fmt.Errorf("%s version says %q", p, strings.SplitN(string(out), "\n", 2)[0])
		}
		maj, _ := strconv.Atoi(m[1])
		min, _ := strconv.Atoi(m[2])
		if maj < 6 || maj == 6 && min < 17 {
			return p, fmt.Errorf("%s is perf %s.%s, before 6.17 (the first to write BPF_METADATA)", p, m[1], m[2])
		}
		if !strings.Contains(string(out), "libbpf-strings: [ on") {
			return p, errors.New(p + " was built without libbpf-strings: it writes no BPF_METADATA")
		}
		return p, nil
	})
)

// PerfModern returns a perf >= 6.17 that writes BPF_METADATA records (the
// oracle), from BPFMETA_MODERN_PERF or at defaultModernPerf, or ends the
// test when there is none.
func PerfModern(t testing.TB) string {
	t.Helper()
	p, err := modernPerf()
	if err != nil {
		Missing(t, "needs a perf >= 6.17: %v", err)
	}
	Exclusive(t)
	return p
}

// ModernLibbpf is the libbpf >= 1.7 that scripts/modern-perf.sh installs in
// the modern perf's Debian sid root: Include holds its bpf/ headers, Lib
// its libbpf.so.1, and a program linked against it runs under the root's
// own dynamic loader: Run(prog, args...).
type ModernLibbpf struct {
	Include, Lib, LDSO string
}

// Run returns the command line that runs prog against the root's
// libraries (a system libbpf: prog as it is).
func (l ModernLibbpf) Run(prog string, args ...string) []string {
	if l.LDSO == "" {
		return append([]string{prog}, args...)
	}
	return append([]string{l.LDSO, "--library-path", l.Lib, prog}, args...)
}

// Libbpf17 returns the modern perf root's libbpf, or, when
// BPFMETA_MODERN_PERF names another perf (which has no such root), a
// system libbpf >= 1.7 that pkg-config finds; it ends the test when there
// is none.
func Libbpf17(t testing.TB) ModernLibbpf {
	t.Helper()
	if p := os.Getenv(ModernPerfEnv); p != "" && p != defaultModernPerf {
		return systemLibbpf17(t, p)
	}
	root := filepath.Join(filepath.Dir(defaultModernPerf), "root")
	lib := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	l := ModernLibbpf{Include: t.TempDir(), Lib: lib, LDSO: filepath.Join(lib, "ld-linux-x86-64.so.2")}
	for _, f := range []string{filepath.Join(root, "usr/include/bpf/btf.h"), filepath.Join(lib, "libbpf.so.1"), l.LDSO} {
		if _, err := os.Stat(f); err != nil {
			Missing(t, "needs the libbpf of the modern perf's root (scripts/modern-perf.sh installs it): %v", err)
		}
	}
	// only bpf/: the root's C library headers are not the host compiler's
	if err := os.Symlink(filepath.Join(root, "usr/include/bpf"), filepath.Join(l.Include, "bpf")); err != nil {
		t.Fatal(err)
	}
	return l
}

// systemLibbpf17 is Libbpf17 beside the perf BPFMETA_MODERN_PERF names:
// the system's libbpf, by pkg-config, if it is 1.7 or later.
func systemLibbpf17(t testing.TB, perf string) ModernLibbpf {
	t.Helper()
	var f []string
	var err error
	for _, arg := range []string{"--modversion", "--variable=includedir", "--variable=libdir"} {
		var out []byte
		if out, err = exec.Command("pkg-config", arg, "libbpf").Output(); err != nil {
			break
		}
		f = append(f, strings.TrimSpace(string(out)))
	}
	if err != nil {
		Missing(t, "%s=%s names a perf of its own: the libbpf 1.7 tests need a libbpf >= 1.7 that pkg-config finds (pkg-config libbpf: %v), or the root scripts/modern-perf.sh installs (unset %s)", ModernPerfEnv, perf, err, ModernPerfEnv)
	}
	var maj, min int
	fmt.Sscanf(f[0], "%d.%d", &maj, &min)
	if maj < 1 || maj == 1 && min < 7 {
		Missing(t, "%s=%s names a perf of its own: the libbpf 1.7 tests need a libbpf >= 1.7, and pkg-config finds libbpf %s (or unset %s for the root scripts/modern-perf.sh installs)", ModernPerfEnv, perf, f[0], ModernPerfEnv)
	}
	include, lib := f[1], f[2]
	l := ModernLibbpf{Include: t.TempDir(), Lib: lib}
	if err := os.Symlink(filepath.Join(include, "bpf"), filepath.Join(l.Include, "bpf")); err != nil {
		t.Fatal(err)
	}
	return l
}
