# Sourced by scripts/test, scripts/sanitize.sh and scripts/hostile-load.sh.
#
# test_pass NAME [swift test arguments...]: runs one pass of the suite with
# `swift test --skip-build ARGS`, its output shown as it comes.
# It fails (status 1) when swift test fails, and also when the pass ran no test at all:
# `swift test --filter X` exits 0 when X matches nothing, so a renamed suite would
# otherwise drop out of its pass in silence.
test_pass() {
    local name=$1
    shift
    local log
    log=$(mktemp)
    echo "== test pass: $name"
    local status=0
    # swift test's own status, whatever the caller's pipefail says.
    swift test --skip-build "$@" 2>&1 | tee "$log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    # Swift Testing closes a run with "Test run with N tests in M suites passed|failed ...".
    local count
    count=$(grep -Eo 'Test run with [0-9]+ tests?' "$log" | tail -n 1 | grep -Eo '[0-9]+' || true)
    if [ -z "$count" ] || [ "$count" -eq 0 ]; then
        echo "test pass '$name' ran no test (arguments: $*): a filter that matches nothing fails the pass"
        status=1
    fi
    rm -f "$log"
    [ "$status" -eq 0 ] || echo "test pass '$name' FAILED"
    return "$status"
}
