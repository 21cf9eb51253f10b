#!/bin/sh
# dist.sh: make dist. For each architecture of DIST_ARCHES (GOARCH names;
# default every Linux GOARCH, as make cross vets), a static binary
# bpfmeta-VERSION-linux-ARCH and its .deb and .rpm (tools/dist, nfpm), then
# SHA256SUMS of them all, in DISTDIR (default bin/dist), replaced whole.
#
# Reproducible: the same commit gives the same bytes (-trimpath, no build
# id from paths, no VCS scan of the tree, every time SOURCE_DATE_EPOCH, the
# commit's time). VERSION is scripts/dist-version.sh's (the tag, or git
# describe), stamped into the binary with the commit: bpfmeta --version.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
GO=${GO:-go}
DISTDIR=${DISTDIR:-bin/dist}
DIST_ARCHES=${DIST_ARCHES:-$($GO tool dist list | sed -n 's,^linux/,,p')}
version=$(scripts/dist-version.sh)
commit=$(git rev-parse HEAD)
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct HEAD)
export SOURCE_DATE_EPOCH
at=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

mkdir -p "$(dirname "$DISTDIR")"
DISTDIR=$(cd "$(dirname "$DISTDIR")" && pwd)/$(basename "$DISTDIR")
work=$(mktemp -d "$DISTDIR.tmp-XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP
out=$work/out stage=$work/stage
mkdir "$out" "$stage"

# build GOARCH FILE [GOARM]: bpfmeta, static and stamped.
build() {
	x=github.com/bpfmeta/bpfmeta/cmd/internal/cliapp
	CGO_ENABLED=0 GOOS=linux GOARCH=$1 GOARM=${3:-} GOFLAGS= $GO build -trimpath -buildvcs=false \
		-tags urfave_cli_no_docs -o "$2" \
		-ldflags "-s -w -X $x.stampVersion=$version -X $x.stampCommit=$commit -X $x.stampTime=$at" \
		./cmd/bpfmeta
}

# What the packages hold besides the binary, written by a host build, the
# same for every architecture: the man page and the changelog compressed
# as Debian policy wants them (gzip -9n: no name, no time), the completion
# scripts, the unit with /usr/bin, the Debian copyright file.
build "$($GO env GOHOSTARCH)" "$work/bpfmeta-host"
"$work/bpfmeta-host" man | gzip -9n >"$stage/bpfmeta.1.gz"
"$work/bpfmeta-host" completion bash >"$stage/bpfmeta.bash"
"$work/bpfmeta-host" completion zsh >"$stage/_bpfmeta"
"$work/bpfmeta-host" completion fish >"$stage/bpfmeta.fish"
sed 's|@BINDIR@|/usr/bin|' scripts/bpfmeta-watch.service.in >"$stage/bpfmeta-watch.service"
{
	printf 'bpfmeta (%s) unstable; urgency=medium\n\n' "$version"
	printf '  * Built from commit %s.\n\n' "$commit"
	printf ' -- bpfmeta authors <bpfmeta@users.noreply.github.com>  %s\n' \
		"$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$stage/changelog.gz"
{
	printf 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n'
	printf 'Upstream-Name: bpfmeta\nSource: https://github.com/bpfmeta/bpfmeta\n\n'
	printf 'Files: *\nCopyright: %s\nLicense: BSD-2-clause\n' "$(sed -n 's/^Copyright (c) //p' LICENSE | head -1)"
	sed -n '/^Redistribution/,$p' LICENSE | sed 's/^$/./; s/^/ /'
} >"$stage/copyright"

(cd tools/dist && GOFLAGS= $GO build -trimpath -o "$work/dist" .)
for arch in $DIST_ARCHES; do
	case $arch in
	arm) goarm=7 pkgarch=arm7 ;; # Debian armhf, Fedora armv7hl
	*) goarm='' pkgarch=$arch ;;
	esac
	build "$arch" "$out/bpfmeta-$version-linux-$arch" "$goarm"
	cp "$out/bpfmeta-$version-linux-$arch" "$stage/bpfmeta"
	"$work/dist" -config tools/dist/nfpm.yaml -arch "$pkgarch" -version "$version" \
		-stage "$stage" -root "$root" -out "$out" >/dev/null
done
(cd "$out" && sha256sum -- * >SHA256SUMS)
rm -rf "$DISTDIR"
mv "$out" "$DISTDIR"
ls "$DISTDIR"
