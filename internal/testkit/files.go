package testkit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// ReadFile returns the content of the file at path; an error fails the
// test.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// DirNames returns the names of the entries of dir, sorted (os.ReadDir's
// order); an error fails the test.
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// CopyDir copies the files of directory src (a directory recording) into
// a new directory of the same base name in the test's temporary directory,
// and returns it.
func CopyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range DirNames(t, src) {
		if err := os.WriteFile(filepath.Join(dst, n), ReadFile(t, filepath.Join(src, n)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// NotExecutable writes a shell script without execute permission and
// returns its path: a command that is there but cannot run (EACCES; a
// shell's status 126).
func NotExecutable(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// SameDir checks that directories a and b hold the same files, byte for
// byte (a copy of a directory recording, or one given back by strip).
func SameDir(t testing.TB, a, b string) {
	t.Helper()
	na, nb := DirNames(t, a), DirNames(t, b)
	if !slices.Equal(na, nb) {
		t.Fatalf("%s has %q, %s %q", a, na, b, nb)
	}
	for _, n := range na {
		x, y := ReadFile(t, filepath.Join(a, n)), ReadFile(t, filepath.Join(b, n))
		if !bytes.Equal(x, y) {
			t.Errorf("%s: %s", n, FirstDiff(x, y))
		}
	}
}

// FirstDiff says where a and b, which differ, first differ.
func FirstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return fmt.Sprintf("first difference at %#x (sizes %d and %d)", i, len(a), len(b))
}

// OpenFDs counts the descriptors the process has open.
func OpenFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
