// SPDX-License-Identifier: GPL-2.0
// Fixture for package btf: one BPF program whose .rodata holds bpf_metadata_*
// variables of every BTF kind clang can emit, with values chosen to hit the
// edge cases of libbpf's btf_dump__dump_type_data() as perf calls it
// ({.compact=1, .skip_names=1, .emit_strings=1}). The expected values in
// kinds.golden were written by the real perf (see regen.sh), not by us.
//
// Build: clang -O2 -g -target bpf -I/usr/include/x86_64-linux-gnu -c kinds.bpf.c -o kinds.bpf.o
//
// The program reads the volatile bpf_metadata_rd, so the .rodata map is in
// its used_maps as soon as it is loaded (see the side-band race note in
// ../../../shared/tools/bpf-fixture/meta.bpf.c).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define RO SEC(".rodata")
#define TAG __attribute__((btf_decl_tag("btfkinds")))
#define PTAG __attribute__((btf_type_tag("btfkinds_ptr")))

typedef unsigned char u8;
typedef u8 u8arr4[4];
typedef const volatile int cvint;

enum color { RED, GREEN, BLUE };
enum neg { NEG_MINUS = -1, NEG_ZERO = 0, NEG_BIG = 0x7fffffff };
enum high { HIGH_LOW = 1, HIGH_TOP = 0x80000000u, HIGH_ALL = 0xffffffffu };
enum __attribute__((packed)) small { SMALL_A = 1, SMALL_B = 200 };

struct pair { int a; char s[4]; int c; };
struct pt { int x, y; };
struct inner { int a; int b; };
struct outer { int x; struct inner in; int y; };
struct bits {
	unsigned int a : 3;
	unsigned int b : 10; /* crosses the first byte boundary */
	int c : 5;           /* negative */
	unsigned int z : 2;  /* zero: skipped */
	unsigned int d : 12;
	unsigned long long big : 40;
	enum color e : 4;
};
struct ebits { unsigned int lo : 4; enum color e : 4; };
struct __attribute__((packed)) packed {
	char c;
	int x;
	enum color e;
	void *p;
	short s;
};
struct sticky { char tag[2]; int arr[3]; u8 u; int tail[2]; };
struct flex { int n; int tail[0]; };
struct empty {};
struct withempty { int a; struct empty e; int b; };
struct zarr { int k; struct pt arr[2]; };
struct firstzero { char s[4]; int x; };
struct nest2 { struct firstzero f; int after; };
struct fl { float f; double d; };
struct tagged { int a TAG; int b; };
union u { int i; char c[4]; };
struct i128bits { int a; __int128 b : 3; int c; };

/* strings and char arrays */
const char bpf_metadata_str[] RO = "3.14159";
const char bpf_metadata_str_empty[8] RO = "";
const char bpf_metadata_str_embedded_nul[8] RO = "hi\0junk";
const char bpf_metadata_str_nonul[4] RO = "abcd";
const char bpf_metadata_str_nonul_bytes[6] RO = { 'a', (char)0xff, 'b', 1, (char)0x80, 0x7f };
const char bpf_metadata_str_esc[] RO = "q\"\\\t\xff\x80 ~\x7f\n'";
const char bpf_metadata_str_high[] RO = "\xa0\xc3\xa9\x01\x1f";
const unsigned char bpf_metadata_uchar_str[4] RO = "ok";
const unsigned char bpf_metadata_uchar_nonul[4] RO = { 'o', 0xfe, 'k', 1 };
const signed char bpf_metadata_schar_nonul[3] RO = { 'x', -2, 'y' };
const u8arr4 bpf_metadata_typedef_u8arr RO = { 'h', 'e', 'y', 0 };
const char bpf_metadata_char2d[2][4] RO = { "ab", "cd" };
const char bpf_metadata_char2d_sticky[3][3] RO = { "abc", "", "de" };
const char bpf_metadata_char2d_empty_first[3][3] RO = { "", "abc", "x" };
const char bpf_metadata_char3d[2][2][2] RO = { { "a", "" }, { "bc", "d" } };
const _Bool bpf_metadata_bool_arr[4] RO = { 1, 0, 1, 1 };
const char bpf_metadata_long[300] RO =
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
/* 253 characters: the output is "..." = exactly 255 bytes, all kept */
const char bpf_metadata_len255[254] RO =
	"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
	"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
	"01234567890123456789012345678901234567890123456789012";
/* 254 characters: the output is 256 bytes, the closing quote is cut */
const char bpf_metadata_len256[255] RO =
	"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
	"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
	"012345678901234567890123456789012345678901234567890123";
/* the cut falls inside a \xNN escape */
const char bpf_metadata_cut_escape[200] RO =
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01";
const int bpf_metadata_long_int_arr[100] RO = { 1000000, 2000000, 3000000, [99] = -1 };

/* integers */
const char bpf_metadata_char RO = 'A';
const signed char bpf_metadata_schar RO = -128;
const unsigned char bpf_metadata_uchar RO = 200;
const short bpf_metadata_short RO = -3;
const unsigned short bpf_metadata_ushort RO = 65535;
const int bpf_metadata_int RO = -7;
const int bpf_metadata_int_zero RO = 0;
const unsigned int bpf_metadata_uint RO = 4000000000u;
const long bpf_metadata_long_min RO = -9223372036854775807L - 1;
const unsigned long long bpf_metadata_u64_max RO = 18446744073709551615ULL;
const _Bool bpf_metadata_bool RO = 1;
const __int128 bpf_metadata_i128_small RO = 5;
const __int128 bpf_metadata_i128_big RO = ((__int128)1 << 64) + 5;
const __int128 bpf_metadata_i128_neg RO = -1;
const unsigned __int128 bpf_metadata_u128_hi RO = ((unsigned __int128)0x0123456789abcdefULL << 64) | 0xfULL;
const cvint bpf_metadata_cv_typedef RO = 12345;
const volatile int bpf_metadata_rd RO = 1;
const int bpf_metadata_decl_tagged TAG RO = 77;

/* enums */
const enum color bpf_metadata_enum RO = GREEN;
const enum color bpf_metadata_enum_zero RO = RED;
const enum color bpf_metadata_enum_unmatched RO = (enum color)5;
const enum neg bpf_metadata_enum_neg RO = NEG_MINUS;
const enum neg bpf_metadata_enum_big RO = NEG_BIG;
const enum high bpf_metadata_enum_high RO = HIGH_TOP;
const enum high bpf_metadata_enum_all RO = HIGH_ALL;
const enum small bpf_metadata_enum_small RO = SMALL_B;
const enum color bpf_metadata_enum_arr[4] RO = { RED, BLUE, (enum color)9, GREEN };

/* floats (long double is 8 bytes on the BPF target) */
const float bpf_metadata_float RO = 1.5f;
const double bpf_metadata_double RO = 3.14;
const double bpf_metadata_double_neg RO = -2.5e-3;
const double bpf_metadata_double_negzero RO = -0.0;
const double bpf_metadata_double_tie RO = 0.0078125;
const double bpf_metadata_double_tiny RO = 1e-7;
const double bpf_metadata_double_big RO = 1e20;
const double bpf_metadata_double_huge RO = 1.7976931348623157e308;
const double bpf_metadata_double_inf RO = __builtin_inf();
const double bpf_metadata_double_neginf RO = -__builtin_inf();
const double bpf_metadata_double_nan RO = __builtin_nan("");
const double bpf_metadata_double_negnan RO = -__builtin_nan("");
const float bpf_metadata_float_arr[3] RO = { 0.0f, -1.25f, 1e10f };
const long double bpf_metadata_long_double RO = 2.5L;
const struct fl bpf_metadata_float_struct RO = { 0.0f, 0.5 };

/* pointers */
void *const bpf_metadata_ptr_null RO = 0;
void *const bpf_metadata_ptr RO = (void *)0x1234;
const int PTAG *const bpf_metadata_ptr_tagged RO = (void *)0xffffffffffff0000ULL;
void *const bpf_metadata_ptr_arr[3] RO = { 0, (void *)0x10, (void *)-1L };

/* structs and unions */
const struct pair bpf_metadata_pair RO = { 1, "xy", 3 };
const struct pair bpf_metadata_pair_a0 RO = { 0, "xy", 3 };
const struct pair bpf_metadata_pair_empty_str RO = { 1, "", 0 };
const struct pair bpf_metadata_pair_zero RO = { 0 };
const struct pt bpf_metadata_pt_arr[2] RO = { { 1, 2 }, { 0, 4 } };
const struct outer bpf_metadata_nested_first_zero RO = { 1, { 0, 5 }, 2 };
const struct outer bpf_metadata_nested_first_set RO = { 1, { 5, 0 }, 2 };
const struct zarr bpf_metadata_struct_arr_first_zero RO = { 1, { { 0, 1 }, { 0, 2 } } };
const struct zarr bpf_metadata_struct_arr_first_set RO = { 1, { { 0, 1 }, { 3, 0 } } };
const struct nest2 bpf_metadata_nested_str_first RO = { { { 0, 'a' }, 5 }, 6 };
const struct sticky bpf_metadata_sticky RO = { { 'a', 'b' }, { 1, 0, 3 }, 'A', { 0, 7 } };
const struct flex bpf_metadata_flex RO = { 3 };
const struct withempty bpf_metadata_withempty RO = { 1, {}, 2 };
const struct tagged bpf_metadata_tagged RO = { 4, 0 };
const union u bpf_metadata_union RO = { .i = 0x41424344 };
const union u bpf_metadata_union_zero RO = { .i = 0 };
const int bpf_metadata_int2d[2][3] RO = { { 1, 2, 3 }, { 0, 0, 0 } };
const int bpf_metadata_int_arr_zero[3] RO = { 0, 0, 0 };

/* bitfields */
const struct bits bpf_metadata_bits RO = { 5, 0x2aa, -1, 0, 0xabc, 0x123456789aULL, BLUE };
const struct ebits bpf_metadata_enum_bitfield_zero RO = { 5, RED };
const struct ebits bpf_metadata_enum_bitfield_low_zero RO = { 0, BLUE };
const struct i128bits bpf_metadata_i128_bitfield RO = { 1, 2, 3 };

/* packed: members not aligned in perf's buffer */
const char bpf_metadata_pad1 RO = 1;
const struct packed bpf_metadata_packed RO = { 'x', 7, GREEN, (void *)0x99, -2 };
const struct packed bpf_metadata_packed_arr[2] RO = { { 'y', 0, GREEN, 0, 0 }, { 0, 0, BLUE, (void *)5, 1 } };

/* keys */
const int bpf_metadata_ RO = 11;
const int bpf_metadata_a_key_longer_than_sixty_three_characters_is_cut_by_snprintf_0123456789 RO = 12;

SEC("socket")
int btfkinds_prog(struct __sk_buff *skb)
{
	return (skb->len + bpf_metadata_rd) & 0xff;
}

char LICENSE[] SEC("license") = "GPL";
