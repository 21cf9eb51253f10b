// Package enum is the one rule for a typed constant's String method.
//
// A constant's name comes from a table indexed by value, or Type(N) for a
// value the table does not name, as the String methods go generate's
// stringer writes (and debug/elf's stringName) print one.
//
// Not for bit sets (perfdata.KSymbolFlags prints its bits), nor for perf's
// record types and header features, which print as perf prints them: a bare
// number for one it does not know.
package enum

import "strconv"

// integer is what a table of names is indexed by.
type integer interface {
	~int | ~int32 | ~uint16
}

// String returns names[v], or typ(v) where names has no name for v (v
// outside the table, or an empty entry: a value the constants skip).
func String[T integer](names []string, v T, typ string) string {
	if v >= 0 && uint64(v) < uint64(len(names)) && names[v] != "" {
		return names[v]
	}
	return typ + "(" + strconv.FormatInt(int64(v), 10) + ")"
}
