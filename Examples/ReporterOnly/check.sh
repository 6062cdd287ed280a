#!/usr/bin/env bash
# Builds this reporter-only package against LabKit, and runs it, on the machine as it would be
# without OpenSSL's, avahi's and Argon2's development files (scripts/without-dev-libs.sh
# hides them in a mount namespace); then shows from the binary's link line that it needs
# none of those libraries, and that its report escapes what a stranger named.
# Exit 0 only if all holds.
#
# LAB_SCRATCH: the build folder; scripts/test passes the lab's own (.build), whose LabKit
# modules this package's build then finds already built.
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
scratch=$(realpath -m "${LAB_SCRATCH:-.build}")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "check.sh: $*" >&2; exit 1; }

echo "== build and run, without libssl-dev, libavahi-compat-libdnssd-dev, libargon2-dev"
# The lab's own build script, so that the flags are the lab's: a flag that differs would
# build every module of the lab again.
bash ../../scripts/without-dev-libs.sh bash -c '
    set -euo pipefail
    ! pkg-config --exists openssl && [ ! -e /usr/include/argon2.h ] && [ ! -e /usr/include/avahi-compat-libdns_sd ] \
        || { echo "the development files are not hidden" >&2; exit 1; }
    bash ../../scripts/build-release.sh --package-path "$1" --scratch-path "$2" --product report-results
    "$2/release/report-results" Fixtures/results.json "$3/report"
' without-dev-libs "$here" "$scratch" "$out"
[ -s "$out/report/latency.tsv" ] || fail "report-results wrote no latency.tsv"

echo "== its link line: no OpenSSL, dns_sd or Argon2"
needed=$(readelf -d "$scratch/release/report-results" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$needed" | grep -q . || fail "readelf found no NEEDED entry"
if echo "$needed" | grep -E '^lib(ssl|crypto|dns_sd|argon2)\.'; then fail "report-results links the libraries above"; fi
# The lab's modules that wrap those libraries are not in it either.
if nm "$scratch/release/report-results" | grep -qE 'LabOpenSSL|LabDiscovery|LabMessaging|CLabArgon2'; then
    fail "report-results holds symbols of LabOpenSSL, LabDiscovery or LabMessaging"
fi

echo "== the report"
head -3 "$out/report/latency.tsv"
[ "$(head -1 "$out/report/latency.tsv")" = "$(printf 'flow\tsuite\tprovider\ttransport\tstep\tcount\tp50_ms\tp95_ms\tp99_ms')" ] \
    || fail "latency.tsv's header is not the one documented"
rows=$(tail -n +2 "$out/report/latency.tsv" | wc -l)
[ "$rows" -ge 4 ] || fail "latency.tsv has $rows rows"
# Every row has nine cells: a tab or a line break in a name would add cells or rows.
awk -F'\t' 'NF != 9 { exit 1 }' "$out/report/latency.tsv" || fail "a row of latency.tsv has not nine cells"
grep -q 'hostile\\tname\\n\\u{1b}\[31m' "$out/report/latency.tsv" || fail "the hostile group's name is not escaped"
echo "check.sh: the reporter-only package built and ran without the development files, and links none of them"
