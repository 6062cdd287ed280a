# Sourced by scripts/test, scripts/sanitize.sh and scripts/hostile-load.sh.

# What failed, gathered over the passes for test_summary: a CI log is often read from its
# tail, and a failure scrolls away behind the passes after it. The file is made by the first
# failure.
test_failures=

# record_failure TEXT...: adds lines to the closing summary.
record_failure() {
    [ -n "$test_failures" ] || test_failures=$(mktemp)
    printf '%s\n' "$@" >> "$test_failures"
}

# test_pass NAME [Swift Testing arguments...]: runs one pass of the suite, the test binary
# itself with `--testing-library swift-testing ARGS` (`--filter`, `--skip`), its output shown
# as it comes. The binary is $LAB_TEST_BINARY, by default the release one that
# `bash scripts/build-release.sh --build-tests` builds with the lab the tests run. Not through
# `swift test --skip-build`: that plans the package and runs the binary twice (XCTest's run,
# then Swift Testing's), 5 to 11 s a pass on 2 cores, and the suite has 12 passes.
# It fails (status 1) when the binary fails, and also when the pass ran no test at all:
# `--filter X` exits 0 when X matches nothing, and a tier that no suite has skips every
# suite, so a renamed suite or tier would otherwise drop out in silence.
# A failed pass leaves its failed tests' lines for test_summary.
test_pass() {
    local name=$1
    shift
    local log
    log=$(mktemp)
    echo "== test pass: $name"
    local started=$SECONDS
    local status=0
    # The binary's own status, whatever the caller's pipefail says. NO_COLOR: the lines the
    # summary picks out begin with Swift Testing's symbols, not with a colour's escape code.
    NO_COLOR=1 "${LAB_TEST_BINARY:-.build/release/crypto-labPackageTests.xctest}" --testing-library swift-testing "$@" 2>&1 | tee "$log"
    local binary_status=${PIPESTATUS[0]}
    [ "$binary_status" -eq 0 ] || status=1
    # Swift Testing closes a run with "Test run with N tests in M suites passed|failed ...",
    # where N counts the tests of suites skipped by their tier too (LAB_TEST_TIERS): what
    # ran is each test's own "✔ Test ... passed after" or "✘ Test ... failed after" line
    # (with "━" for a test with known issues).
    local count=0
    if grep -Eq 'Test run with [0-9]+ tests?' "$log"; then
        count=$(grep -E '^[^ ]+ Test .* (passed|failed) after ' "$log" | grep -vc ' Test run with ' || true)
    fi
    if [ "$count" -eq 0 ] && [ "$binary_status" -eq 0 ]; then
        echo "test pass '$name' ran no test (LAB_TEST_TIERS=${LAB_TEST_TIERS:-}, arguments: $*): a pass that runs nothing fails"
        status=1
    fi
    if [ "$status" -ne 0 ]; then
        record_failure "test pass '$name' failed (LAB_TEST_TIERS=${LAB_TEST_TIERS:-}, arguments: $*):"
        # Swift Testing's lines for a failed test and its issues (file:line: expectation), each
        # with its details ("↳", the comments) and the lines they run on to, up to the next
        # line of Swift Testing's; with none, how the output ended (a crash, a build error).
        local failed
        failed=$(awk '
            /^✘ / { keep = ($0 !~ / Test run with /); lines = 0; if (keep) print; next }
            /^↳ / { if (keep) { lines = 0; print }; next }
            /^(◇|✔|➜|⚠) / { keep = 0; next }
            keep && lines < 20 { lines++; print }
        ' "$log" | head -n 80)
        if [ -n "$failed" ]; then
            printf '%s\n' "$failed" | sed 's/^/    /' >> "$test_failures"
        elif [ "$binary_status" -eq 0 ]; then
            echo "    it ran no test" >> "$test_failures"
        else
            echo "    no test named as failed; the test binary exited $binary_status, its output ending:" >> "$test_failures"
            tail -n 15 "$log" | sed 's/^/    /' >> "$test_failures"
        fi
    fi
    rm -f "$log"
    echo "== test pass $name: $((SECONDS - started)) s"
    [ "$status" -eq 0 ] || echo "test pass '$name' FAILED"
    return "$status"
}

# test_summary: the closing summary, every recorded failure or that there was none; fails
# when a failure was recorded.
test_summary() {
    echo "== summary"
    if [ -n "$test_failures" ]; then
        cat "$test_failures"
        rm -f "$test_failures"
        test_failures=
        return 1
    fi
    echo "nothing failed"
}
