#!/usr/bin/env bash
# The one build of this repository: release, with warnings as errors. The quickstart, the
# test suite (`--build-tests`) and the counted gate all build through here, with the same
# flags, so that none of them rebuilds what another built (a flag that differs rebuilds every
# Swift module: about 260 s on 2 cores). Arguments go to `swift build`: `--product lab`,
# `--build-tests`, `--scratch-path DIR`, more `-Xswiftc` flags.
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build -c release -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error "$@"
