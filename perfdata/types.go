package perfdata

import (
	"encoding/binary"
	"strconv"
)

// RecordType is perf_event_header.type: a kernel record type (below 64) or
// one of perf's user types (64 and up), as in tools/lib/perf/include/perf/event.h.
type RecordType uint32

// Kernel record types (include/uapi/linux/perf_event.h).
const (
	RecordMmap              RecordType = 1
	RecordLost              RecordType = 2
	RecordComm              RecordType = 3
	RecordExit              RecordType = 4
	RecordThrottle          RecordType = 5
	RecordUnthrottle        RecordType = 6
	RecordFork              RecordType = 7
	RecordRead              RecordType = 8
	RecordSample            RecordType = 9
	RecordMmap2             RecordType = 10
	RecordAux               RecordType = 11
	RecordItraceStart       RecordType = 12
	RecordLostSamples       RecordType = 13
	RecordSwitch            RecordType = 14
	RecordSwitchCPUWide     RecordType = 15
	RecordNamespaces        RecordType = 16
	RecordKSymbol           RecordType = 17
	RecordBPFEvent          RecordType = 18
	RecordCgroup            RecordType = 19
	RecordTextPoke          RecordType = 20
	RecordAuxOutputHWID     RecordType = 21
	RecordCallchainDeferred RecordType = 22
)

// perf's user record types (enum perf_user_event_type).
const (
	RecordHeaderAttr        RecordType = 64
	RecordHeaderEventType   RecordType = 65
	RecordHeaderTracingData RecordType = 66
	RecordHeaderBuildID     RecordType = 67
	RecordFinishedRound     RecordType = 68
	RecordIDIndex           RecordType = 69
	RecordAuxtraceInfo      RecordType = 70
	RecordAuxtrace          RecordType = 71
	RecordAuxtraceError     RecordType = 72
	RecordThreadMap         RecordType = 73
	RecordCPUMap            RecordType = 74
	RecordStatConfig        RecordType = 75
	RecordStat              RecordType = 76
	RecordStatRound         RecordType = 77
	RecordEventUpdate       RecordType = 78
	RecordTimeConv          RecordType = 79
	RecordHeaderFeature     RecordType = 80
	RecordCompressed        RecordType = 81
	RecordFinishedInit      RecordType = 82
	RecordCompressed2       RecordType = 83
	RecordBPFMetadata       RecordType = 84
	RecordSchedstatCPU      RecordType = 85
	RecordSchedstatDomain   RecordType = 86
)

// UserTypeStart is the first of perf's own (non-kernel) record types.
const UserTypeStart RecordType = 64

// typeRow is a row of the record-type table (recordTypes).
type typeRow struct {
	Type RecordType
	// Name is perf's, as perf_event__name() has it (the names perf report
	// --stats prints: PERF_RECORD_HEADER_ATTR is "ATTR").
	Name string
	// Describe says what a record of the type holds, as bpfmeta dump
	// prints it after the name (Record.Describe); nil for a type it says
	// nothing more of.
	Describe func(r *Record, bo binary.ByteOrder) string
	// Inspected marks the kernel record types bpfmeta reads the programs
	// of a recording from (bpftrack, inject's tracker): every other
	// kernel record is only passed on (recrun.Passes).
	Inspected bool
}

// recordTypes is the record-type table: a row for each type perf defines,
// from which RecordType's String, Noun, Known and Inspected answer,
// recrun.Passes decides which records go a run at a time, and Describe
// (bpfmeta dump) says what a record holds. A new record type is a row
// here (its constant above).
var recordTypes = []typeRow{
	{Type: RecordMmap, Name: "MMAP"},
	{Type: RecordLost, Name: "LOST"},
	{Type: RecordComm, Name: "COMM"},
	{Type: RecordExit, Name: "EXIT"},
	{Type: RecordThrottle, Name: "THROTTLE"},
	{Type: RecordUnthrottle, Name: "UNTHROTTLE"},
	{Type: RecordFork, Name: "FORK"},
	{Type: RecordRead, Name: "READ"},
	{Type: RecordSample, Name: "SAMPLE"},
	{Type: RecordMmap2, Name: "MMAP2"},
	{Type: RecordAux, Name: "AUX"},
	{Type: RecordItraceStart, Name: "ITRACE_START"},
	{Type: RecordLostSamples, Name: "LOST_SAMPLES"},
	{Type: RecordSwitch, Name: "SWITCH"},
	{Type: RecordSwitchCPUWide, Name: "SWITCH_CPU_WIDE"},
	{Type: RecordNamespaces, Name: "NAMESPACES"},
	{Type: RecordKSymbol, Name: "KSYMBOL", Describe: describeKSymbol, Inspected: true},
	{Type: RecordBPFEvent, Name: "BPF_EVENT", Describe: describeBPFEvent, Inspected: true},
	{Type: RecordCgroup, Name: "CGROUP"},
	{Type: RecordTextPoke, Name: "TEXT_POKE"},
	{Type: RecordAuxOutputHWID, Name: "AUX_OUTPUT_HW_ID"},
	{Type: RecordCallchainDeferred, Name: "CALLCHAIN_DEFERRED"},

	{Type: RecordHeaderAttr, Name: "ATTR"},
	{Type: RecordHeaderEventType, Name: "EVENT_TYPE"},
	{Type: RecordHeaderTracingData, Name: "TRACING_DATA", Describe: describePayload},
	{Type: RecordHeaderBuildID, Name: "BUILD_ID"},
	{Type: RecordFinishedRound, Name: "FINISHED_ROUND"},
	{Type: RecordIDIndex, Name: "ID_INDEX"},
	{Type: RecordAuxtraceInfo, Name: "AUXTRACE_INFO"},
	{Type: RecordAuxtrace, Name: "AUXTRACE", Describe: describePayload},
	{Type: RecordAuxtraceError, Name: "AUXTRACE_ERROR"},
	{Type: RecordThreadMap, Name: "THREAD_MAP"},
	{Type: RecordCPUMap, Name: "CPU_MAP"},
	{Type: RecordStatConfig, Name: "STAT_CONFIG"},
	{Type: RecordStat, Name: "STAT"},
	{Type: RecordStatRound, Name: "STAT_ROUND"},
	{Type: RecordEventUpdate, Name: "EVENT_UPDATE"},
	{Type: RecordTimeConv, Name: "TIME_CONV"},
	{Type: RecordHeaderFeature, Name: "FEATURE"},
	{Type: RecordCompressed, Name: "COMPRESSED"},
	{Type: RecordFinishedInit, Name: "FINISHED_INIT"},
	{Type: RecordCompressed2, Name: "COMPRESSED2"},
	{Type: RecordBPFMetadata, Name: "BPF_METADATA", Describe: describeBPFMetadata},
	{Type: RecordSchedstatCPU, Name: "SCHEDSTAT_CPU"},
	{Type: RecordSchedstatDomain, Name: "SCHEDSTAT_DOMAIN"},
}

// recordRows is recordTypes indexed by type, made once (init): String is
// called for every line bpfmeta dump prints, millions of them, and finds
// the name by index. A type without a row has nil.
var recordRows []*typeRow

func init() {
	n := RecordType(0)
	for _, r := range recordTypes {
		n = max(n, r.Type+1)
	}
	recordRows = make([]*typeRow, n)
	for i, r := range recordTypes {
		recordRows[r.Type] = &recordTypes[i]
	}
}

// row is t's row of the table, nil for a type perf does not define.
func (t RecordType) row() *typeRow {
	if t < RecordType(len(recordRows)) {
		return recordRows[t]
	}
	return nil
}

// String returns perf's name for the type, as perf_event__name() has it
// (the names perf report --stats prints: PERF_RECORD_HEADER_ATTR is
// "ATTR"), or the number for types perf does not know.
func (t RecordType) String() string {
	if r := t.row(); r != nil {
		return r.Name
	}
	return strconv.FormatUint(uint64(t), 10)
}

// Noun names a record of type t in a message: "SAMPLE record", or
// "record of type 4294967295" for a type perf does not define.
func (t RecordType) Noun() string {
	if r := t.row(); r != nil {
		return r.Name + " record"
	}
	return "record of type " + strconv.FormatUint(uint64(t), 10)
}

// Known reports whether t is a type upstream perf defines.
func (t RecordType) Known() bool { return t.row() != nil }

// Inspected reports whether t is a kernel record type bpfmeta reads the
// programs of a recording from: KSYMBOL and BPF_EVENT (bpftrack). Every
// other kernel record is only passed on, a run at a time
// (recrun.Passes).
func (t RecordType) Inspected() bool {
	r := t.row()
	return r != nil && r.Inspected
}

// Describe says what r holds, as bpfmeta dump prints it after its type's
// name: a KSYMBOL's, BPF_EVENT's or BPF_METADATA's fields (text from the
// recording escaped, safetext.Clean), or their decoder's error in
// parentheses; the size of the data after an AUXTRACE or
// HEADER_TRACING_DATA record; "" for any other record. bo is the
// recording's byte order.
func (r *Record) Describe(bo binary.ByteOrder) string {
	if row := r.Header.Type.row(); row != nil && row.Describe != nil {
		return row.Describe(r, bo)
	}
	return ""
}

// Feature is a HEADER_* feature id: a bit of the file header's feature
// bitmap, or the feat_id of a pipe-mode HEADER_FEATURE record
// (tools/perf/util/header.h).
type Feature uint32

// Feature ids.
const (
	FeatReserved       Feature = 0
	FeatTracingData    Feature = 1
	FeatBuildID        Feature = 2
	FeatHostname       Feature = 3
	FeatOSRelease      Feature = 4
	FeatVersion        Feature = 5
	FeatArch           Feature = 6
	FeatNrCPUs         Feature = 7
	FeatCPUDesc        Feature = 8
	FeatCPUID          Feature = 9
	FeatTotalMem       Feature = 10
	FeatCmdline        Feature = 11
	FeatEventDesc      Feature = 12
	FeatCPUTopology    Feature = 13
	FeatNUMATopology   Feature = 14
	FeatBranchStack    Feature = 15
	FeatPMUMappings    Feature = 16
	FeatGroupDesc      Feature = 17
	FeatAuxtrace       Feature = 18
	FeatStat           Feature = 19
	FeatCache          Feature = 20
	FeatSampleTime     Feature = 21
	FeatMemTopology    Feature = 22
	FeatClockID        Feature = 23
	FeatDirFormat      Feature = 24
	FeatBPFProgInfo    Feature = 25
	FeatBPFBTF         Feature = 26
	FeatCompressed     Feature = 27
	FeatCPUPMUCaps     Feature = 28
	FeatClockData      Feature = 29
	FeatHybridTopology Feature = 30
	FeatPMUCaps        Feature = 31
	FeatCPUDomainInfo  Feature = 32
)

// FeatureBits is the size of the file header's feature bitmap.
const FeatureBits = 256

var featureNames = map[Feature]string{
	FeatReserved: "RESERVED", FeatTracingData: "TRACING_DATA", FeatBuildID: "BUILD_ID",
	FeatHostname: "HOSTNAME", FeatOSRelease: "OSRELEASE", FeatVersion: "VERSION",
	FeatArch: "ARCH", FeatNrCPUs: "NRCPUS", FeatCPUDesc: "CPUDESC", FeatCPUID: "CPUID",
	FeatTotalMem: "TOTAL_MEM", FeatCmdline: "CMDLINE", FeatEventDesc: "EVENT_DESC",
	FeatCPUTopology: "CPU_TOPOLOGY", FeatNUMATopology: "NUMA_TOPOLOGY",
	FeatBranchStack: "BRANCH_STACK", FeatPMUMappings: "PMU_MAPPINGS",
	FeatGroupDesc: "GROUP_DESC", FeatAuxtrace: "AUXTRACE", FeatStat: "STAT",
	FeatCache: "CACHE", FeatSampleTime: "SAMPLE_TIME", FeatMemTopology: "MEM_TOPOLOGY",
	FeatClockID: "CLOCKID", FeatDirFormat: "DIR_FORMAT", FeatBPFProgInfo: "BPF_PROG_INFO",
	FeatBPFBTF: "BPF_BTF", FeatCompressed: "COMPRESSED", FeatCPUPMUCaps: "CPU_PMU_CAPS",
	FeatClockData: "CLOCK_DATA", FeatHybridTopology: "HYBRID_TOPOLOGY",
	FeatPMUCaps: "PMU_CAPS", FeatCPUDomainInfo: "CPU_DOMAIN_INFO",
}

// String returns perf's name for the feature (HEADER_ prefix dropped), or
// the number for ids perf does not know.
func (f Feature) String() string {
	if n, ok := featureNames[f]; ok {
		return n
	}
	return strconv.FormatUint(uint64(f), 10)
}
