#!/usr/bin/env bash
# `lab compare` on pairs of quickstart runs (Scenarios/quickstart.json, release build), as a
# team gating on it would meet them (issue 50). Three series of PAIRS pairs each:
#   quiet   two runs of the unchanged build: no row flagged.
#   busy    the same, with a same-priority busy loop on core 1 during the second run: no row
#           flagged (the comparison says the machine changed and judges nothing).
#   slowed  the second run with the openssl groups' exchange work 15% slower
#           (--test-slowdown exchange.work=15% --test-slowdown-provider openssl): a row of an
#           openssl group flagged slower, named so, and no row of another group flagged.
#   interleaved  the slowed series' question, each side as PARTS short runs alternated with
#           the other's (ABBA: a b b a a b …) and merged (`lab merge`): the randomised
#           interleaved design the verdict names for a host whose speed moves between runs.
# A pair the lab does not judge (the machine changed: a busy neighbour, or the host's speed by
# the runs' reference operations) says so; in the slowed series it counts apart, neither a
# hit nor a miss. Prints each pair's outcome and each series' counts; exit 1 if any pair
# misses.
#
#   bash Benchmarks/compare-pairs.sh [PAIRS] [SERIES...]   (default 20; quiet busy slowed interleaved)
#   KEEP=folder …                                         (keep every run there)
#   PARTS=3 …                                             (parts per side in interleaved)
#   LAB=path/to/lab bash Benchmarks/compare-pairs.sh       (another build)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-20}
shift || true
series=("$@")
[ ${#series[@]} -gt 0 ] || series=(quiet busy slowed interleaved)
[ -n "${LAB:-}" ] || bash scripts/build-release.sh --product lab >/dev/null
lab=${LAB:-.build/release/lab}
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
busy=""
stop_busy() { if [ -n "$busy" ]; then kill "$busy" 2>/dev/null || true; wait "$busy" 2>/dev/null || true; busy=""; fi; }
trap 'stop_busy; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
cores=$(nproc)
run() { "$lab" run Scenarios/quickstart.json --quiet --out "$@" >/dev/null; }
failed=0
for kind in "${series[@]}"; do
    passed=0
    unjudged=0
    for index in $(seq 1 "$pairs"); do
        pair="$work/$kind-$index"
        [ "$kind" = interleaved ] || run "$pair/a"
        case "$kind" in
            quiet) run "$pair/b" ;;
            busy)
                # Same priority as the lab, on the last core: what a neighbour's job does.
                taskset -c $((cores - 1)) sh -c 'while :; do :; done' &
                busy=$!
                run "$pair/b"
                stop_busy
                ;;
            slowed) run "$pair/b" --test-slowdown exchange.work=15% --test-slowdown-provider openssl ;;
            interleaved)
                for part in $(seq 1 "${PARTS:-3}"); do
                    # ABBA: the side that ran last runs first in the next block.
                    if [ $((part % 2)) -eq 1 ]; then order="a b"; else order="b a"; fi
                    for side in $order; do
                        if [ "$side" = a ]; then run "$pair/a$part"; else
                            run "$pair/b$part" --test-slowdown exchange.work=15% --test-slowdown-provider openssl
                        fi
                    done
                done
                "$lab" merge "$pair"/a[0-9]* --out "$pair/a" --quiet >/dev/null 2>&1
                "$lab" merge "$pair"/b[0-9]* --out "$pair/b" --quiet >/dev/null 2>&1
                ;;
            *) echo "unknown series: $kind" >&2; exit 1 ;;
        esac
        "$lab" compare "$pair/a" "$pair/b" --quiet --out "$pair/compare" || true
        if python3 - "$pair/compare/comparison.csv" "$pair/compare/comparison.md" "$kind" "$kind-$index" <<'PY' | tee "$pair/outcome"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["role"] == "candidate"]
markdown = open(sys.argv[2]).read()
kind, name = sys.argv[3], sys.argv[4]
flagged = [r for r in rows if r["verdict"] in ("slower", "faster")]
changed = "**not judged**: the machine" in markdown
def label(r): return f'{r["provider"]} {r["suite"]} {r["step"]} {r["verdict"]} x{float(r["p50_ratio"]):.3f}'
if kind in ("quiet", "busy"):
    ok = not flagged
    note = "machine changed, not judged" if changed else f"{len(rows)} rows judged"
    print(f"{name}: {'ok' if ok else 'MISS'}: {len(flagged)} rows flagged ({note})"
          + "".join("\n    " + label(r) for r in flagged))
else:
    slowed = [r for r in flagged if r["verdict"] == "slower" and r["provider"] == "openssl"]
    others = [r for r in flagged if r["provider"] != "openssl"]
    named = "openssl" in markdown.split("## Verdicts")[1].split("\n## ")[0]
    ok = bool(slowed) and not others and named
    if changed:
        print(f"{name}: not judged: the machine changed")
        sys.exit(3)
    works = [f'{r["suite"]} x{float(r["p50_ratio"]):.3f}' for r in slowed if r["step"] == "exchange.work"]
    print(f"{name}: {'ok' if ok else 'MISS'}: {len(slowed)} openssl rows slower (work: {', '.join(works) or 'none'}),"
          f" {len(others)} other rows flagged{', machine changed' if changed else ''}"
          + "".join("\n    " + label(r) for r in others))
sys.exit(0 if ok else 1)
PY
        then
            # A pair of the unchanged build that was not judged passes, and is counted apart.
            if grep -q "not judged" "$pair/outcome"; then unjudged=$((unjudged + 1)); else passed=$((passed + 1)); fi
        else
            case $? in 3) unjudged=$((unjudged + 1)) ;; *) failed=1 ;; esac
        fi
    done
    echo "== $kind: $passed of $pairs pairs judged as expected, $unjudged not judged (the machine changed), $((pairs - passed - unjudged)) missed"
done
exit $failed
