#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/, docs/hardening.md, "Fuzzing") and runs each of them.
#
#   bash scripts/fuzz.sh                         every target for 60 s (LAB_FUZZ_SECONDS=N bash scripts/test adds it)
#   bash scripts/fuzz.sh --seconds 600 cx msg    two targets, ten minutes each
#   bash scripts/fuzz.sh --release --runs 10000000   the long run: 10 million inputs per target
#
# Options: --seconds N | --runs N, --parallel P (targets at once; default: the cores),
# --max-len B (the longest input, default 16384), --release, --no-build (reuse the build),
# --build-only (build, fuzz nothing). The targets are built -Onone (Fuzz/.build/debug) unless
# --release: for CI's 30-second runs the build costs more than the fuzzing, and the debug
# build takes 35–38% less CPU than the optimised one, which fuzzes 2–5 times as many inputs per
# second (docs/hardening.md, "Fuzzing": both builds' times and speeds); long runs want --release
# (Fuzz/.build/release). Inputs that reach new code go to a scratch corpus
# (Fuzz/.build/corpus/<target>), never into the repository; `--merge` folds that scratch
# corpus, minimised, back into Fuzz/Corpus/<target>. A crash, leak, hang (10 s per input),
# memory blow-up (2 GiB) or broken property stops its target, saves the input under
# Fuzz/Findings/<target>/ and fails the script: fix it, then move the input to
# Fuzz/Regressions/<target>/, which FuzzCorpusTests replays in every test run.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
runs=""
parallel=$(nproc)
max_len=16384
config=debug
build=yes
fuzz=yes
merge=no
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --parallel) parallel="$2"; shift 2 ;;
        --max-len) max_len="$2"; shift 2 ;;
        --release) config=release; shift ;;
        --no-build) build=no; shift ;;
        --build-only) fuzz=no; shift ;;
        --merge) merge=yes; shift ;;
        frame|cx|msg|scenario) targets+=("$1"); shift ;;
        *) echo "fuzz.sh: unknown argument '$1' (targets: frame cx msg scenario)" >&2; exit 64 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(frame cx msg scenario)

if [ "$build" = yes ]; then
    echo "Building the fuzz targets ($config, -sanitize=fuzzer,address)"
    (cd Fuzz && swift build -c "$config" -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library) ||
        { echo "fuzz.sh: the fuzz targets did not build" >&2; exit 1; }
fi
[ "$fuzz" = yes ] || exit 0
bin=Fuzz/.build/$config
logs=Fuzz/.build/logs
mkdir -p "$logs"

if [ -n "$runs" ]; then limit=(-runs="$runs"); what="$runs inputs"; else limit=(-max_total_time="$seconds"); what="${seconds} s"; fi
# 64 frames of each allocation's stack, not ASan's default 30: Fuzz/lsan.supp suppresses
# objects made by a global's one-time initializer (`…_WZ`), which must be in the stack to
# match. CXTarget's fixture makes its keys 30 frames below its `_WZ` (one generic call more,
# FixedKeys.key, pushed it out, and a swift-crypto ML-DSA seed was reported leaked).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1:malloc_context_size=64}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/Fuzz/lsan.supp:print_suppressions=0}"

run_target() {
    local target=$1
    local scratch=Fuzz/.build/corpus/$target findings=Fuzz/Findings/$target
    mkdir -p "$scratch" "$findings"
    rm -f "$logs/$target.rc"
    # The scratch corpus first: libFuzzer writes new inputs to the first folder only.
    # msg's service keeps state by design (captcha book, sessions, SQLite's page cache), so
    # most inputs allocate more than they free, and libFuzzer then scans the whole heap for
    # leaks after each one: 85% of the time, 1,200 inputs/s instead of 8,000. For msg, leaks
    # are checked once, at exit, over everything the run allocated (LeakSanitizer fails the
    # run if any block is unreachable); replay the scratch corpus with -detect_leaks=1 to
    # find the input.
    local leaks=1
    [ "$target" = msg ] && leaks=0
    local code=0
    "$bin/fuzz-$target" "${limit[@]}" -detect_leaks="$leaks" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
        -artifact_prefix="$findings/" "$scratch" "Fuzz/Corpus/$target" > "$logs/$target.log" 2>&1 || code=$?
    echo "$code" > "$logs/$target.rc"
}

echo "Fuzzing ${targets[*]} for $what each, $parallel at a time (logs: $logs)"
for target in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
    run_target "$target" &
done
wait
status=0
for target in "${targets[@]}"; do
    code=$(cat "$logs/$target.rc" 2>/dev/null || echo 1)
    done_line=$(grep -E "^Done [0-9]+ runs" "$logs/$target.log" | tail -1 || true)
    if [ "$code" -eq 0 ]; then
        echo "  $target: ${done_line:-finished}"
    else
        echo "  $target: FAILED (exit $code): the input is under Fuzz/Findings/$target/, the log in $logs/$target.log"
        grep -E "ERROR|rror:|SUMMARY|fuzz target" "$logs/$target.log" | head -6 | sed 's/^/      /' || true
        status=1
    fi
done

if [ "$merge" = yes ] && [ "$status" -eq 0 ]; then
    for target in "${targets[@]}"; do
        # -merge=1 keeps the inputs of the second and later folders that add coverage to the first.
        "$bin/fuzz-$target" -merge=1 -max_len=16384 "Fuzz/Corpus/$target" "Fuzz/.build/corpus/$target" \
            > "$logs/$target-merge.log" 2>&1
        echo "  $target: corpus now $(find "Fuzz/Corpus/$target" -type f | wc -l) files"
    done
fi
exit "$status"
