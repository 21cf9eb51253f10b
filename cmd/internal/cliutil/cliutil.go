// Package cliutil is a run of bpfmeta's command line: its session, -i and -o, progress.
//
// It is a run of bpfmeta's command line, apart from what its commands do:
// its session (standard streams, signals that must remove a half-written
// file first, the limits it needs, exit statuses), what -i and -o name
// (opened by package reader's and internal/outfile's policies, with the
// messages that say what went wrong), and the progress line on a terminal.
// It knows nothing of the commands themselves; urfave/cli's missing pieces
// are cmd/internal/cliapp's, and a child command (watch's CMD) is
// cmd/internal/childcmd's.
package cliutil
