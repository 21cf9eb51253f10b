// Package writer writes perf.data recordings as perf reads them, in file or pipe mode.
//
// It writes perf.data recordings as perf reads them, from the records of
// another recording and records a program adds: file mode, keeping an
// existing recording's layout byte for byte while records are added to or
// removed from its data section (every absolute offset that moves is
// rewritten), and pipe mode, a stream perf reads from stdin; and between the
// two (the pipe prelude of HEADER_ATTR, HEADER_FEATURE, ... records for a
// file's header sections, header sections for a pipe's prelude).
//
// A Writer is made for one output by New, which decides the output's
// format, and is used as archive/tar's is: WriteRecord for every record, in
// order, then Close. The writer frames records and owns every offset; it
// does not decide which records to write (package inject does), and it does
// not create files (the caller opens the output).
//
// Memory stays bounded whatever the input claims: records are written as
// they come (from the reader's buffers where it keeps them for the writer),
// header sections are copied in fixed-size pieces or in the kernel
// (copy_file_range), and what a pipe-to-file conversion must keep
// until the end goes to a spool file, not to memory.
package writer
