#!/usr/bin/env bash
# The counted gate's acceptance, against the committed baseline in Benchmarks/gate/, with real
# code changes of about 1% (docs/performance.md, "Counted steps and the regression gate"):
#
# - RUNS unchanged counted runs of the release build (`bash scripts/gate.sh check`): none may fail.
# - A probe build: the same release build with `-Xswiftc -DLAB_GATE_PROBE` (in .build-probe,
#   a second build folder), which compiles in one real operation at each of three places,
#   switched on one at a time by LAB_GATE_PROBE=PLACE:BYTES (Sources/LabCore/GateProbe.swift):
#     swift-crypto.sign:32   one more SHA-256 (32 bytes) inside swift-crypto's Ed25519 signing
#     openssl.verify:32      one more SHA-256 (32 bytes) through OpenSSL's EVP inside RSA-PSS verification
#     wire.decode:6          an Adler-32 over 6 bytes inside the decoding of a cx/1 reply
#   each sized to about 1% of its step. RUNS runs of each must exit 2 and name that step of
#   that suite, and nothing else but an exchange; the probe build with no probe must pass.
#
# Prints each probe's ratio and the spread of every step over the unchanged runs. Two runs at
# a time (each counts its two flows in two processes). Exit 1 if a criterion fails.
#
#   bash scripts/gate-acceptance.sh [RUNS]     (default 10; the probe build takes a release
#                                               build's time the first time)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
work=${GATE_ACCEPTANCE_OUT:-.build/gate-acceptance}
probes=(swift-crypto.sign:32 openssl.verify:32 wire.decode:6)

bash scripts/build-release.sh --product lab
bash scripts/build-release.sh --product lab -Xswiftc -DLAB_GATE_PROBE --scratch-path .build-probe
release=.build/release/lab
probe=.build-probe/release/lab

rm -rf "$work"
mkdir -p "$work"
one() { # kind index lab [LAB_GATE_PROBE value]
    local kind=$1 index=$2 lab=$3 value=${4:-} status=0
    LAB_GATE_PROBE=$value bash scripts/gate.sh check --lab "$lab" --out "$work/$kind-$index" \
        > "$work/$kind-$index.log" 2>&1 || status=$?
    echo "$status" > "$work/$kind-$index.status"
}
for index in $(seq 1 "$runs"); do
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    one same "$index" "$release" &
    for value in "${probes[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
        one "${value%%:*}" "$index" "$probe" "$value" &
    done
done
while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
one probe-off 1 "$probe" &
wait

python3 - "$work" "$runs" "${probes[@]}" <<'PY'
import csv, json, sys
work, runs, probes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def outcome(folder):
    try:
        status = int(open(f"{folder}.status").read())
        rows = list(csv.DictReader(open(f"{folder}/check.csv")))
    except (FileNotFoundError, ValueError):
        return None, [], {}
    flagged = sorted(f"{r['suite']} {r['step']}" for r in rows if r["verdict"] == "more work")
    ratios = {f"{r['suite']} {r['step']}": float(r["ratio"]) for r in rows}
    return status, flagged, ratios
ok = True
same = [outcome(f"{work}/same-{i}") for i in range(1, runs + 1)]
failed = [(s, f) for s, f, _ in same if s != 0]
print(f"unchanged release build: {runs - len(failed)} of {runs} runs passed; the others: {failed}")
ok &= not failed
status, flagged, _ = outcome(f"{work}/probe-off-1")
print(f"probe build, no probe: exit {status}, flagged {flagged}")
ok &= status == 0
expected = {"swift-crypto.sign": "x25519 sign", "openssl.verify": "rsa-modern verify", "wire.decode": "x25519 decode"}
for value in probes:
    place = value.split(":")[0]
    step = expected[place]
    results = [outcome(f"{work}/{place}-{i}") for i in range(1, runs + 1)]
    named = [r for r in results if r[0] == 2 and step in r[1]
             and all(x == step or x.endswith(" exchange") or (place == "wire.decode" and x.endswith(" decode")) for x in r[1])]
    ratios = sorted({round(r[2].get(step, 0), 5) for r in results})
    print(f"{value}: {len(named)} of {runs} runs exit 2 naming {step} (ratio {ratios}); "
          f"the others: {[(r[0], r[1]) for r in results if r not in named]}")
    ok &= len(named) == runs
medians = {}
for i in range(1, runs + 1):
    try:
        document = json.load(open(f"{work}/same-{i}/run/results.json"))
    except FileNotFoundError:
        continue
    for group in document["groups"]:
        for step in group["steps"]:
            counts = step.get("counts")
            if not counts or len(counts["instructions"]) < 5:
                continue
            values = sorted(counts["instructions"])
            medians.setdefault((group["key"]["suite"], step["step"]), []).append(values[(len(values) - 1) // 2])
print("spread of each step's median over the unchanged runs:")
for (suite, step), values in sorted(medians.items()):
    spread = (max(values) - min(values)) / min(values)
    print(f"  {suite:11} {step:15} {min(values):>12,} – {max(values):>12,}  {max(values) - min(values):>4} instructions  {100 * spread:.4f}%")
sys.exit(0 if ok else 1)
PY
