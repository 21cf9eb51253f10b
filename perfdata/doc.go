// Package perfdata is the vocabulary of perf.data files and pipe streams.
//
// It is shared by the reader and the writer: record and feature identifiers,
// the file and pipe headers, perf_event_attr as far as a rewriter needs it,
// and the records bpfmeta decodes or builds (KSYMBOL, BPF_EVENT,
// BPF_METADATA).
//
// It follows tools/perf's own definitions (tools/lib/perf/include/perf/event.h,
// tools/perf/util/header.h, include/uapi/linux/perf_event.h). It does no I/O:
// reading and writing streams are the reader's and the writer's business.
//
// Every multi-byte field is in the byte order of the machine that wrote the
// recording, so decoders take a binary.ByteOrder.
package perfdata
