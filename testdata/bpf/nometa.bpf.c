// SPDX-License-Identifier: GPL-2.0
// Test fixture for package bpfprog: a BPF program WITHOUT any bpf_metadata_*
// variable and no .rodata at all, with one __noinline subprogram (2 KSYMBOLs).
// Named bpfprogt_, as the other fixtures.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

static __attribute__((noinline)) int bpfprogt_nometa_sub(int x)
{
	return (x ^ 0x5a) + 1;
}

SEC("socket")
int bpfprogt_nometa(struct __sk_buff *skb)
{
	return bpfprogt_nometa_sub(skb->len) & 0xffff;
}

char LICENSE[] SEC("license") = "GPL";
