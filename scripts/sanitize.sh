#!/usr/bin/env bash
# The test suite under AddressSanitizer (docs/hardening.md, "Fuzzing"): a debug build of everything with
# --sanitize=address in .build/asan, without jemalloc (ASan must own malloc), then the suites
# in scripts/test's passes. Skipped, since they measure what ASan changes: the tests that
# judge time (lab compare's and lab check's acceptance, the runner's open-model schedule,
# DNS-SD deadlines) or heap figures (memory tests, the hostile load's memory bound).
# A memory error stops the pass with AddressSanitizer's report; the exit status says
# whether any pass failed. About 6 min to build and 8 to run on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
export LAB_WITHOUT_JEMALLOC=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:suppressions=$PWD/Tests/asan.supp}"
bash scripts/setup.sh
bash scripts/services.sh
swift build --build-tests --sanitize=address --scratch-path .build/asan
# The tiers of scripts/test's passes (Tests/LabTestSupport/TestTier.swift), less the suites
# that judge time or heap figures.
timing='LabRunnerTests.CompareAcceptanceTests|LabRunnerTests.CheckAcceptanceTests|LabRunnerTests.RunnerTests|LabDiscoveryTests.DNSSDTests|MemoryTests|IdleMemoryTests|LabTransportsTests.HostileLoadTests'
source scripts/test-pass.sh
status=0
export LAB_TEST_BINARY=.build/asan/debug/crypto-labPackageTests.xctest
run() { LAB_TEST_TIERS=$2 test_pass "asan $1" --skip "$timing" || status=1; }
run cpu-bound unit
run load load
run integration integration
run daemon-restart daemon-restart
test_summary || status=1
exit "$status"
