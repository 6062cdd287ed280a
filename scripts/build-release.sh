#!/usr/bin/env bash
# The one build of this repository: release, with warnings as errors. The quickstart, the
# test suite (`--build-tests`) and the counted gate all build through here, with the same
# flags, so that none of them rebuilds what another built (a flag that differs rebuilds every
# Swift module: about 260 s on 2 cores). Arguments go to `swift build`: `--product lab`,
# `--build-tests`, `--scratch-path DIR`, more `-Xswiftc` flags.
#
# Without debug information (-gnone for Swift, -g0 for C and C++): the same machine code
# (the counted gate's instruction counts do not move), a lab of about 20 MB instead of 100,
# and less to compile and link. The two BoringSSL copies alone (772 C and C++ files, the
# first half of a clean build) compile about a fifth faster without -g (2026-11-27). A crash
# still names its functions (the symbol table stays); it has no file and line. Counted runs
# strip debug information anyway: Valgrind 3.19 cannot read Swift 6.3's.
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build -c release -Xswiftc -warnings-as-errors -Xswiftc -gnone -Xcc -g0 \
    --explicit-target-dependency-import-check error "$@"
