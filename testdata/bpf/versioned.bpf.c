// SPDX-License-Identifier: GPL-2.0
// Test fixture for golden tests of a program's metadata across two
// versions of it (README, "Golden tests of your BPF program's metadata"):
// build.sh builds it as versioned100.bpf.o (VERSION "1.0.0", MINOR 0) and
// versioned110.bpf.o ("1.1.0", 1). Between the two only the version string
// and a field of the struct change; the struct's other fields and the int
// do not, so that a golden diff shows exactly those two values.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#ifndef VERSION
#define VERSION "1.0.0"
#endif
#ifndef MINOR
#define MINOR 0
#endif

struct abi {
	int major;
	int minor;
	char arch[8];
};

const volatile char bpf_metadata_version[8] SEC(".rodata") = VERSION;
const volatile struct abi bpf_metadata_abi SEC(".rodata") = { 1, MINOR, "x86_64" };
const volatile int bpf_metadata_api SEC(".rodata") = 3;

// reads the map itself, so that cilium/ebpf's loads bind it too (meta.bpf.c)
SEC("socket")
int bpfprogt_versioned(void *ctx)
{
	return bpf_metadata_api + bpf_metadata_abi.minor;
}

char LICENSE[] SEC("license") = "GPL";
