#!/bin/sh
# dist-check.sh: make dist-check (Debian 12, root). Issue 50's release
# checks, for DIST_ARCHES (default amd64, the machine's .deb):
#
# 1. Reproducible: two make dist runs from the same commit, into two
#    directories, give byte-identical artifacts (cmp of every file).
# 2. Installs as a user gets it: dpkg -i of the amd64 .deb; bpfmeta
#    --version shows the package's version; the man page, the completion
#    files, README and docs/ are where the package puts them;
#    systemd-analyze verify of the installed unit; an inject with the
#    installed binary (a corpus recording, a snapshot of this machine);
#    dpkg -r removes the binary and keeps /var/lib/bpfmeta; dpkg -P leaves
#    no path of the package (dpkg -L before removal) and no /var/lib/bpfmeta.
#    lintian on the .deb reports no error.
#
# The package is never left installed (trap). It refuses to run when a
# bpfmeta package is installed, or when a path the package would own, or
# /var/lib/bpfmeta (purge removes it), already exists: it never removes
# what it did not install.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
GO=${GO:-go}
DIST_ARCHES=${DIST_ARCHES:-amd64}
export DIST_ARCHES

fail() { echo "dist-check: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (dpkg -i)"
for c in dpkg dpkg-deb man systemd-analyze lintian cmp; do
	command -v $c >/dev/null 2>&1 || fail "$c not found (apt-get install lintian man-db systemd)"
done
case " $DIST_ARCHES " in *' amd64 '*) ;; *) fail "DIST_ARCHES must include amd64 (the .deb installed here)" ;; esac
[ "$(dpkg --print-architecture)" = amd64 ] || fail "installs the amd64 .deb: this machine is $(dpkg --print-architecture)"
if dpkg-query -W -f '${Status}' bpfmeta 2>/dev/null | grep -qv 'not-installed'; then
	fail "a bpfmeta package is installed ($(dpkg-query -W -f '${Version} ${Status}' bpfmeta)): not touching it; remove it first"
fi
[ ! -e /var/lib/bpfmeta ] || fail "/var/lib/bpfmeta exists: dpkg -P would remove it; move it away first"

work=$(mktemp -d /tmp/bpfmeta-dist-check.XXXXXX)
installed=
cleanup() {
	if [ -n "$installed" ]; then
		dpkg -P bpfmeta >/dev/null 2>&1 || echo "dist-check: dpkg -P bpfmeta failed: remove the package by hand" >&2
		rm -rf /var/lib/bpfmeta
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# 1. Reproducible.
start=$(date +%s)
DISTDIR=$work/a GO=$GO scripts/dist.sh >/dev/null
DISTDIR=$work/b GO=$GO scripts/dist.sh >/dev/null
a=$(cd "$work/a" && ls) b=$(cd "$work/b" && ls)
[ "$a" = "$b" ] || fail "the two runs made different files: $(echo "$a" | tr '\n' ' ') / $(echo "$b" | tr '\n' ' ')"
for f in $a; do
	cmp -s "$work/a/$f" "$work/b/$f" || fail "not reproducible: $f differs between two make dist runs"
done
echo "dist-check: reproducible: $(echo "$a" | wc -l) files byte-identical over two runs ($(($(date +%s) - start)) s)"

# 2. Install as a user.
deb=$(ls "$work/a"/bpfmeta_*_amd64.deb)
version=$(dpkg-deb -f "$deb" Version)
dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's,^\.,,; s,/$,,' | grep -v '^$' >"$work/contents"
while read -r p; do
	[ -d "$p" ] && continue # shared directories (/usr/share/man/man1, ...)
	[ ! -e "$p" ] || fail "$p exists and is no package's: dpkg -i would replace it"
done <"$work/contents"

lintian --fail-on error "$deb" >"$work/lintian" 2>&1 || { cat "$work/lintian" >&2; fail "lintian reports errors"; }
grep '^E:' "$work/lintian" >&2 && fail "lintian reports errors"

installed=1
dpkg -i "$deb" >/dev/null
dpkg -L bpfmeta | sort >"$work/owned"
[ -x /usr/bin/bpfmeta ] || fail "no /usr/bin/bpfmeta after dpkg -i"
out=$(/usr/bin/bpfmeta --version)
case "$out" in "bpfmeta $version "*) ;; *) fail "bpfmeta --version says \"$out\", the package is $version" ;; esac
[ "$(man -w bpfmeta)" = /usr/share/man/man1/bpfmeta.1.gz ] || fail "man -w bpfmeta: $(man -w bpfmeta 2>&1)"
man bpfmeta 2>/dev/null | grep -q 'inject' || fail "man bpfmeta shows no inject"
for f in /usr/share/bash-completion/completions/bpfmeta \
	/usr/share/zsh/vendor-completions/_bpfmeta \
	/usr/share/fish/vendor_completions.d/bpfmeta.fish \
	/usr/share/doc/bpfmeta/README.md /usr/share/doc/bpfmeta/docs/json.md \
	/usr/share/doc/bpfmeta/copyright /usr/share/doc/bpfmeta/changelog.gz; do
	[ -s "$f" ] || fail "$f missing or empty after dpkg -i"
done
grep -q bpfmeta /usr/share/bash-completion/completions/bpfmeta || fail "bash completion is not bpfmeta's"
unit=/usr/lib/systemd/system/bpfmeta-watch.service
[ -f "$unit" ] || fail "no $unit after dpkg -i"
grep -q '^ExecStart=/usr/bin/bpfmeta ' "$unit" || fail "$unit does not run /usr/bin/bpfmeta"
systemd-analyze verify "$unit" || fail "systemd-analyze verify $unit"

# an inject as make demo does, without loading a program: a corpus
# recording and a snapshot of this machine, by the installed binary
(
	cd "$work"
	/usr/bin/bpfmeta snapshot -q -o progs.jsonl
	/usr/bin/bpfmeta inject -q --snapshot progs.jsonl \
		-i "$root/testdata/corpus/autofdo_perf5.6_x86_64_small.data" -o injected.data
	[ -s injected.data ]
	/usr/bin/bpfmeta show -i injected.data >/dev/null
) || fail "inject with the installed bpfmeta"

# the journal directory the service would fill: kept on remove
mkdir -p /var/lib/bpfmeta
: >/var/lib/bpfmeta/dist-check
dpkg -r bpfmeta >/dev/null
[ ! -e /usr/bin/bpfmeta ] || fail "/usr/bin/bpfmeta left after dpkg -r"
[ -f /var/lib/bpfmeta/dist-check ] || fail "dpkg -r removed /var/lib/bpfmeta"
dpkg -P bpfmeta >/dev/null
installed=
[ ! -e /var/lib/bpfmeta ] || fail "/var/lib/bpfmeta left after dpkg -P"
left=
while read -r p; do
	[ -d "$p" ] && [ ! -L "$p" ] && continue # directories others own too (/usr/share/doc is kept)
	[ ! -e "$p" ] && [ ! -L "$p" ] || left="$left $p"
done <"$work/owned"
[ -z "$left" ] || fail "left after dpkg -P:$left"
for d in /usr/share/doc/bpfmeta /usr/share/lintian/overrides/bpfmeta; do
	[ ! -e "$d" ] || fail "$d left after dpkg -P"
done
! dpkg-query -W bpfmeta >/dev/null 2>&1 || fail "dpkg still knows bpfmeta after dpkg -P"
echo "dist-check: $version: lintian clean, installs, runs, verifies, removes and purges clean ($(($(date +%s) - start)) s in all)"
