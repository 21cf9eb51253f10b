package main

import (
	"fmt"
	"strings"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/internal/safetext"
)

// missingNames is an error naming the names no program matched, or nil.
func missingNames(sel *bpfprog.Selection, where string) error {
	var missing []string
	for _, n := range sel.MissingNames() {
		missing = append(missing, safetext.Quote(n))
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("no program named %s %s (bpfmeta programs without names lists them)", strings.Join(missing, ", "), where)
}

// missingIDs is an error naming the first id no program listed has, or
// nil (k.Programs refuses a missing id itself when no name is given).
func missingIDs(sel *bpfprog.Selection) error {
	if ids := sel.MissingIDs(); len(ids) > 0 {
		return fmt.Errorf("no program of id %d is loaded", ids[0])
	}
	return nil
}
