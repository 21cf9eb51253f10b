// SPDX-License-Identifier: GPL-2.0
// Test fixture for package bpfprog: BPF programs that carry bpf_metadata_*
// variables in .rodata (their
// names start with bpfprogt_ so they cannot be mistaken for anyone else's
// fixture_* programs on a shared machine).
//
// libbpf (bpftool) binds the .rodata map to every program of this object
// (BPF_PROG_BIND_MAP) right after loading it, cilium/ebpf does not: every
// program therefore reads the map itself (the volatile bpf_metadata_build; a
// non-volatile const is constant-folded and makes no map reference), so that
// the map is in its used_maps at load time for both loaders and for perf's
// side-band thread.
//
// bpfprogt_multi_function_main calls two __noinline subprograms and
// bpfprogt_second one, so the kernel registers several KSYMBOLs per program;
// bpfprogt_single_function has exactly one. The two long names are longer
// than the kernel's 15-character bpf_prog_info.name.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define A10 "AAAAAAAAAA"
#define A100 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10

const char bpf_metadata_version[] SEC(".rodata") = "3.14159";
const int bpf_metadata_value SEC(".rodata") = 42;
const volatile char bpf_metadata_build[16] SEC(".rodata") = "abc";
const volatile int bpfprogt_not_metadata SEC(".rodata") = 7;
const volatile long long bpf_metadata_negative SEC(".rodata") = -5;
// 70 characters after the prefix: perf's key is cut to 63.
const volatile char bpf_metadata_a_key_that_is_much_longer_than_sixty_three_bytes_so_perf_cuts_it[4] SEC(".rodata") = "cut";
// 300 characters: perf's value is cut to 255 ("\"" + 254 x A, no closing quote).
const volatile char bpf_metadata_long_value[301] SEC(".rodata") = A100 A100 A100;

static __attribute__((noinline)) int bpfprogt_sub_add(int x)
{
	return x + bpf_metadata_value;
}

static __attribute__((noinline)) int bpfprogt_sub_mul(int x)
{
	return x * 3 + bpf_metadata_build[0];
}

SEC("socket")
int bpfprogt_multi_function_main(struct __sk_buff *skb)
{
	int v = bpfprogt_sub_add(skb->len);
	return bpfprogt_sub_mul(v) & 0xffff;
}

SEC("socket")
int bpfprogt_second(struct __sk_buff *skb)
{
	return bpfprogt_sub_add(skb->protocol + bpf_metadata_build[1]) & 0xff;
}

/* no subprogram: a single KSYMBOL */
SEC("socket")
int bpfprogt_single_function(struct __sk_buff *skb)
{
	return (skb->len + bpf_metadata_build[2] + bpfprogt_not_metadata) & 0xff;
}

char LICENSE[] SEC("license") = "GPL";
