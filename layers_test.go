package bpfmeta_test

import (
	"cmp"
	"fmt"
	"maps"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

const module = "github.com/bpfmeta/bpfmeta"

// layers are the module's packages from the bottom up (README: "How it is
// built"): a package imports only packages of the layers below its own,
// never one beside it or above. A new package goes into the table, unless
// a "DIR/..." there holds it (a package named itself is not DIR/...'s).
var layers = []struct {
	what string
	pkgs []string
}{
	{"the OS and buffers, on nothing of ours", []string{"internal/enum", "internal/budget", "internal/safetext", "internal/linediff", "internal/scratch", "internal/retain", "internal/bpfsys"}},
	{"the OS and buffers, on those", []string{"internal/hugebuf", "internal/outfile"}},
	{"the perf.data vocabulary", []string{"perfdata"}},
	{"the kernel's perf events; runs of records; the tests' kit", []string{"internal/perfevent", "internal/recrun", "internal/testkit"}},
	{"bytes -> records, records -> bytes", []string{"reader", "writer"}},
	{"a recording's records listed as text", []string{"dump"}},
	{"programs: in a recording, as perf records them, BTF; the pipeline's tests", []string{"bpftrack", "bpfprog", "btf", "internal/testkit/rectest"}},
	{"the documents bpfmeta writes: kinds, JSON, perf's text lines", []string{"doc"}},
	{"metadata sources (a new one, bpfprog/NAME, is here already)", []string{"bpfprog/..."}},
	{"following loads; which records to add; which source a command names", []string{"bpfprog/watch", "inject", "bpfprog/sources"}},
	{"what the library makes of records", []string{"annotate", "stable"}},
	{"golden checks", []string{"bpfmetatest"}},
	{"the command line's support, on the library", []string{"cmd/internal/cliapp", "cmd/internal/childcmd", "cmd/internal/demo"}},
	{"the command line's support, on those", []string{"cmd/internal/cliutil"}},
	{"the command", []string{"cmd/bpfmeta"}},
	{"the module's own tests", []string{"."}},
}

// allowed are the imports the layers forbid that are there still, each
// with the issue that removes it.
var allowed = map[[2]string]string{}

// TestLayers: no package of the module imports one beside it or above it
// (issue 40 item 2), for each kind of Linux GOARCH (files of one word size
// or byte order may import what others do not).
func TestLayers(t *testing.T) {
	goTool := testkit.Command(t, "go")
	named := map[string]int{}
	for i, l := range layers {
		for _, p := range l.pkgs {
			named[p] = i
		}
	}
	layerOf := func(pkg string) (int, bool) {
		if l, ok := named[pkg]; ok {
			return l, true
		}
		for dir := pkg; dir != "."; {
			dir = path.Dir(dir)
			if l, ok := named[dir+"/..."]; ok {
				return l, true
			}
		}
		return 0, false
	}
	short := func(path string) (string, bool) {
		if path == module {
			return ".", true
		}
		p, ok := strings.CutPrefix(path, module+"/")
		return p, ok
	}
	used := map[[2]string]bool{}
	bad := map[[2]string][]string{} // the GOARCHes of each
	for _, arch := range []string{"amd64", "386", "arm64", "arm", "s390x"} {
		cmd := exec.Command(goTool, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
		cmd.Dir = testkit.RepoPath()
		cmd.Env = append(cmd.Environ(), "GOOS=linux", "GOARCH="+arch)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOARCH=%s go list: %v\n%s", arch, err, stderr(err))
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			from, _ := short(fields[0])
			lf, ok := layerOf(from)
			if !ok {
				bad[[2]string{from, ""}] = append(bad[[2]string{from, ""}], arch)
				continue
			}
			for _, imp := range fields[1:] {
				to, ours := short(imp)
				lt, known := layerOf(to)
				if !ours || !known || lt < lf {
					continue // an unknown to has a line of its own
				}
				arrow := [2]string{from, to}
				if _, ok := allowed[arrow]; ok {
					used[arrow] = true
				} else {
					bad[arrow] = append(bad[arrow], arch)
				}
			}
		}
	}
	arrows := slices.SortedFunc(maps.Keys(bad), func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	})
	for _, arrow := range arrows {
		from, to, archs := arrow[0], arrow[1], strings.Join(bad[arrow], ", ")
		if to == "" {
			t.Errorf("package %s is in no layer: add it to layers_test.go's table (GOARCH %s)", from, archs)
			continue
		}
		lf, _ := layerOf(from)
		lt, _ := layerOf(to)
		where := "beside it"
		if lt > lf {
			where = "above it"
		}
		t.Errorf("%s imports %s, %s (GOARCH %s): %s is in layer %d (%s), %s in layer %d (%s)", from, to, where, archs, from, lf, layers[lf].what, to, lt, layers[lt].what)
	}
	for arrow, why := range allowed {
		if !used[arrow] {
			t.Errorf("%s no longer imports %s: remove the exception (%s) from layers_test.go", arrow[0], arrow[1], why)
		}
	}
}

func stderr(err error) string {
	if e, ok := err.(*exec.ExitError); ok {
		return string(e.Stderr)
	}
	return fmt.Sprint(err)
}
