#!/usr/bin/env bash
# Builds this package against the lab beside it and shows that every command of its own
# `lab` (third-lab) sees the botan provider and the openmetrics reporter: list, validate,
# run in process and over tcp, serve (and a run against it), merge; its derive flow, in process
# and against its `lab serve`, which serves derive/1 beside cx/1. Then its tests:
# Wycheproof and the Python peer, through the lab's test kit. Exit 0 only if all holds.
#
# LAB_SCRATCH: the build folder; scripts/test passes the lab's own (.build), whose modules
# this package's build then finds already built instead of building them again.
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
scratch=$(realpath -m "${LAB_SCRATCH:-.build}")
# The lab's own build script, so that the flags are the lab's: a flag that differs would
# build every module of the lab again.
build=(bash ../../scripts/build-release.sh --package-path "$here" --scratch-path "$scratch")
"${build[@]}" --build-tests
lab="$scratch/release/third-lab"
out=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT
fail() { echo "check.sh: $*" >&2; exit 1; }

echo "== list"
"$lab" list > "$out/list.txt"
grep -q '^ *botan' "$out/list.txt" || fail "lab list does not show the botan provider"
grep -q 'openmetrics' "$out/list.txt" || fail "lab list does not show the openmetrics reporter"

echo "== validate"
"$lab" validate Scenarios/three-backends.json
sed 's/"provider": "botan"/"provider": "nosuch"/' Scenarios/three-backends.json > "$out/unknown.json"
if "$lab" validate "$out/unknown.json" 2> "$out/refused.txt"; then fail "an unknown provider was accepted"; fi
grep -q 'botan' "$out/refused.txt" || fail "the refusal does not list botan among the providers"

echo "== schema"
"$lab" schema > "$out/schema.json"
python3 -m check_jsonschema --schemafile "$out/schema.json" Scenarios/three-backends.json

echo "== run, in process"
"$lab" run Scenarios/three-backends.json --out "$out/inprocess" --quiet
[ -s "$out/inprocess/metrics.prom" ] || fail "no metrics.prom from the openmetrics reporter"
grep -q 'provider="botan"' "$out/inprocess/metrics.prom" || fail "metrics.prom has no botan group"
# msg/1's chat, its keys and messages on botan (the service on swift-crypto).
grep -q 'flow="chat",.*provider="botan→swift-crypto"' "$out/inprocess/metrics.prom" \
    || fail "metrics.prom has no chat group on botan"

echo "== run, over tcp"
"$lab" run Scenarios/three-backends.json --set server.transport='"tcp"' --set load.iterations=100 \
    --out "$out/tcp" --quiet
grep -q 'transport="tcp",step="connect"' "$out/tcp/metrics.prom" || fail "the tcp run has no connect step"

echo "== serve --provider botan, and a run against it"
"$lab" serve --provider botan --port 0 --no-messaging --suites x25519,rsa-modern,classic@1024 > "$out/serve.txt" 2> "$out/serve.log" &
server_pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$out/serve.txt" && break; sleep 0.1; done
address=$(sed -n 's/^listening on //p' "$out/serve.txt" | head -1)
[ -n "$address" ] || fail "lab serve did not start: $(cat "$out/serve.log")"
grep -q 'provider botan' "$out/serve.txt" || fail "the server does not say it runs on botan"
"$lab" run Scenarios/three-backends.json --set "server.address=\"$address\"" --set 'server.transport="tcp"' \
    --set 'server.provider=null' --set 'flows[8]=null' --set load.iterations=50 --out "$out/remote" --quiet
kill -INT "$server_pid"; wait "$server_pid" || true; server_pid=

echo "== the derive flow: in process, then served by lab serve (derive/1 beside cx/1) over tcp"
"$lab" run Scenarios/derive.json --out "$out/derive" --quiet
grep -q 'flow="derive-2",suite="-",provider="botan→swift-crypto"' "$out/derive/metrics.prom" || fail "the derive run has no derive group"
"$lab" serve --provider botan --port 0 --no-messaging > "$out/serve-derive.txt" 2> "$out/serve-derive.log" &
server_pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$out/serve-derive.txt" && break; sleep 0.1; done
address=$(sed -n 's/^listening on //p' "$out/serve-derive.txt" | head -1)
[ -n "$address" ] || fail "lab serve did not start: $(cat "$out/serve-derive.log")"
grep -q '^protocols: cx/1, derive/1$' "$out/serve-derive.txt" \
    || fail "lab serve does not say it serves derive/1: $(cat "$out/serve-derive.txt")"
# Both sides' providers differ from the server's (botan): every answer is checked on another.
"$lab" run Scenarios/derive.json --set "server.address=\"$address\"" --set 'server.transport="tcp"' \
    --set 'server.provider=null' --set 'flows[0].clientProvider=null' --set 'flows[0].provider="openssl"' \
    --out "$out/derive-remote" --quiet
python3 - "$out/derive-remote/results.json" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
groups = [g for g in document["groups"] if g["key"]["flow"].startswith("derive")]
assert len(groups) == 2, [g["key"] for g in document["groups"]]
for group in groups:
    assert group["outcomes"].get("agreed") == group["iterations"] > 0, group["key"]
    assert not group["errors"], group["errors"]
    assert any(step["step"] == "exchange" for step in group["steps"]), group["key"]
PY
kill -INT "$server_pid"; wait "$server_pid" || true; server_pid=

echo "== merge --format openmetrics"
"$lab" merge "$out/inprocess/results.json" --format openmetrics --out "$out/merged" > /dev/null
[ -s "$out/merged/metrics.prom" ] || fail "lab merge did not write metrics.prom"

echo "== tests: Wycheproof and the Python peer, through LabTestKit"
swift test -c release --scratch-path "$scratch" --skip-build
echo "check.sh: the third provider and its reporter passed"
