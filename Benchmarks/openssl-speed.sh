#!/usr/bin/env bash
# The lab's own timing of its calibration operations against `openssl speed`, side by side.
#
#   bash Benchmarks/openssl-speed.sh [--lab PATH] [--seconds N] [--rounds N] [--tolerance PCT]
#
# RSA-2048 sign, RSA-2048 verify and AES-128-CBC over 16 KiB, as the lab's `openssl`
# provider does them (`lab calibrate`: the provider's own API, a SHA-256 digest included in
# each signature), and as `openssl speed` does them on the same machine, alternately, N
# rounds each; the medians of the rounds are compared. Both ways of counting are compared:
# per second of CPU time (plain `openssl speed` divides by user CPU time; the lab by its
# thread's CPU time) and per second of wall time (`openssl speed -elapsed`). Exit 0 when
# every operation of the lab is within the tolerance (default 5%) of openssl's by CPU
# time, 1 otherwise; the wall-clock ratios are shown beside (a busy machine moves them).
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
    openssl speed -mr -elapsed -seconds "$seconds" rsa2048 2>/dev/null | grep '^+F2:' >"$work/wall-rsa-$round"
    openssl speed -mr -elapsed -seconds "$seconds" -evp aes-128-cbc -bytes 16384 2>/dev/null | grep '^+F:' >"$work/wall-aes-$round"
    "$lab" calibrate --json --seconds "$seconds" >"$work/lab-$round.json"
done

python3 - "$work" "$rounds" "$tolerance" "$lab" <<'PY'
import json, statistics, sys
work, rounds, tolerance, lab = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def read(prefix):
    rates = {"rsa2048-sign": [], "rsa2048-verify": [], "aes-128-cbc-16k": []}
    for r in range(1, rounds + 1):
        fields = open(f"{work}/{prefix}-rsa-{r}").read().strip().split(":")
        rates["rsa2048-sign"].append(float(fields[3]))
        rates["rsa2048-verify"].append(float(fields[4]))
        fields = open(f"{work}/{prefix}-aes-{r}").read().strip().split(":")
        rates["aes-128-cbc-16k"].append(float(fields[3]) / 16384)
    return rates
openssl_cpu, openssl_wall = read("openssl"), read("wall")
lab_cpu = {key: [] for key in openssl_cpu}
lab_wall = {key: [] for key in openssl_cpu}
provider = ""
for r in range(1, rounds + 1):
    document = json.load(open(f"{work}/lab-{r}.json"))
    provider = document["provider"]
    for key in lab_cpu:
        lab_cpu[key].append(document["cpuRates"][key])
        lab_wall[key].append(document["rates"][key])
print(f"lab ({lab}, {provider}) against `openssl speed`, median of {rounds} alternating rounds:")
print(f"  {'operation':<18}{'openssl/s CPU':>14}{'lab/s CPU':>12}{'ratio':>8}   {'openssl/s wall':>15}{'lab/s wall':>12}{'ratio':>8}")
failed = []
for key in openssl_cpu:
    a, b = statistics.median(openssl_cpu[key]), statistics.median(lab_cpu[key])
    c, d = statistics.median(openssl_wall[key]), statistics.median(lab_wall[key])
    ok = abs(b / a - 1) * 100 <= tolerance
    if not ok:
        failed.append(key)
    print(f"  {key:<18}{a:>14.1f}{b:>12.1f}{b / a:>8.3f}   {c:>15.1f}{d:>12.1f}{d / c:>8.3f}  {'ok' if ok else 'OUTSIDE ±%g%%' % tolerance}")
if failed:
    print(f"outside ±{tolerance:g}% (CPU time): {', '.join(failed)}")
    sys.exit(1)
print(f"every operation within ±{tolerance:g}% of openssl speed (CPU time)")
PY
