// SPDX-License-Identifier: BSD-2-Clause
// The differential oracle of package btf's TestLibbpf: libbpf's own
// btf_dump__dump_type_data(), built in the test against the system's
// libbpf (Debian 12: libbpf-dev 1.1, which has every option but
// emit_strings) and, with -DEMIT_STRINGS, against the libbpf >= 1.6 of the
// modern perf's Debian sid root (scripts/modern-perf.sh).
//
//   usage: libbpf OBJECT|RAW_BTF < requests
//
// It loads the .BTF section of OBJECT as clang wrote it (btf__parse_elf),
// or raw BTF (btf__parse_raw), then answers one request a line:
//   TYPE_ID COMPACT SKIP_NAMES EMIT_ZEROES EMIT_STRINGS INDENT_LEVEL INDENT_STR|- DATA_HEX|-
// with "RET LEN\n" and the LEN bytes of output, then "\n". The data is
// copied into a calloc()ed buffer, aligned as a map value is, as perf does,
// zeroed after the data to the type's size.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <bpf/btf.h>

struct out { char *b; size_t n, cap; };

static void cb(void *arg, const char *fmt, va_list ap)
{
	struct out *o = arg;
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if (o->n + n + 1 > o->cap) {
		o->cap = (o->n + n + 1) * 2;
		o->b = realloc(o->b, o->cap);
	}
	vsnprintf(o->b + o->n, n + 1, fmt, ap);
	o->n += n;
}

static int unhex(const char *s, unsigned char *d)
{
	int n = 0;
	if (strcmp(s, "-") == 0)
		return 0;
	for (; s[0] && s[1]; s += 2)
		sscanf(s, "%2hhx", &d[n++]);
	return n;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: libbpf OBJECT|RAW_BTF < requests\n");
		return 2;
	}
	size_t len = strlen(argv[1]);
	struct btf *btf = len > 2 && strcmp(argv[1] + len - 2, ".o") == 0 ?
		btf__parse_elf(argv[1], NULL) : btf__parse_raw(argv[1]);
	if (!btf) {
		fprintf(stderr, "btf__parse_elf %s failed\n", argv[1]);
		return 2;
	}
	static char line[1 << 20];
	static char indent[256], hex[1 << 19];
	struct out o = {0};
	while (fgets(line, sizeof(line), stdin)) {
		unsigned id;
		int compact, skip, zeroes, strs, lvl;
		if (sscanf(line, "%u %d %d %d %d %d %255s %524287s", &id, &compact, &skip, &zeroes, &strs, &lvl, indent, hex) != 8) {
			fprintf(stderr, "bad request: %s", line);
			return 2;
		}
		/* Zeroes after the data, as far as the type goes: libbpf's
		 * check_zero() reads a member's bytes before its overflow check
		 * does, so on data shorter than the type it would read whatever
		 * follows in the heap. */
		size_t cap = strlen(hex) / 2 + 16;
		long long sz = btf__resolve_size(btf, id);
		if (sz > 0 && (size_t)sz + 16 > cap)
			cap = (size_t)sz + 16;
		unsigned char *data = calloc(1, cap);
		int n = unhex(hex, data);
		LIBBPF_OPTS(btf_dump_type_data_opts, opts,
			    .indent_str = strcmp(indent, "-") ? indent : NULL,
			    .indent_level = lvl,
			    .compact = compact, .skip_names = skip, .emit_zeroes = zeroes);
#ifdef EMIT_STRINGS
		opts.emit_strings = strs;
#else
		if (strs) {
			fprintf(stderr, "built without emit_strings\n");
			return 2;
		}
#endif
		o.n = 0;
		/* a new btf_dump a value, as perf makes: names start afresh */
		struct btf_dump *d = btf_dump__new(btf, cb, &o, NULL);
		int ret = btf_dump__dump_type_data(d, id, data, n, &opts);
		btf_dump__free(d);
		printf("%d %zu\n", ret, o.n);
		fwrite(o.b, 1, o.n, stdout);
		printf("\n");
		fflush(stdout);
		free(data);
	}
	return 0;
}
