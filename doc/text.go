package doc

import (
	"bytes"
	"fmt"
	"io"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// perf's text of a BPF_METADATA record's entry, as
// perf_event__fprintf_bpf_metadata() prints it (perf script
// --show-bpf-events): each entry on a line of its own, after the line of
// the record's program (" prog %s").
const (
	entryPrefix = "  entry "
	entryFormat = entryPrefix + "%d: %20s = %s\n"
	// the stable form's, without the index
	unindexedFormat = "  entry: %20s = %s\n"
)

// WriteEntry writes entry i of a record after prefix, as perf writes it
// ("  entry %d: %20s = %s"), with what came from the input escaped
// (safetext.Clean).
func WriteEntry(w io.Writer, prefix string, i int, key, value string) error {
	_, err := fmt.Fprintf(w, "%s"+entryFormat, prefix, i, safetext.Clean(key), safetext.Clean(value))
	return err
}

// WriteUnindexedEntry writes an entry as WriteEntry does, without its
// index ("  entry: %20s = %s"): the stable form's, in which a variable
// removed does not change the line of every entry after it.
func WriteUnindexedEntry(w io.Writer, key, value string) error {
	_, err := fmt.Fprintf(w, unindexedFormat, safetext.Clean(key), safetext.Clean(value))
	return err
}

// IsEntryLine reports whether line (without its newline) is an entry as
// perf writes it (WriteEntry without a prefix) of a key without blanks,
// as a variable's name is: ^  entry \d+: +[^ ]+ = .
func IsEntryLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte(entryPrefix))
	if !ok {
		return false
	}
	d := 0
	for d < len(rest) && '0' <= rest[d] && rest[d] <= '9' {
		d++
	}
	if d == 0 || d+1 >= len(rest) || rest[d] != ':' || rest[d+1] != ' ' {
		return false
	}
	k := d + 1
	for k < len(rest) && rest[k] == ' ' {
		k++
	}
	e := k
	for e < len(rest) && rest[e] != ' ' {
		e++
	}
	return e > k && bytes.HasPrefix(rest[e:], []byte(" = "))
}
