#!/usr/bin/env bash
# Records the regression gate's baseline, Benchmarks/baseline/run-N.json: N runs (default 5)
# of Scenarios/ci-check.json, each in a process of its own, with the debug build CI uses.
# Each file keeps the run's metadata, calibration and rounds (what `lab check` reads) and
# drops the histograms. Run it on the machine class CI runs on; commit the folder with the
# change that moved the figures, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
swift build --product lab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$runs"); do
    .build/debug/lab run Scenarios/ci-check.json --out "$work/$i" --quiet
done
rm -rf Benchmarks/baseline
mkdir -p Benchmarks/baseline
for i in $(seq 1 "$runs"); do
    python3 - "$work/$i/results.json" "Benchmarks/baseline/run-$i.json" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
document["groups"] = []
json.dump(document, open(sys.argv[2], "w"), indent=1, sort_keys=True)
PY
done
echo "Benchmarks/baseline: $runs runs of Scenarios/ci-check.json"
