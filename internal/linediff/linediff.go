// Package linediff writes the unified diff of two texts, and compares a text with its golden.
//
// It writes the unified diff of two texts, line by line, as diff -u does:
// what a failing golden test prints, so that a change of one value in a long
// golden reads as that line, not as both texts whole; and Golden, the one
// compare of a text with its golden file.
package linediff

import (
	"fmt"
	"strings"
)

// contextLines is the number of unchanged lines shown around a change (diff -u's).
const contextLines = 3

// maxCells bounds the table of the longest common subsequence: beyond it
// (two texts of over 2,000 differing lines each), the differing middle is
// shown as all removed, then all added.
const maxCells = 1 << 22

// op is one line of the diff: ' ' kept, '-' only in a, '+' only in b.
type op struct {
	kind byte
	line string
}

// Unified is the diff from a (named aName) to b (bName), "" when they are
// equal.
func Unified(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	ops := diff(lines(a), lines(b))
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	for start := 0; start < len(ops); {
		if ops[start].kind == ' ' {
			start++
			continue
		}
		lo, hi := max(0, start-contextLines), hunkEnd(ops, start)
		writeHunk(&out, ops, lo, hi)
		start = hi
	}
	return out.String()
}

// hunkEnd is the end of the hunk of the change at start: contextLines lines
// after its last change, changes closer than 2*contextLines lines merged in.
func hunkEnd(ops []op, start int) int {
	end, kept := start, 0
	for i := start; i < len(ops); i++ {
		if ops[i].kind != ' ' {
			end, kept = i+1, 0
			continue
		}
		if kept++; kept > 2*contextLines {
			break
		}
	}
	return min(len(ops), end+contextLines)
}

// writeHunk writes ops[lo:hi] under its "@@ -l,n +l,n @@" line.
func writeHunk(out *strings.Builder, ops []op, lo, hi int) {
	aLine, bLine := 1, 1
	for _, o := range ops[:lo] {
		if o.kind != '+' {
			aLine++
		}
		if o.kind != '-' {
			bLine++
		}
	}
	aN, bN := 0, 0
	for _, o := range ops[lo:hi] {
		if o.kind != '+' {
			aN++
		}
		if o.kind != '-' {
			bN++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", span(aLine, aN), span(bLine, bN))
	for _, o := range ops[lo:hi] {
		out.WriteByte(o.kind)
		out.WriteString(o.line)
		out.WriteByte('\n')
	}
}

// span is a hunk's range as diff -u writes it: an empty one starts at the
// line before.
func span(line, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", line-1)
	case 1:
		return fmt.Sprint(line)
	}
	return fmt.Sprintf("%d,%d", line, n)
}

// lines splits s into lines; a last line without "\n" is marked.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	for i, x := range l {
		if t, ok := strings.CutSuffix(x, "\n"); ok {
			l[i] = t
		} else {
			l[i] = x + "\n\\ No newline at end of file"
		}
	}
	return l
}

// diff is the edit from a to b along a longest common subsequence of
// lines, the common prefix and suffix taken off first.
func diff(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []op
	for _, l := range a[:pre] {
		ops = append(ops, op{' ', l})
	}
	ops = append(ops, middle(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, op{' ', l})
	}
	return ops
}

// middle is diff of two texts that differ in their first and last lines.
func middle(a, b []string) []op {
	var ops []op
	if len(a)*len(b) > maxCells {
		for _, l := range a {
			ops = append(ops, op{'-', l})
		}
		for _, l := range b {
			ops = append(ops, op{'+', l})
		}
		return ops
	}
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:]
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			ops = append(ops, op{'-', a[i]}) // removed before added, as diff -u
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	return ops
}
