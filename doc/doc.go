// Package doc is every document bpfmeta writes: its JSON documents and perf's text lines.
//
// It is every document bpfmeta writes: the kind and schema of each JSON
// document (programs --json, show --json, their --stable forms, the first
// line of a snapshot and of a journal segment) and perf's text lines of
// metadata. A program reads bpfmeta's output with the types bpfmeta writes
// it from (docs/json.md).
package doc

import (
	"encoding/json"
	"io"

	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// FormatVersion is the version of bpfmeta's JSON: snapshot files, the
// journal and the --json output of programs and show. Version 1 was a
// snapshot as one JSON object; bpfmeta still reads it (bpfprog.DecodeV1).
const FormatVersion = 2

// Header begins every JSON document bpfmeta writes: which version of the
// format, and what kind of document it is (Kind...).
type Header struct {
	FormatVersion int    `json:"format_version"`
	Kind          string `json:"kind"`
}

// NewHeader is the header of a document of kind, in this FormatVersion.
func NewHeader(kind string) Header { return Header{FormatVersion: FormatVersion, Kind: kind} }

// The kinds of document, each a Header's Kind.
const (
	KindPrograms       = "programs"        // programs --json: Programs
	KindShow           = "show"            // show --json: Show
	KindShowStable     = "show-stable"     // show --stable --json: ShowStable
	KindProgramsStable = "programs-stable" // programs --stable --json: ProgramsStable
	KindSnapshot       = "snapshot"        // the first line of a snapshot (package bpfprog/snapshot)
	KindJournal        = "journal"         // a journal segment's first record (package bpfprog/journal)
)

// Encode writes the document v as bpfmeta prints its documents: indented
// by two spaces, what could act on a terminal escaped (safetext.JSON),
// and a newline.
func Encode(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(safetext.JSON(b), '\n'))
	return err
}
