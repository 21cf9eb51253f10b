// Package cliapp is what urfave/cli v2 lacks: flag order, -h, man page, completion, version.
//
// It is what urfave/cli v2 lacks, for any program built with it: flags after
// arguments (ReorderFlags), -h that lists flags short form first with their
// defaults (SetHelp, SetAppHelp), a suggestion for a mistyped flag, a man
// page that agrees with -h (ManPage), shell completion scripts and the words
// they complete (Completion, Complete), and the version from the build info.
// It knows nothing of bpfmeta's commands, nor of what a run does
// (cmd/internal/cliutil).
package cliapp

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// What make dist stamps into a release binary with the linker
// (-X .../cliapp.stampVersion=...): the version its packages carry (the
// tag, or git describe, scripts/dist-version.sh), the commit and the
// commit's time. Empty in any other build.
var stampVersion, stampCommit, stampTime string

// Version is what NAME --version prints: the version make dist stamped,
// else the module version (a tag for go install ...@vX.Y.Z, "(devel)" for
// a build from a clone); the VCS revision the binary was built from; and
// the Go release that built it.
func Version(name string) string {
	v, rev := "(unknown)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
		rev = buildRevision(bi.Settings)
	}
	if stampVersion != "" {
		v, rev = stampVersion, fmt.Sprintf(" (commit %s, %s)", stampCommit, stampTime)
	}
	return fmt.Sprintf("%s %s%s %s %s/%s", name, v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// buildRevision is " (revision R, TIME[, modified])" from the VCS
// settings go build records, or "" without them.
func buildRevision(settings []debug.BuildSetting) string {
	var revision, at, modified string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if revision == "" {
		return ""
	}
	return fmt.Sprintf(" (revision %.12s, %s%s)", revision, at, modified)
}

// ReorderFlags moves a command's flags that follow its arguments before
// them, so that `bpfmeta programs 97 --json` means what it says (urfave/cli
// v2 stops at the first argument), and those of its flags that precede the
// command after its name (`bpfmeta -v inject` is `bpfmeta inject -v`).
// Nothing after "--" moves, nor any argument of the commands in keep, whose
// arguments are a command line of their own.
func ReorderFlags(app *cli.App, args []string, keep ...string) []string {
	if len(args) < 3 {
		return args
	}
	ci := slices.IndexFunc(args[1:], func(a string) bool { return !strings.HasPrefix(a, "-") })
	if ci < 0 {
		return args
	}
	ci++
	cmd := app.Command(args[ci])
	if cmd == nil {
		return args
	}
	var before, hoisted []string
	for _, a := range args[1:ci] {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); hasFlag(cmd.Flags, name) {
			hoisted = append(hoisted, a)
		} else {
			before = append(before, a)
		}
	}
	if len(hoisted) > 0 {
		args = slices.Concat(args[:1], before, args[ci:ci+1], hoisted, args[ci+1:])
		ci = 1 + len(before)
	}
	if slices.Contains(keep, cmd.Name) {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		if v, ok := f.(cli.DocGenerationFlag); ok && v.TakesValue() {
			for _, n := range f.Names() {
				takesValue[n] = true
			}
		}
	}
	var flags, rest []string
	tail := args[ci+1:]
	for i := 0; i < len(tail); i++ {
		a := tail[i]
		switch {
		case a == "--":
			rest = append(rest, tail[i:]...)
			i = len(tail)
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if takesValue[name] && !strings.Contains(a, "=") && i+1 < len(tail) {
				i++
				flags = append(flags, tail[i])
			}
		default:
			rest = append(rest, a)
		}
	}
	out := slices.Clone(args[:ci+1])
	out = append(out, flags...)
	return append(out, rest...)
}

// hasFlag reports whether one of flags is called name.
func hasFlag(flags []cli.Flag, name string) bool {
	return slices.ContainsFunc(flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
}
