// Package writer writes perf.data recordings: file mode, keeping an existing
// recording's layout byte for byte while records are added to or removed
// from its data section (every absolute offset that moves is rewritten), and
// pipe mode, a stream perf reads from stdin. It also converts between the
// two: the pipe prelude (HEADER_ATTR, HEADER_FEATURE, ...) for a file's
// header sections, and header sections for a pipe's prelude records.
//
// The writer frames records and owns every offset; it does not decide which
// records to write. Output files are written to a temporary name and renamed
// into place only when complete (see Create).
package writer
