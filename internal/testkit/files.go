package testkit

import (
	"os"
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
