#!/usr/bin/env bash
# What an idle client costs: `Scenarios/idle-10k.json` (10,000 clients connected over loopback
# tcp, then idle) against a `lab serve` this script starts on a free port, release build. Prints
# the heap per client and per server connection (growth to every client ready ÷ clients, as
# report.md's Memory section); exit 1 if a client costs more than LIMIT KiB (default 12) or a
# server connection more than SERVER_LIMIT KiB (default 12).
#
#   bash Benchmarks/idle-memory.sh [LIMIT_KIB] [SERVER_LIMIT_KIB]   (LAB=path/to/lab for another build)
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-12}
server_limit=${2:-12}
[ -n "${LAB:-}" ] || bash scripts/build-release.sh --product lab >/dev/null
lab=${LAB:-.build/release/lab}
work=$(mktemp -d)
server=
cleanup() {
    [ -z "$server" ] || kill -INT "$server" 2>/dev/null || true
    [ -z "$server" ] || wait "$server" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
"$lab" serve --host 127.0.0.1 --port 0 --port-file "$work/port" --suites x25519 --no-messaging > "$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { cat "$work/serve.log"; echo "lab serve did not start" >&2; exit 1; }
port=$(cat "$work/port")
"$lab" run Scenarios/idle-10k.json --set "server.address=\"127.0.0.1:$port\"" --quiet --out "$work/run" > "$work/run.log" 2>&1 ||
    { cat "$work/run.log"; exit 1; }
python3 - "$work/run/results.json" "$limit" "$server_limit" <<'PY'
import json, sys
memory = json.load(open(sys.argv[1]))["memory"]
limit, server_limit = float(sys.argv[2]), float(sys.argv[3])
client = (memory["clientsReady"]["allocated"] - memory["beforeClients"]["allocated"]) / memory["clients"] / 1024
side = memory["server"]
connections = side["connectionsReady"] - side["connectionsBefore"]
server = (side["ready"]["allocated"] - side["before"]["allocated"]) / connections / 1024
ok = client <= limit and server <= server_limit
print(f"heap per idle client {client:.1f} KiB (limit {limit:g}), per server connection {server:.1f} KiB (limit {server_limit:g}): "
      + ("holds" if ok else "MISSED"))
sys.exit(0 if ok else 1)
PY
