// SPDX-License-Identifier: GPL-2.0
// Test fixture for package bpfprog: a program with a .rodata map (with BTF)
// that holds no bpf_metadata_* variable. perf's bpf_metadata_read_map_data()
// skips such a map, so the program has no metadata (bpftool, by contrast,
// prints an empty "metadata:" block for it).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile int bpfprogt_config SEC(".rodata") = 3;

SEC("socket")
int bpfprogt_rodata(struct __sk_buff *skb)
{
	return (skb->len * bpfprogt_config) & 0xff;
}

char LICENSE[] SEC("license") = "GPL";
