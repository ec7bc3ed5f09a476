#!/usr/bin/env bash
# Counts the import graph between layercheck's own packages, so the shape of
# the house can be compared before and after a move:
#   rooms   packages of this module
#   arrows  imports from one of our packages to another
#   up      arrows from a lower layer to a higher one
# The layers are the design's order, lowest first:
#   module, parser (and redact, which module imports) < kubespray and
#   clusterstate < lint and verify (two wings side by side) < internal
#   < cmd (with bench/ and measure/) < test
# A package's layer is its first path element. Imports within one layer are
# not counted as up; "between lint and verify" counts the imports from one
# wing into the other.
#
# Two graphs are printed: "product" (the imports of non-test files, what the
# binaries are built from) and "tests" (the extra imports of _test.go files).
# An up arrow from a _test.go file into test/ is a test using a test helper;
# one into any other layer is a test reaching up into product code.
# -v lists each arrow that runs up.
set -euo pipefail
cd "$(dirname "$0")/.."
verbose=0
[[ ${1:-} == -v ]] && verbose=1
# The build tags our files use (each a single word), so none is hidden.
tags=$(git grep -hoE '^//go:build [a-z0-9_]+$' -- '*.go' | awk '{print $2}' | sort -u | paste -sd, -)
mod=$(go list -m)

go list -tags "$tags" -f '{{.ImportPath}}|P|{{join .Imports " "}}
{{.ImportPath}}|T|{{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
awk -F'|' -v mod="$mod" -v verbose="$verbose" '
function rel(p) { return substr(p, length(mod) + 2) }
function wing(p,   top) {
	top = rel(p); sub(/\/.*/, "", top)
	return (top == "lint" || top == "verify") ? top : ""
}
function layer(p,   r, top) {
	r = rel(p); top = r; sub(/\/.*/, "", top)
	if (top == "module" || top == "parser" || top == "redact") return 0
	if (top == "kubespray" || top == "clusterstate") return 1
	if (top == "lint" || top == "verify") return 2
	if (top == "internal") return 4
	if (top == "cmd" || top == "bench" || top == "measure") return 5
	if (top == "test") return 6
	print "imports.sh: no layer for package " r > "/dev/stderr"; exit 2
}
{
	from = $1; kind = $2
	if (kind == "P") rooms++
	n = split($3, imp, " ")
	for (i = 1; i <= n; i++) {
		to = imp[i]
		if (to != mod && index(to, mod "/") != 1) continue
		if (to == from) continue
		key = kind SUBSEP from SUBSEP to
		if (key in seen) continue
		seen[key] = 1
		if (kind == "T" && ((("P" SUBSEP from SUBSEP to)) in seen)) continue
		arrows[kind]++
		if (wing(from) != "" && wing(to) != "" && wing(from) != wing(to)) {
			between[kind]++
			if (verbose) printf "  between (%s): %s -> %s\n", kind == "P" ? "product" : "tests", rel(from), rel(to)
		}
		if (layer(from) < layer(to)) {
			up[kind]++
			if (layer(to) == 6) uptest[kind]++
			if (verbose) printf "  up (%s): %s -> %s\n", kind == "P" ? "product" : "tests", rel(from), rel(to)
		}
	}
}
END {
	printf "rooms %d\n", rooms
	printf "product: arrows %d, up %d (%d of them into test/), between lint and verify %d\n", arrows["P"], up["P"], uptest["P"], between["P"]
	printf "tests:   arrows %d, up %d (%d of them into test/; imports only _test.go files add), between lint and verify %d\n", arrows["T"], up["T"], uptest["T"], between["T"]
}'
