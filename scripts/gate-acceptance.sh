#!/usr/bin/env bash
# The counted gate's acceptance (issue 19), against the committed baseline in Benchmarks/gate/:
# RUNS unchanged counted runs of Scenarios/ci-gate.json (default 20, each its own process)
# must flag nothing; RUNS runs with decode 3% slower, and RUNS with sign 3% slower
# (`--test-slowdown`: real work inside the step), must each flag that step in both suites, and
# nothing but it and an exchange, in at least RUNS − 1 runs. Prints each step's spread over the
# unchanged runs (the largest and smallest median, relative). Two runs at a time; about 20
# minutes for the default 60 runs here. Exit 1 if a criterion fails.
#
#   bash scripts/gate-acceptance.sh [RUNS]        (LAB=path/to/lab to count another build than .build/debug/lab)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
work=${GATE_ACCEPTANCE_OUT:-.build/gate-acceptance}
lab=${LAB:-.build/debug/lab}
rm -rf "$work"
mkdir -p "$work"
one() { # kind index [lab run arguments]
    local kind=$1 index=$2
    shift 2
    bash scripts/gate.sh check --lab "$lab" --out "$work/$kind-$index" -- "$@" > "$work/$kind-$index.log" 2>&1 || true
}
for index in $(seq 1 "$runs"); do
    for kind in same decode sign; do
        while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
        case "$kind" in
            same) one same "$index" & ;;
            *) one "$kind" "$index" --test-slowdown "$kind=3%" & ;;
        esac
    done
done
wait
python3 - "$work" "$runs" <<'PY'
import csv, glob, json, sys
work, runs = sys.argv[1], int(sys.argv[2])
def flagged(folder):
    try:
        rows = list(csv.DictReader(open(f"{folder}/check.csv")))
    except FileNotFoundError:
        return None
    return sorted(f"{r['suite']} {r['step']}" for r in rows if r["verdict"] == "more work")
ok = True
same = [flagged(f"{work}/same-{i}") for i in range(1, runs + 1)]
missing = sum(f is None for f in same)
false_alarms = [f for f in same if f]
print(f"unchanged: {runs - missing} of {runs} runs checked, {len(false_alarms)} flagged {false_alarms}")
ok &= missing == 0 and not false_alarms
for step in ["decode", "sign"]:
    results = [flagged(f"{work}/{step}-{i}") for i in range(1, runs + 1)]
    named = [f for f in results if f and {f"x25519 {step}", f"rsa-modern {step}"} <= set(f)
             and all(x.endswith(" " + step) or x.endswith(" exchange") for x in f)]
    exchange = sum(any(x.endswith(" exchange") for x in f) for f in named)
    print(f"{step} +3%: {len(named)} of {runs} runs flagged {step} in both suites and nothing else"
          f" ({exchange} also an exchange); the others: {[f for f in results if f not in named]}")
    ok &= len(named) >= runs - 1
# Each step's spread over the unchanged runs: (largest median − smallest) / smallest.
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
    print(f"  {suite:11} {step:15} {min(values):>12,} – {max(values):>12,}  {100 * spread:.3f}%")
sys.exit(0 if ok else 1)
PY
