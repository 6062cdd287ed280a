#!/usr/bin/env bash
# Formats the sources in place with swift-format (swift-nio's configuration), then lints strictly.
set -euo pipefail
cd "$(dirname "$0")/.."
swift format format --in-place --recursive --parallel Package.swift Sources Tests
swift format lint --strict --recursive --parallel Package.swift Sources Tests
