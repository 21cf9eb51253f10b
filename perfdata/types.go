package perfdata

import "strconv"

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

var recordNames = map[RecordType]string{
	RecordMmap: "MMAP", RecordLost: "LOST", RecordComm: "COMM", RecordExit: "EXIT",
	RecordThrottle: "THROTTLE", RecordUnthrottle: "UNTHROTTLE", RecordFork: "FORK",
	RecordRead: "READ", RecordSample: "SAMPLE", RecordMmap2: "MMAP2", RecordAux: "AUX",
	RecordItraceStart: "ITRACE_START", RecordLostSamples: "LOST_SAMPLES",
	RecordSwitch: "SWITCH", RecordSwitchCPUWide: "SWITCH_CPU_WIDE",
	RecordNamespaces: "NAMESPACES", RecordKSymbol: "KSYMBOL", RecordBPFEvent: "BPF_EVENT",
	RecordCgroup: "CGROUP", RecordTextPoke: "TEXT_POKE",
	RecordAuxOutputHWID: "AUX_OUTPUT_HW_ID", RecordCallchainDeferred: "CALLCHAIN_DEFERRED",
	RecordHeaderAttr: "ATTR", RecordHeaderEventType: "EVENT_TYPE",
	RecordHeaderTracingData: "TRACING_DATA", RecordHeaderBuildID: "BUILD_ID",
	RecordFinishedRound: "FINISHED_ROUND", RecordIDIndex: "ID_INDEX",
	RecordAuxtraceInfo: "AUXTRACE_INFO", RecordAuxtrace: "AUXTRACE",
	RecordAuxtraceError: "AUXTRACE_ERROR", RecordThreadMap: "THREAD_MAP",
	RecordCPUMap: "CPU_MAP", RecordStatConfig: "STAT_CONFIG", RecordStat: "STAT",
	RecordStatRound: "STAT_ROUND", RecordEventUpdate: "EVENT_UPDATE",
	RecordTimeConv: "TIME_CONV", RecordHeaderFeature: "FEATURE",
	RecordCompressed: "COMPRESSED", RecordFinishedInit: "FINISHED_INIT",
	RecordCompressed2: "COMPRESSED2", RecordBPFMetadata: "BPF_METADATA",
	RecordSchedstatCPU: "SCHEDSTAT_CPU", RecordSchedstatDomain: "SCHEDSTAT_DOMAIN",
}

// String returns perf's name for the type, as perf_event__name() has it
// (the names perf report --stats prints: PERF_RECORD_HEADER_ATTR is
// "ATTR"), or the number for types perf does not know.
func (t RecordType) String() string {
	if n, ok := recordNames[t]; ok {
		return n
	}
	return strconv.FormatUint(uint64(t), 10)
}

// Noun names a record of type t in a message: "SAMPLE record", or
// "record of type 4294967295" for a type perf does not define.
func (t RecordType) Noun() string {
	if n, ok := recordNames[t]; ok {
		return n + " record"
	}
	return "record of type " + strconv.FormatUint(uint64(t), 10)
}

// Known reports whether t is a type upstream perf defines.
func (t RecordType) Known() bool {
	_, ok := recordNames[t]
	return ok
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
