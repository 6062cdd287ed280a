# Sourced by scripts/test, scripts/sanitize.sh and scripts/hostile-load.sh.
#
# test_pass NAME [swift test arguments...]: runs one pass of the suite with
# `swift test --skip-build ARGS`, its output shown as it comes.
# It fails (status 1) when swift test fails, and also when the pass ran no test at all:
# `swift test --filter X` exits 0 when X matches nothing, and a tier that no suite has
# skips every suite, so a renamed suite or tier would otherwise drop out in silence.
test_pass() {
    local name=$1
    shift
    local log
    log=$(mktemp)
    echo "== test pass: $name"
    local started=$SECONDS
    local status=0
    # swift test's own status, whatever the caller's pipefail says.
    swift test --skip-build "$@" 2>&1 | tee "$log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    # Swift Testing closes a run with "Test run with N tests in M suites passed|failed ...",
    # where N counts the tests of suites skipped by their tier too (LAB_TEST_TIERS): what
    # ran is each test's own "✔ Test ... passed after" or "✘ Test ... failed after" line
    # (with "━" for a test with known issues).
    local count=0
    if grep -Eq 'Test run with [0-9]+ tests?' "$log"; then
        count=$(grep -E '^[^ ]+ Test .* (passed|failed) after ' "$log" | grep -vc ' Test run with ' || true)
    fi
    if [ "$count" -eq 0 ]; then
        echo "test pass '$name' ran no test (LAB_TEST_TIERS=${LAB_TEST_TIERS:-}, arguments: $*): a pass that runs nothing fails"
        status=1
    fi
    rm -f "$log"
    echo "== test pass $name: $((SECONDS - started)) s"
    [ "$status" -eq 0 ] || echo "test pass '$name' FAILED"
    return "$status"
}
