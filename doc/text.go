package doc

import (
	"fmt"
	"io"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// The stable form's line of an entry: perf's (perfdata.AppendEntryLine)
// without the index.
const unindexedFormat = "  entry: %20s = %s\n"

// WriteEntry writes entry i of a record after prefix, as perf writes it
// ("  entry %d: %20s = %s"), with what came from the input escaped
// (safetext.Clean): perfdata.AppendEntryLine's line.
func WriteEntry(w io.Writer, prefix string, i int, key, value string) error {
	_, err := w.Write(perfdata.AppendEntryLine(nil, prefix, i, key, value))
	return err
}

// WriteUnindexedEntry writes an entry as WriteEntry does, without its
// index ("  entry: %20s = %s"): the stable form's, in which a variable
// removed does not change the line of every entry after it.
func WriteUnindexedEntry(w io.Writer, key, value string) error {
	_, err := fmt.Fprintf(w, unindexedFormat, safetext.Clean(key), safetext.Clean(value))
	return err
}
