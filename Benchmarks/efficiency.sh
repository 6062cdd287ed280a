#!/usr/bin/env bash
# The lab's own overhead, held: in-process x25519 (`Scenarios/perf/inprocess-x25519.json`,
# default settings) at TARGET% or more of the primitive bound measured in the same run, the
# median of RUNS runs of the release build (docs/performance.md, "The primitive bound").
# Prints each run's efficiency and exchanges/s; exit 1 if the median misses the target.
#
#   bash Benchmarks/efficiency.sh [RUNS] [TARGET_PERCENT] [SCENARIO]   (default 3, 90)
#   LAB=path/to/lab bash Benchmarks/efficiency.sh                       (another build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
target=${2:-90}
scenario=${3:-Scenarios/perf/inprocess-x25519.json}
[ -n "${LAB:-}" ] || bash scripts/build-release.sh --product lab >/dev/null
lab=${LAB:-.build/release/lab}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for index in $(seq 1 "$runs"); do
    # Exit 2 is a missed threshold: judged below, from results.json.
    "$lab" run "$scenario" --quiet --out "$work/$index" > "$work/$index.log" 2>&1 || [ $? -eq 2 ] ||
        { cat "$work/$index.log"; exit 1; }
done
python3 - "$work" "$runs" "$target" <<'PY'
import json, statistics, sys
work, runs, target = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
shares = []
for index in range(1, runs + 1):
    document = json.load(open(f"{work}/{index}/results.json"))
    efficiency = [t for t in document["thresholds"] if t["metric"] == "efficiency"]
    if not efficiency or efficiency[0].get("value") is None:
        sys.exit(f"run {index}: the scenario has no efficiency threshold with a value")
    share = 100 * efficiency[0]["value"]
    rate = document["completedIterations"] / (document["measuredNanoseconds"] / 1e9)
    print(f"run {index}: {share:.1f}% of the primitive bound, {rate:,.0f} exchanges/s")
    shares.append(share)
median = statistics.median(shares)
verdict = "holds" if median >= target else "MISSED"
print(f"median {median:.1f}% against {target:g}%: {verdict}")
sys.exit(0 if median >= target else 1)
PY
