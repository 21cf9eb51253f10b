package testkit

import (
	"os"
	"path/filepath"
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
