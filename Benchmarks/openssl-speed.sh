#!/usr/bin/env bash
# The lab's own timing of its calibration operations against `openssl speed`, side by side.
#
#   bash Benchmarks/openssl-speed.sh [--lab PATH] [--seconds N] [--rounds N] [--tolerance PCT]
#
# RSA-2048 sign, RSA-2048 verify and AES-128-CBC over 16 KiB, as the lab's `openssl`
# provider does them (`lab calibrate`: the provider's own API, a SHA-256 digest included in
# each signature), and as `openssl speed` does them on the same machine, alternately, N
# rounds each; the medians of the rounds are compared. Exit 0 when every operation of the
# lab is within the tolerance (default 5%) of openssl's, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
lab=.build/release/lab
seconds=3
rounds=3
tolerance=5
while [ $# -gt 0 ]; do
    case "$1" in
        --lab) lab=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --tolerance) tolerance=$2; shift 2 ;;
        *) echo "unknown option: $1" >&2; exit 64 ;;
    esac
done
[ -x "$lab" ] || { echo "no lab at $lab: build it (swift build -c release --product lab) or give --lab" >&2; exit 64; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq 1 "$rounds"); do
    # -mr: "+F2:<i>:2048:<sign/s>:<verify/s>" and "+F:<i>:AES-128-CBC:<bytes/s>".
    openssl speed -mr -seconds "$seconds" rsa2048 2>/dev/null | grep '^+F2:' >"$work/openssl-rsa-$round"
    openssl speed -mr -seconds "$seconds" -evp aes-128-cbc -bytes 16384 2>/dev/null | grep '^+F:' >"$work/openssl-aes-$round"
    "$lab" calibrate --json --seconds "$seconds" >"$work/lab-$round.json"
done

python3 - "$work" "$rounds" "$tolerance" "$lab" <<'PY'
import json, statistics, sys
work, rounds, tolerance, lab = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
openssl = {"rsa2048-sign": [], "rsa2048-verify": [], "aes-128-cbc-16k": []}
ours = {key: [] for key in openssl}
provider = ""
for r in range(1, rounds + 1):
    fields = open(f"{work}/openssl-rsa-{r}").read().strip().split(":")
    openssl["rsa2048-sign"].append(float(fields[3]))
    openssl["rsa2048-verify"].append(float(fields[4]))
    fields = open(f"{work}/openssl-aes-{r}").read().strip().split(":")
    openssl["aes-128-cbc-16k"].append(float(fields[3]) / 16384)
    document = json.load(open(f"{work}/lab-{r}.json"))
    provider = document["provider"]
    for key in ours:
        ours[key].append(document["rates"][key])
print(f"lab ({lab}, {provider}) against `openssl speed`, median of {rounds} alternating rounds:")
print(f"  {'operation':<18}{'openssl ops/s':>15}{'lab ops/s':>12}{'lab ÷ openssl':>15}")
failed = []
for key in openssl:
    a, b = statistics.median(openssl[key]), statistics.median(ours[key])
    ratio = b / a
    ok = abs(ratio - 1) * 100 <= tolerance
    if not ok:
        failed.append(key)
    print(f"  {key:<18}{a:>15.1f}{b:>12.1f}{ratio:>14.3f}  {'ok' if ok else 'OUTSIDE ±%g%%' % tolerance}")
    print(f"    rounds: openssl {', '.join('%.1f' % x for x in openssl[key])}; lab {', '.join('%.1f' % x for x in ours[key])}")
if failed:
    print(f"outside ±{tolerance:g}%: {', '.join(failed)}")
    sys.exit(1)
print(f"every operation within ±{tolerance:g}%")
PY
