package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestFlagsReadByParse: a flag is read by its name (a method of
// *cli.Context that takes one: c.Bool(flagStrict), c.IsSet, c.String, ...)
// only in a parse function, a function named ...OptionsOf (each command's
// in its file, the shared flags' in flags.go), never in an Action or a
// helper: each command's flags are read in one place, into the struct of
// its options that the rest of it works from (issue 51 §2).
func TestFlagsReadByParse(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	parsed := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range flagReads(f) {
			if isParseFunc(r.fn) {
				parsed++
				continue
			}
			t.Errorf("%v: %s reads a flag by its name (%s) outside a parse function: read it in the command's ...OptionsOf into its options, and use the field", fset.Position(r.pos), funcName(r.fn), r.call)
		}
	}
	if parsed == 0 {
		t.Fatal("no parse function reads a flag: the scan no longer sees flag reads")
	}
}

// TestOptionsUsageErrors: the usage errors the parse functions find,
// each before anything is opened (no root, no file), with their messages
// and in their order: of two, the one the command checked first.
func TestOptionsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the message, after "bpfmeta: "
	}{
		{[]string{"dump", "--max-expansion", "-1", "-i", "x"}, "--max-expansion -1: give a number of times, or 0 for no limit"},
		{[]string{"show", "a", "b"}, "show reads one recording; got a and b"},
		{[]string{"convert", "a", "b"}, "convert reads one recording; got a and b (to write b: -o b)"},
		{[]string{"strip", "-o", "out", "a", "b"}, "strip reads one recording; got a and b"},
		{[]string{"dump", "-i", "a", "b"}, "dump: name the recording once, as -i FILE or as the argument; got -i a and b"},
		{[]string{"inject", "a", "b", "--max-expansion", "-1"}, "inject reads one recording; got a and b (to write b: -o b)"},
		{[]string{"show", "-q", "-v", "x"}, "show: -q and -v contradict each other"},
		{[]string{"programs", "--journal", "x", "--json"}, "programs --journal has no --json: the journal's records are listed as text"},
		{[]string{"programs", "--object", "x", "97"}, "programs --object takes no program ids or names: it prints every program of the object"},
		{[]string{"watch", "--journal", "d", "--", "true"}, "watch --journal runs no CMD: it runs until SIGINT, SIGTERM, SIGHUP or SIGQUIT"},
		{[]string{"watch", "--journal", "d", "-f"}, "watch --journal writes no snapshot: -o, -f and --no-clobber go without it"},
		{[]string{"watch", "--journal", "d", "--max-size", "huge"}, "--max-size: huge is not a size (bytes, or a number with K, M or G)"},
		{[]string{"watch", "--journal", "d", "--max-size", "1G"}, "--max-size: journal: a size limit of 1073741824 bytes: at least 4 MiB and at most 128 MiB"},
		{[]string{"snapshot", "stray"}, "snapshot takes no arguments (use -o FILE); got stray"},
		{[]string{"annotate", "stray", "--max-expansion", "-1"}, "annotate takes no arguments (the recording is -i FILE; the text comes on stdin); got stray"},
		{[]string{"annotate", "--max-expansion", "-1"}, "annotate reads perf script text on stdin: name the recording it was made from with -i FILE"},
		{[]string{"annotate", "-i", "x", "--snapshot", "-", "--pprof", "--folded"}, "annotate reads perf script text on stdin: name the file of a snapshot (--snapshot FILE)"},
		{[]string{"annotate", "-i", "x", "--pprof", "--folded", "--keys", ","}, "--pprof and --folded are two outputs: give one"},
		{[]string{"annotate", "-i", "x", "--keys", " , ", "--max-expansion", "-1"}, `--keys " , ": give the keys, comma-separated (--keys version,build)`},
		{[]string{"annotate", "-i", "x", "--max-expansion", "-3"}, "--max-expansion -3: give a number of times, or 0 for no limit"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := bpfmeta(t, nil, tc.args...)
			if want := "bpfmeta: " + tc.want + "\n"; r.code != exitUsage || r.stdout != "" || r.stderr != want {
				t.Errorf("%v, want exit 2 and %q", r, want)
			}
		})
	}
}

// TestFlagReads: the scan of TestFlagsReadByParse sees a flag read
// wherever it is written.
func TestFlagReads(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		bad       []string // the reads outside a parse function, by call
	}{
		{"helper", `func verbose(c *cli.Context) bool { return c.Bool("verbose") }`, []string{`c.Bool("verbose")`}},
		{"parse function", `func injectOptionsOf(c *cli.Context) bool { return c.Bool(flagStrict) && c.IsSet("require") }`, nil},
		{"action closure", `func cmd() *cli.Command {
	return &cli.Command{Action: func(ctx *cli.Context) error { _ = ctx.IsSet(flagOutput); return nil }}
}`, []string{"ctx.IsSet(flagOutput)"}},
		{"closure in a helper", `func open(c *cli.Context) func() string { return func() string { return c.String("output") } }`, []string{`c.String("output")`}},
		{"not a flag", `func run(c *cli.Context) error { _, _ = c.Args().First(), c.App.Writer; _ = c.NArg(); return nil }`, nil},
		{"every method that takes a name", `func run(c *cli.Context) { c.StringSlice("require"); c.Int("n"); c.Value("v"); c.Set("x", "1"); c.Count("v") }`,
			[]string{`c.StringSlice("require")`, `c.Int("n")`, `c.Value("v")`, `c.Set("x", "1")`, `c.Count("v")`}},
		{"another type's method", `func run(s *cliutil.Session, c *cli.Context) { s.String("x"); strings.Index("a", "b") }`, nil},
		{"package-level function value", `var action = func(c *cli.Context) error { return check(c.Bool("strict")) }`, []string{`c.Bool("strict")`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package main\n\nimport \"github.com/urfave/cli/v2\"\n\n"+tc.src+"\n", parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			var bad []string
			for _, r := range flagReads(f) {
				if !isParseFunc(r.fn) {
					bad = append(bad, r.call)
				}
			}
			if !reflect.DeepEqual(bad, tc.bad) {
				t.Errorf("reads outside a parse function %q, want %q", bad, tc.bad)
			}
		})
	}
	// the import renamed
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package main\n\nimport ucli \"github.com/urfave/cli/v2\"\n\nfunc f(c *ucli.Context) string { return c.String(\"o\") }\n", parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	if rs := flagReads(f); len(rs) != 1 {
		t.Errorf("with cli imported as ucli: %d reads, want 1", len(rs))
	}
}

// A flagRead is a call of a method of *cli.Context that takes a flag's
// name, in the top-level function fn (nil: in a package-level variable).
type flagRead struct {
	pos  token.Pos
	fn   *ast.FuncDecl
	call string
}

// isParseFunc reports whether fn is a parse function: one named
// ...OptionsOf.
func isParseFunc(fn *ast.FuncDecl) bool {
	return fn != nil && fn.Recv == nil && strings.HasSuffix(fn.Name.Name, "OptionsOf")
}

func funcName(fn *ast.FuncDecl) string {
	if fn == nil {
		return "a package-level variable"
	}
	return fn.Name.Name
}

// nameMethods are the methods of *cli.Context whose first argument is a
// flag's name: those that read (or set) a flag by it.
var nameMethods = func() map[string]bool {
	m := map[string]bool{}
	typ := reflect.TypeOf(&cli.Context{})
	for i := range typ.NumMethod() {
		if mt := typ.Method(i).Type; mt.NumIn() > 1 && mt.In(1).Kind() == reflect.String {
			m[typ.Method(i).Name] = true
		}
	}
	return m
}()

// flagReads are the calls in f of a method of nameMethods on a parameter
// of type *cli.Context: of each top-level declaration, those on the
// parameters of it or of any function literal in it.
func flagReads(f *ast.File) []flagRead {
	pkg := "cli"
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "github.com/urfave/cli/v2" && im.Name != nil {
			pkg = im.Name.Name
		}
	}
	isContext := func(e ast.Expr) bool {
		star, ok := e.(*ast.StarExpr)
		if !ok {
			return false
		}
		sel, ok := star.X.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && x.Name == pkg && sel.Sel.Name == "Context"
	}
	var reads []flagRead
	for _, decl := range f.Decls {
		fn, _ := decl.(*ast.FuncDecl)
		contexts := map[string]bool{}
		ast.Inspect(decl, func(n ast.Node) bool {
			var ft *ast.FuncType
			switch n := n.(type) {
			case *ast.FuncDecl:
				ft = n.Type
			case *ast.FuncLit:
				ft = n.Type
			}
			if ft != nil {
				for _, p := range ft.Params.List {
					if isContext(p.Type) {
						for _, name := range p.Names {
							contexts[name.Name] = true
						}
					}
				}
			}
			return true
		})
		ast.Inspect(decl, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !nameMethods[sel.Sel.Name] {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && contexts[x.Name] {
				var b strings.Builder
				b.WriteString(x.Name + "." + sel.Sel.Name + "(")
				for i, a := range call.Args {
					if i > 0 {
						b.WriteString(", ")
					}
					b.WriteString(exprString(a))
				}
				b.WriteString(")")
				reads = append(reads, flagRead{pos: call.Pos(), fn: fn, call: b.String()})
			}
			return true
		})
	}
	return reads
}

// exprString is a flag read's argument as written, for the message: a
// name or a literal, else "...".
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Value
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return "..."
}
