// SPDX-License-Identifier: GPL-2.0
// Test fixture: a program with NVARS bpf_metadata_ variables (the build
// makes many202.bpf.o and many203.bpf.o). perf writes one BPF_METADATA
// record of 528 + 320 * NVARS bytes (plus the sample_id), and writes none
// when that is more than 0xfeff (bpf_metadata_alloc()): 202 variables are
// the most it writes.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define V(n) const volatile int bpf_metadata_v##n SEC(".rodata") = n;
#define V10(n) V(n##0) V(n##1) V(n##2) V(n##3) V(n##4) V(n##5) V(n##6) V(n##7) V(n##8) V(n##9)
#define V100(n) V10(n##0) V10(n##1) V10(n##2) V10(n##3) V10(n##4) V10(n##5) V10(n##6) V10(n##7) V10(n##8) V10(n##9)

V100(1) V100(2) /* v100 .. v299: 200 variables */
const volatile int bpf_metadata_extra1 SEC(".rodata") = 1;
const volatile int bpf_metadata_extra2 SEC(".rodata") = 2;
#if NVARS > 202
const volatile int bpf_metadata_extra3 SEC(".rodata") = 3;
#endif

SEC("socket")
int PROG(struct __sk_buff *skb)
{
	return (skb->len + bpf_metadata_v100) & 0xff;
}

char LICENSE[] SEC("license") = "GPL";
