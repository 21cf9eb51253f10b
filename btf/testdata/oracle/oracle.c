// SPDX-License-Identifier: GPL-2.0
// Oracle for package btf's unit tests: libbpf's btf_dump__dump_type_data()
// with perf's options ({.compact=1, .skip_names=1, .emit_strings=1}) and
// perf's format_btf_cb() (vsnprintf into a BUFSZ-byte buffer, clamped).
//
//   usage: oracle BTF_FILE TYPE_ID DATA_FILE BUFSZ
//   prints the return value on one line, then the buffer's contents.
//
// Build against libbpf from source (Debian's libbpf-dev 1.1 has no
// emit_strings), e.g. with the libbpf/libbpf repository checked out in $L:
//   make -C $L/src BUILD_STATIC_ONLY=1 OBJDIR=/tmp/lb DESTDIR=/tmp/lb/root install
//   gcc -O2 -o oracle oracle.c -I/tmp/lb/root/usr/include /tmp/lb/libbpf.a -lelf -lz
// then: go test ./btf -run TestFormat -libbpf-oracle=$PWD/oracle
// The data is copied into a calloc()ed buffer, as perf's map value is.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <bpf/btf.h>
struct ctx { char *buf; size_t size, idx; };
static void cb(void *arg, const char *fmt, va_list ap) {
	struct ctx *c = arg;
	int n = vsnprintf(c->buf + c->idx, c->size - c->idx, fmt, ap);
	c->idx += n;
	if (c->idx >= c->size) c->idx = c->size;
}
static void *slurp(const char *p, size_t *n) {
	FILE *f = fopen(p, "rb"); if (!f) { perror(p); exit(2); }
	fseek(f, 0, SEEK_END); *n = ftell(f); fseek(f, 0, SEEK_SET);
	void *b = calloc(1, *n + 1); fread(b, 1, *n, f); fclose(f); return b;
}
int main(int argc, char **argv) {
	size_t bn, dn; void *braw = slurp(argv[1], &bn); void *draw = slurp(argv[3], &dn);
	struct btf *btf = btf__new(braw, bn);
	if (!btf) { fprintf(stderr, "btf__new failed\n"); return 2; }
	size_t bufsz = atoi(argv[4]);
	char *buf = calloc(1, bufsz + 1);
	struct ctx c = { buf, bufsz, 0 };
	LIBBPF_OPTS(btf_dump_type_data_opts, opts, .compact = 1, .skip_names = 1, .emit_strings = 1);
	struct btf_dump *d = btf_dump__new(btf, cb, &c, NULL);
	void *data = calloc(1, dn + 16); memcpy(data, draw, dn);
	int ret = btf_dump__dump_type_data(d, atoi(argv[2]), data, dn, &opts);
	printf("%d\n", ret);
	fwrite(buf, 1, strlen(buf), stdout);
	return 0;
}
