#!/usr/bin/env bash
# The counted regression gate (docs/performance.md, "Counted steps and the regression gate"): Scenarios/ci-gate.json run
# under callgrind (`lab run --counted`), every step's median instruction count checked
# against the committed baseline runs in Benchmarks/gate/ (`lab check`).
#
#   bash scripts/gate.sh check                one counted run against the baseline: exit 2 on a regression
#   bash scripts/gate.sh record [RUNS]        record a new baseline: RUNS counted runs (default 16),
#                                             run i with its heap and stack shifted (--layout i-1)
#   bash scripts/gate.sh check -- ARGS...     extra `lab run` arguments (tests: --test-slowdown decode=3%)
#
# It counts the release build, the one users run (`bash scripts/build-release.sh`, as the
# quickstart and the test suite build it): `check` and `record` build it first, which on a
# warm tree takes a few seconds and after a change rebuilds what changed. Options: --lab PATH (count that
# binary instead, built by the caller), --out DIR (where the run and check.md go; default
# .build/gate). The baseline must come from the same build configuration and machine class
# as the check: record it on the kind of machine CI runs on, and commit Benchmarks/gate/
# with the change that moved the counts, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."

lab=
out=.build/gate
scenario=Scenarios/ci-gate.json
baseline=Benchmarks/gate
command=${1:-}
[ $# -gt 0 ] && shift
runs=16
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --lab) lab="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        [0-9]*) runs="$1"; shift ;;
        *) echo "gate.sh: unknown argument '$1'" >&2; exit 64 ;;
    esac
done

# The release build of `lab`, unless --lab named a binary.
build_lab() {
    if [ -z "$lab" ]; then
        bash scripts/build-release.sh --product lab
        lab=.build/release/lab
    fi
}

case "$command" in
    check)
        shopt -s nullglob
        files=("$baseline"/run-*.json)
        [ ${#files[@]} -gt 0 ] || { echo "gate.sh: no baseline in $baseline (bash scripts/gate.sh record)" >&2; exit 1; }
        baselines=()
        for file in "${files[@]}"; do baselines+=(--baseline "$file"); done
        build_lab
        rm -rf "$out"
        "$lab" run "$scenario" --counted --quiet --out "$out/run" ${extra[@]+"${extra[@]}"}
        # check-junit.xml for CI's test report; on GitHub Actions also the job summary and
        # an annotation per regression.
        formats=(--format junit)
        [ "${GITHUB_ACTIONS:-}" = true ] && formats+=(--format github)
        "$lab" check "$out/run" "${baselines[@]}" --out "$out" "${formats[@]}"
        ;;
    record)
        # Whether the tree the baseline is counted from has changes not committed (the
        # baseline's own files aside).
        dirty=false
        [ -z "$(git status --porcelain --untracked-files=no -- . ":!$baseline" 2>/dev/null)" ] || dirty=true
        build_lab
        work=$(mktemp -d)
        trap 'rm -rf "$work"' EXIT
        # One run at a time, as `check` runs (a process per flow, side by side), each with its
        # heap and stack shifted. Where buffers fall moves some steps' counts (x25519's
        # AES-GCM by up to 1.1%), and so does the order the process's threads happen to
        # allocate in (an exchange, which awaits and moves between threads, by 0.44% in
        # about one process in three): another build, or another process, lands elsewhere.
        # The baselines' spread carries both into those steps' allowance.
        for i in $(seq 1 "$runs"); do
            "$lab" run "$scenario" --counted --quiet --layout $((i - 1)) --out "$work/$i"
        done
        rm -rf "$baseline"
        mkdir -p "$baseline"
        for i in $(seq 1 "$runs"); do
            [ -f "$work/$i/results.json" ] || { echo "gate.sh: run $i failed" >&2; exit 1; }
            cp "$work/$i/results.json" "$baseline/run-$i.json"
        done
        python3 - "$baseline" "$runs" "$(git rev-parse HEAD 2>/dev/null || echo unknown)" "$dirty" \
            "$(swift --version 2>/dev/null | head -1)" <<'PY'
import json, sys
folder, runs, commit, dirty, toolchain = sys.argv[1:6]
first = json.load(open(f"{folder}/run-1.json"))["metadata"]
json.dump({
    "scenario": "Scenarios/ci-gate.json",
    "runs": int(runs),
    "layouts": [json.load(open(f"{folder}/run-{i}.json"))["metadata"].get("heapLayout", 0) for i in range(1, int(runs) + 1)],
    "commit": commit,
    "dirty": dirty == "true",
    "toolchain": toolchain,
    "build": first["build"],
    "counter": first["counter"],
    "providers": first["providers"],
    "cpu": first["machine"]["cpu"],
    "recorded": first["startedAt"],
}, open(f"{folder}/provenance.json", "w"), indent=2, sort_keys=True)
PY
        echo "Benchmarks/gate: $runs counted runs of $scenario (provenance.json says from what)"
        ;;
    *)
        echo "usage: bash scripts/gate.sh check|record [RUNS] [--lab PATH] [--out DIR] [-- lab run arguments]" >&2
        exit 64
        ;;
esac
