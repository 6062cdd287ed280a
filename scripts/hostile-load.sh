#!/usr/bin/env bash
# The hostile-load test N times in a row (default 10), stopping at the first failure; each run
# prints its figures (honest p99 quiet and under attack, lab serve's peak resident memory).
# Needs the build with tests: bash scripts/build-release.sh --build-tests.
set -euo pipefail
cd "$(dirname "$0")/.."
times=${1:-10}
source scripts/test-pass.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for run in $(seq 1 "$times"); do
    status=0
    LAB_TEST_TIERS=hostile-load test_pass "hostile load $run" > "$log" 2>&1 || status=$?
    echo "run $run of $times: $(grep -E '^hostile load:' "$log" || echo 'no figures')"
    if [ "$status" -ne 0 ]; then
        grep -E "✘|recorded an issue|error" "$log" | head -20
        echo "run $run failed"
        exit 1
    fi
done
echo "$times runs in a row passed"
