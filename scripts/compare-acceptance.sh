#!/usr/bin/env bash
# `lab compare`'s acceptance, measured on this machine: three variants of one scenario (two
# of the unchanged build, one with `sign` made SLOWDOWN slower by `--test-slowdown`: real work
# inside the step), each as six short runs interleaved with the others' in rotating order and
# merged with `lab merge`, then compared. Criteria: the second unchanged run shows no
# significant change in any step; the slowed one is flagged in `sign` and nothing else.
# Prints the comparison's summary lines. One run at a time (its verdicts are about time);
# about 40 s here. Exit 1 if a criterion fails: on a shared VM that measures the host as much
# as the lab (docs/performance.md).
#
#   bash scripts/compare-acceptance.sh [SLOWDOWN]   (default 25%; LAB=path/to/lab)
set -euo pipefail
cd "$(dirname "$0")/.."
slowdown=${1:-25%}
work=${COMPARE_ACCEPTANCE_OUT:-.build/compare-acceptance}
[ -n "${LAB:-}" ] || bash scripts/build-release.sh --product lab >/dev/null
lab=${LAB:-.build/release/lab}
rm -rf "$work"
mkdir -p "$work"
cat > "$work/compare.json" <<'JSON'
{
  "name": "compare-check",
  "server": { "transport": "in-process", "provider": "swift-crypto" },
  "clients": { "count": 1 },
  "load": { "model": "closed", "iterations": 200, "warmupIterations": 10 },
  "flows": [ { "flow": "cx", "suite": "x25519" } ],
  "thresholds": { "errors": "== 0" }
}
JSON
run() { "$lab" run "$work/compare.json" --out "$work/$1" --quiet "${@:2}"; }
run warm-up
variants=(first second slowed)
for block in 0 1 2 3 4 5; do
    for offset in 0 1 2; do
        variant=${variants[$(((block + offset) % 3))]}
        case "$variant" in
            slowed) run "slowed-$block" --test-slowdown "sign=$slowdown" ;;
            *) run "$variant-$block" ;;
        esac
    done
done
for variant in "${variants[@]}"; do
    "$lab" merge "$work/$variant"-[0-5] --out "$work/$variant" --quiet
done
"$lab" compare "$work/first" "$work/second" "$work/slowed" --out "$work/comparison" --quiet || true
grep -E '^- \*\*(second|slowed)\*\*' "$work/comparison/comparison.md"
python3 - "$work/comparison/comparison.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["role"] == "candidate"]
changed = lambda run: [r["step"] for r in rows if r["run"] == run and r["verdict"] in ("slower", "faster")]
second, slowed = changed("second"), changed("slowed")
print(f"second (unchanged): changed {second}; slowed: changed {slowed}")
sys.exit(0 if not second and slowed == ["sign"] else 1)
PY
