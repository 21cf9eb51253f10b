// SPDX-License-Identifier: GPL-2.0
// Test fixture for package bpfprog: one program with eight __noinline
// subprograms (nine KSYMBOLs) and a .rodata with one bpf_metadata_ variable.
//
// Loaded by cilium/ebpf, the .rodata map gets a BTF object of its own with
// only a handful of types, fewer than the program has functions. perf's
// bpf_metadata_create() looks the functions' BTF type ids up in that map BTF,
// so the BPF_METADATA prog_names of the later functions name no type at all.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile int bpf_metadata_answer SEC(".rodata") = 42;

#define SUB(n) \
	static __attribute__((noinline)) int bpfprogt_f##n(int x) { return x * n + bpf_metadata_answer; }
SUB(1) SUB(2) SUB(3) SUB(4) SUB(5) SUB(6) SUB(7) SUB(8)

SEC("socket")
int bpfprogt_manyfunc(struct __sk_buff *skb)
{
	int v = skb->len;

	v = bpfprogt_f1(v);
	v = bpfprogt_f2(v);
	v = bpfprogt_f3(v);
	v = bpfprogt_f4(v);
	v = bpfprogt_f5(v);
	v = bpfprogt_f6(v);
	v = bpfprogt_f7(v);
	v = bpfprogt_f8(v);
	return v & 0xff;
}

char LICENSE[] SEC("license") = "GPL";
