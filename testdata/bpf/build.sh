#!/bin/sh
# Rebuild the committed BPF test fixtures (*.bpf.o) from their sources.
# Usage: testdata/bpf/build.sh          (from anywhere; writes next to this script)
# Needs clang and libbpf-dev (bookworm: clang 14.0.6, libbpf 1.1.2). The .o files
# are committed so that the tests need no compiler; rebuild them only when a .c
# changes, and check them in together.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
command -v clang >/dev/null || { echo "build.sh: clang missing: apt-get install -y clang llvm libbpf-dev" >&2; exit 1; }
[ -f /usr/include/bpf/bpf_helpers.h ] || { echo "build.sh: libbpf-dev missing" >&2; exit 1; }
ARCH_INC=/usr/include/$(uname -m)-linux-gnu   # <asm/types.h> under -target bpf
for n in meta nometa rodata manyfunc rich; do
	clang -O2 -g -target bpf -fdebug-prefix-map="$HERE"=. -I"$ARCH_INC" -c "$HERE/$n.bpf.c" -o "$HERE/$n.bpf.o"
done
# 202 and 203 bpf_metadata_ variables: the most perf writes a record for, and one more
for n in 202 203; do
	clang -O2 -g -target bpf -fdebug-prefix-map="$HERE"=. -I"$ARCH_INC" -DNVARS=$n -DPROG=bpfprogt_many$n -c "$HERE/manyvars.bpf.c" -o "$HERE/many$n.bpf.o"
done
# two versions of one program, for the golden tests of a version's change
clang -O2 -g -target bpf -fdebug-prefix-map="$HERE"=. -I"$ARCH_INC" -DVERSION='"1.0.0"' -DMINOR=0 -c "$HERE/versioned.bpf.c" -o "$HERE/versioned100.bpf.o"
clang -O2 -g -target bpf -fdebug-prefix-map="$HERE"=. -I"$ARCH_INC" -DVERSION='"1.1.0"' -DMINOR=1 -c "$HERE/versioned.bpf.c" -o "$HERE/versioned110.bpf.o"
# rich again with clang 19 (Debian 12's clang-19), whose BTF differs
if command -v clang-19 >/dev/null; then
	clang-19 -O2 -g -target bpf -fdebug-prefix-map="$HERE"=. -I"$ARCH_INC" -DPROG=bpfprogt_rich19 -DSALT=19 -c "$HERE/rich.bpf.c" -o "$HERE/rich19.bpf.o"
else
	echo "build.sh: clang-19 missing: rich19.bpf.o not rebuilt (apt-get install -y clang-19)" >&2
fi
# make demo's program, embedded in cmd/internal/demo
DEMO=$HERE/../../cmd/internal/demo/bpf
clang -O2 -g -target bpf -fdebug-prefix-map="$DEMO"=. -I"$ARCH_INC" -c "$DEMO/demo.bpf.c" -o "$DEMO/demo.bpf.o"
ls -l "$HERE"/*.bpf.o "$DEMO"/*.bpf.o
