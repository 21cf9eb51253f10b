// SPDX-License-Identifier: GPL-2.0
// Test fixture for package btf: enums as clang before and after 15 writes
// them into BTF. Built twice (testdata/regen.sh): with clang 14, whose
// 64-bit enums are 8-byte BTF_KIND_ENUM with 32-bit enumerator values and
// which never sets kflag; and with clang 19, which writes ENUM64 and sets
// kflag on signed enums. libbpf prints them differently (btf_dump_enum_data),
// and perf with it.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define RO SEC(".rodata")

enum u64e { U64_ONE = 1, U64_BIG = 0x100000000ULL, U64_TOP = 0xfedcba9800000000ULL };
enum s64e { S64_NEG = -5000000000LL, S64_M1 = -1, S64_ONE = 1 };
enum s32e { S32E_NEG = -2, S32E_POS = 100000 };
enum __attribute__((packed)) s8e { S8_NEG = -2, S8_POS = 3 };
enum __attribute__((packed)) s16e { S16_NEG = -300, S16_POS = 300 };
enum __attribute__((packed)) u8e { U8_A = 1, U8_B = 200 };

struct withenums {
	enum s32e a;
	enum u64e b;
	int c;
	enum s64e d;
	enum s8e e;
	enum s16e f;
};
struct enumbits {
	enum s32e a : 4;
	enum u64e b : 20; /* the kernel rejects wider enum bitfields */
	enum s8e c : 3;
	int d : 5;
};
union enumunion {
	enum s32e a;
	enum s64e b;
};

const volatile int bpf_metadata_rd RO = 1;

/* 64-bit enums at the top level */
const enum u64e bpf_metadata_u64_unmatched RO = (enum u64e)0xfedcba9876543210ULL;
const enum u64e bpf_metadata_u64_big RO = U64_BIG;
const enum u64e bpf_metadata_u64_top RO = U64_TOP;
const enum u64e bpf_metadata_u64_zero RO = (enum u64e)0;
const enum s64e bpf_metadata_s64_neg RO = S64_NEG;
const enum s64e bpf_metadata_s64_m1 RO = S64_M1;
const enum s64e bpf_metadata_s64_unmatched RO = (enum s64e)-7;
const enum s64e bpf_metadata_s64_zero RO = (enum s64e)0;

/* signed enums of every size at the top level */
const enum s32e bpf_metadata_s32_unmatched RO = (enum s32e)-1;
const enum s8e bpf_metadata_s8_unmatched RO = (enum s8e)-1;
const enum s16e bpf_metadata_s16_unmatched RO = (enum s16e)-1;
const enum u8e bpf_metadata_u8_unmatched RO = (enum u8e)7;

/* in arrays: a number of a signed enum is followed by no "," */
const enum s32e bpf_metadata_s32_arr[4] RO = { (enum s32e)-1, (enum s32e)1, S32E_NEG, (enum s32e)100 };
const enum s8e bpf_metadata_s8_arr[4] RO = { (enum s8e)-1, S8_POS, (enum s8e)0, (enum s8e)5 };
const enum s16e bpf_metadata_s16_arr[3] RO = { (enum s16e)-1, S16_NEG, (enum s16e)7 };
const enum u64e bpf_metadata_u64_arr[3] RO = { (enum u64e)0xfedcba9876543210ULL, U64_ONE, (enum u64e)0 };
const enum s64e bpf_metadata_s64_arr[4] RO = { S64_NEG, (enum s64e)-7, S64_M1, (enum s64e)0 };
const enum u8e bpf_metadata_u8_arr[3] RO = { (enum u8e)7, U8_B, (enum u8e)0 };

/* in structs and unions */
const struct withenums bpf_metadata_struct RO = { (enum s32e)-1, (enum u64e)0xfedcba9876543210ULL, 5, (enum s64e)-7, (enum s8e)-1, (enum s16e)9 };
const struct withenums bpf_metadata_struct_matched RO = { S32E_POS, U64_BIG, 0, S64_NEG, S8_NEG, S16_POS };
const struct withenums bpf_metadata_struct_arr[2] RO = {
	{ (enum s32e)-3, U64_ONE, 1, S64_M1, (enum s8e)1, (enum s16e)-1 },
	{ S32E_NEG, (enum u64e)3, 2, (enum s64e)4, S8_POS, S16_NEG },
};
const union enumunion bpf_metadata_union RO = { .b = (enum s64e)-7 };

/* bitfields */
const struct enumbits bpf_metadata_bits RO = { (enum s32e)-1, (enum u64e)0xabcde, (enum s8e)-2, 3 };
const struct enumbits bpf_metadata_bits_matched RO = { S32E_NEG, U64_ONE, S8_POS, -1 };

SEC("socket")
int btfenums_prog(struct __sk_buff *skb)
{
	return (skb->len + bpf_metadata_rd) & 0xff;
}

char LICENSE[] SEC("license") = "GPL";
