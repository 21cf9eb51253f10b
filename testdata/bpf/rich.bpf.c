// SPDX-License-Identifier: GPL-2.0
// Test fixture: bpf_metadata_* variables of every kind of type a program
// may give them (structs with bitfields, enums in and out of range, a
// union, arrays of ints, of structs and of strings, the extremes of the
// integer types, strings with quotes, escapes and UTF-8, empty and
// unterminated strings), for the comparison with perf record >= 6.17.
// Built by clang 14 (rich.bpf.o) and clang 19 (rich19.bpf.o, program
// bpfprogt_rich19, with another tag), whose BTF differ: clang 14 has no ENUM64, and cuts
// enum big's values to 32 bits.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct point { int x; unsigned short y; char tag[3]; };
struct flags { unsigned int a:3, b:5, c:1; int d:7; unsigned char e; };
enum color { RED = 1, GREEN = 2, BLUE = 250 };
enum big { SMALL = -3, HUGE = 0x7fffffffffffLL };
union u { int i; char c[4]; };

const volatile struct point bpf_metadata_point SEC(".rodata") = { -7, 65535, "hi" };
const volatile struct flags bpf_metadata_flags SEC(".rodata") = { 5, 17, 1, -9, 200 };
const volatile enum color bpf_metadata_color SEC(".rodata") = BLUE;
const volatile enum color bpf_metadata_nocolor SEC(".rodata") = (enum color)7;
const volatile enum big bpf_metadata_big SEC(".rodata") = SMALL;
const volatile union u bpf_metadata_union SEC(".rodata") = { .i = 0x41424344 };
const volatile unsigned long long bpf_metadata_u64 SEC(".rodata") = 18446744073709551615ULL;
const volatile _Bool bpf_metadata_bool SEC(".rodata") = 1;
const volatile signed char bpf_metadata_schar SEC(".rodata") = -128;
const volatile unsigned char bpf_metadata_uchar SEC(".rodata") = 255;
const volatile int bpf_metadata_ints[4] SEC(".rodata") = { 1, 0, -1, 0 };
const volatile char bpf_metadata_grid[2][4] SEC(".rodata") = { "ab", "cde" };
const volatile char bpf_metadata_escapes[16] SEC(".rodata") = "q\"\\\t\n\x7f\xc3\xa9";
const volatile char bpf_metadata_empty[8] SEC(".rodata") = "";
const volatile char bpf_metadata_full[4] SEC(".rodata") = { 'a', 'b', 'c', 'd' };
const volatile short bpf_metadata_zero SEC(".rodata") = 0;
const volatile struct point bpf_metadata_points[2] SEC(".rodata") = { { 1, 2, "a" }, { 0, 0, "" } };

#ifndef PROG
#define PROG bpfprogt_rich
#endif
#ifndef SALT
#define SALT 0 // another tag for another build (perf names records by tag)
#endif

SEC("socket")
int PROG(struct __sk_buff *skb)
{
	return bpf_metadata_point.x + bpf_metadata_flags.a + bpf_metadata_color + bpf_metadata_nocolor +
	       bpf_metadata_big + bpf_metadata_union.i + bpf_metadata_u64 + bpf_metadata_bool +
	       bpf_metadata_schar + bpf_metadata_uchar + bpf_metadata_ints[1] + bpf_metadata_grid[1][1] +
	       bpf_metadata_escapes[2] + bpf_metadata_empty[0] + bpf_metadata_full[3] + bpf_metadata_zero +
	       bpf_metadata_points[1].y + SALT;
}

char LICENSE[] SEC("license") = "GPL";
