// SPDX-License-Identifier: GPL-2.0
// The program make demo loads: a socket filter with the kind of
// bpf_metadata_* variables a BPF project ships, so that a profile can tell
// which build of it ran. It reads them itself, so that the .rodata map is
// among its maps from the moment it is loaded.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile char bpf_metadata_name[] SEC(".rodata") = "bpfmeta-demo";
const volatile char bpf_metadata_version[] SEC(".rodata") = "1.4.2";
const volatile char bpf_metadata_build[] SEC(".rodata") = "2026-12-02 g1a2b3c4";
const volatile int bpf_metadata_api_level SEC(".rodata") = 3;

static __attribute__((noinline)) int bpfmeta_demo_classify(int len)
{
	return len > bpf_metadata_api_level * 64 ? 2 : bpf_metadata_name[0] & 1;
}

SEC("socket")
int bpfmeta_demo(struct __sk_buff *skb)
{
	return bpfmeta_demo_classify(skb->len) ? skb->len : 0;
}

char LICENSE[] SEC("license") = "GPL";
