#!/bin/sh
# Run every Go fuzz target of the module for FUZZTIME each (default 30s).
# The seed corpora come from testdata (the corpus, fixtures); new crashers
# are written by go test under the package's testdata/fuzz/.
set -eu
cd "$(dirname "$0")/.."
T=${1:-30s}
for pkg in $(go list ./...); do
	for f in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "== $pkg $f ($T)"
		go test -run '^$' -fuzz "^$f\$" -fuzztime "$T" "$pkg"
	done
done
