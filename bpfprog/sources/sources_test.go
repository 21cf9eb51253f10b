package sources

import (
	"errors"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/bpfprog/journal"
	"github.com/bpfmeta/bpfmeta/bpfprog/snapshot"
	"github.com/bpfmeta/bpfmeta/internal/testkit"
)

var example = testkit.RepoPath("bpfprog", "snapshot", "testdata", "example.jsonl")

// given is args of flags given with a path, named as cmd names them.
func given(kv ...string) map[string]Arg {
	args := map[string]Arg{}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i]] = Arg{Path: kv[i+1], Set: true, Name: "'" + kv[i+1] + "'"}
	}
	return args
}

// noStdin is an Env whose standard input may not be read.
func noStdin(t *testing.T) *Env {
	return &Env{
		Stdin: func(r *Row) (*os.File, error) { t.Fatalf("--%s: stdin read", r.Flag); return nil, nil },
		Warn:  func(s string) { t.Errorf("warning: %s", s) },
	}
}

// TestUsage: the rows' flags and usages, as inject -h and annotate -h
// show them (their goldens show them whole).
func TestUsage(t *testing.T) {
	for _, tt := range []struct {
		flag, instead string
		stdin         bool
		want          string
	}{
		{"snapshot", "the running kernel", true, "take the metadata from snapshot `FILE` (bpfmeta snapshot, watch; - for stdin) instead of the running kernel"},
		{"snapshot", "the recording's records or the running kernel", false, "take the metadata from snapshot `FILE` (bpfmeta snapshot, watch) instead of the recording's records or the running kernel"},
		{"journal", "the running kernel", true, "take the metadata of programs no longer loaded from the journal in `DIR` (bpfmeta watch --journal; default /var/lib/bpfmeta when it exists)"},
	} {
		i := slices.IndexFunc(Rows, func(r Row) bool { return r.Flag == tt.flag })
		if i < 0 {
			t.Fatalf("no row --%s", tt.flag)
		}
		if got := Rows[i].Usage(tt.instead, tt.stdin); got != tt.want {
			t.Errorf("--%s usage:\n got %s\nwant %s", tt.flag, got, tt.want)
		}
	}
}

// TestChoice: which flags go together, and which name a source read
// instead of the running kernel; none of these reaches the kernel.
func TestChoice(t *testing.T) {
	bad := "--journal and --snapshot: the journal is read with the running kernel, not with a snapshot"
	for _, tt := range []struct {
		name    string
		args    map[string]Arg
		instead bool
		err     string // a *UsageError's
	}{
		{"journal with snapshot", given("snapshot", "s.jsonl", "journal", "j"), true, bad},
		{"an empty journal with snapshot", map[string]Arg{"snapshot": {Path: "s", Set: true}, "journal": {Set: true}}, true, bad},
		{"snapshot -", given("snapshot", "-", "journal", "j"), true, bad},
		{"an empty snapshot", map[string]Arg{"snapshot": {Set: true}}, false, ""},
		{"none", nil, false, ""},
	} {
		if got := Instead(tt.args); got != tt.instead {
			t.Errorf("%s: Instead = %v, want %v", tt.name, got, tt.instead)
		}
		if tt.err == "" {
			continue
		}
		_, err := Open(tt.args, noStdin(t))
		var ue *UsageError
		if !errors.As(err, &ue) || err.Error() != tt.err {
			t.Errorf("%s: %v, want the usage error %q", tt.name, err, tt.err)
		}
	}
	// two rows that replace the kernel
	rows := append([]Row{{Flag: "other", What: "another", ReplacesKernel: true}}, Rows...)
	_, err := open(rows, given("snapshot", "s", "other", "o"), noStdin(t))
	var ue *UsageError
	if !errors.As(err, &ue) || err.Error() != "--other and --snapshot: each names the source read instead of the running kernel; give one" {
		t.Errorf("two sources instead of the kernel: %v", err)
	}
}

// TestSnapshot: --snapshot opens the snapshot file, or standard input's,
// named as the command names it; its errors are *OpenErrors of that name,
// standard input's own error is returned as it is.
func TestSnapshot(t *testing.T) {
	o, err := Open(given("snapshot", example), noStdin(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := o.Source.(*snapshot.File); !ok || o.Name != "'"+example+"'" {
		t.Errorf("--snapshot FILE: %T named %s", o.Source, o.Name)
	}
	o.Close()

	_, err = Open(given("snapshot", "/nonexistent"), noStdin(t))
	var oe *OpenError
	if !errors.As(err, &oe) || oe.Name != "'/nonexistent'" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--snapshot of a missing file: %v", err)
	}

	f, err := os.Open(example)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := noStdin(t)
	env.Stdin = func(r *Row) (*os.File, error) { return f, nil }
	args := map[string]Arg{"snapshot": {Path: "-", Set: true, Name: "stdin"}}
	if o, err = Open(args, env); err != nil || o.Name != "stdin" {
		t.Fatalf("--snapshot -: %v, %v", o, err)
	}
	if _, ok := o.Source.(bpfprog.Lister); !ok {
		t.Errorf("--snapshot -: %T is no Lister", o.Source)
	}
	o.Close()

	errStdin := errors.New("stdin is a terminal")
	env.Stdin = func(r *Row) (*os.File, error) {
		if r.Flag != "snapshot" {
			t.Errorf("Stdin asked for --%s", r.Flag)
		}
		return nil, errStdin
	}
	if _, err := Open(args, env); err != errStdin {
		t.Errorf("--snapshot - without stdin: %v, want Env.Stdin's error itself", err)
	}
}

// TestKernel: without a source named instead, the running kernel with the
// journal --journal names, or the default one when it exists and keeps
// the rules, else none.
func TestKernel(t *testing.T) {
	testkit.BPF(t)
	dir := t.TempDir()
	writable := filepath.Join(dir, "writable")
	jw, err := journal.Create(writable, bpfprog.System{Hostname: "h", BootID: "b"}, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jw.Close()
	if err := os.Chmod(writable, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		args       map[string]Arg
		defaultDir string
		warn, err  string // what they contain
	}{
		{"no default journal", nil, filepath.Join(dir, "none"), "", ""},
		{"no default at all", nil, "", "", ""},
		{"a default journal others can write", nil, writable, "the journal " + writable + " is not read: ", ""},
		{"--journal others can write", given("journal", writable), filepath.Join(dir, "none"), "", writable + ": "},
		{"--journal missing", given("journal", filepath.Join(dir, "none")), "", "", "none"},
	} {
		var warned []string
		env := &Env{DefaultJournal: tt.defaultDir, Warn: func(s string) { warned = append(warned, s) },
			Stdin: func(r *Row) (*os.File, error) { t.Fatalf("stdin read"); return nil, nil }}
		o, err := Open(tt.args, env)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		default:
			if _, ok := o.Source.(*journal.Source); !ok || o.Name != "the running kernel" {
				t.Errorf("%s: %T named %s", tt.name, o.Source, o.Name)
			}
			o.Close()
		}
		if got := strings.Join(warned, "\n"); tt.warn == "" && got != "" || !strings.Contains(got, tt.warn) {
			t.Errorf("%s: warned %q, want %q", tt.name, got, tt.warn)
		}
	}
}

// TestRowsWithKernel: the rows read with the kernel are opened in order,
// each on the one before it, whether their flag is given or not, and
// closed last first; one whose source lists nothing is an error.
func TestRowsWithKernel(t *testing.T) {
	testkit.BPF(t)
	var log []string
	row := func(flag string, lists bool) Row {
		return Row{Flag: flag, What: "the " + flag, Open: func(a Arg, k bpfprog.Lister, _ *Env) (bpfprog.Source, func(), error) {
			log = append(log, "open "+flag+" "+a.Path)
			if !lists {
				return struct{ bpfprog.Source }{k}, nil, nil
			}
			return named{k, flag}, func() { log = append(log, "close "+flag) }, nil
		}}
	}
	rows := []Row{row("a", true), {Flag: "instead", ReplacesKernel: true}, row("b", true)}
	o, err := open(rows, given("b", "B"), noStdin(t))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := o.Source.(named); !ok || n.name != "b" || n.Lister.(named).name != "a" || o.Name != "b" {
		t.Errorf("the kernel with a, then b: %#v named %s", o.Source, o.Name)
	}
	o.Close()
	if got, want := strings.Join(log, "; "), "open a ; open b B; close b; close a"; got != want {
		t.Errorf("opened and closed: %s, want %s", got, want)
	}

	log = nil
	_, err = open([]Row{row("a", true), row("c", false)}, nil, noStdin(t))
	if err == nil || err.Error() != "--c: the c lists no programs, and the running kernel it is read with does" {
		t.Errorf("a row whose source lists nothing: %v", err)
	}
	if got, want := strings.Join(log, "; "), "open a ; open c ; close a"; got != want {
		t.Errorf("opened and closed: %s, want %s", got, want)
	}
}

// named is a Lister that describes itself as name.
type named struct {
	bpfprog.Lister
	name string
}

func (n named) Describe() string                        { return n.name }
func (n named) WhyNot(error, bool) string               { return "" }
func (n named) Hint() string                            { return "" }
func (n named) All() iter.Seq2[*bpfprog.Program, error] { return n.Lister.All() }
