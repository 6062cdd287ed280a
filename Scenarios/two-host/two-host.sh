#!/usr/bin/env bash
# The two-host lab on one machine.
#
# Two network namespaces, host A and host B, joined by a veth pair. Each host runs its own D-Bus
# system bus and avahi-daemon, in a private mount namespace with tmpfs on /run/dbus and
# /run/avahi-daemon, so they never meet the machine's own dbus/avahi (scripts/services.sh
# starts those on loopback; they stay untouched). Then:
#   1. host A: `lab serve --host 0.0.0.0 --port 0 --advertise lab-a`;
#   2. host B: `lab run two-host.json`, which finds lab-a by DNS-SD across the veth link;
#   3. host B alone: `lab serve` on 127.0.0.1 and `lab run single-host.json` against it (the
#      same load with a static address: the single-host baseline);
#   4. `lab compare single-host/results.json two-host/results.json`.
# Everything the run made (processes, namespaces, the veth pair, mounts, temp dirs) is torn
# down on exit, on error, on SIGINT/SIGTERM/SIGHUP, and when the reader of its output goes away.
#
# Usage: sudo Scenarios/two-host/two-host.sh [--lab PATH] [--out DIR] [--keep-logs]
#                                            [--delay 1ms] [--rate 100mbit]
# Exit status: 0 success; 1 failure (the reason is on stderr); 2 bad usage;
# 128+N interrupted by signal N (130 for SIGINT, 143 for SIGTERM).
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: two-host.sh [options]   (as root)

Runs host A (lab serve, advertised by DNS-SD) and host B (lab run, discovering A) in two
network namespaces joined by a veth pair, then the same load on one host over loopback, and
compares the two runs with `lab compare`.

Options:
  --lab PATH     the lab binary (default: .build/release/lab if present, else .build/debug/lab)
  --out DIR      where the reports go (default: Reports/two-host/<UTC timestamp>)
  --keep-logs    also keep the daemons' and lab's logs in DIR/logs (always kept on failure)
  --delay TIME   shape the link with netem: one-way delay on each end, e.g. 1ms
                 (environment: TWO_HOST_DELAY)
  --rate RATE    shape the link: rate on each end, e.g. 100mbit (environment: TWO_HOST_RATE)
  -h, --help     this help

Needs: ip (iproute2), unshare and nsenter (util-linux), dbus-daemon and dbus-send (dbus),
avahi-daemon, python3 (to read the baseline's port from single-host.json); tc for
--delay/--rate.
EOF
}

# ---------------------------------------------------------------------------------------------
# Host mode: `two-host.sh __host NAME IFACE DIR` is what runs *inside* each host, started by
# `ip netns exec NS unshare --mount --propagation private`. It hides the machine's /run/dbus and
# /run/avahi-daemon under tmpfs (in this private mount namespace only), starts dbus-daemon and
# avahi-daemon there, prints `ready` once avahi answers on the new bus, then stays alive as
# the host's anchor: the lab commands of this host later join its namespaces with nsenter.
# On SIGTERM (teardown) it stops its daemons and reaps them, so no zombie is left to PID 1.
# ---------------------------------------------------------------------------------------------
host_main() {
  local name=$1 iface=$2 dir=$3
  # The bus the daemons and lab's DNS-SD client use is the default system bus address,
  # unix:path=/run/dbus/system_bus_socket: never one inherited from the caller.
  unset DBUS_SYSTEM_BUS_ADDRESS
  cd /

  # Private copies of the two runtime folders: the host's sockets and pid files stay hidden
  # and untouched. They vanish with this mount namespace when the host's last process exits.
  mount -t tmpfs -o mode=0755,size=4m "$name-dbus" /run/dbus
  mount -t tmpfs -o mode=0755,size=4m "$name-avahi" /run/avahi-daemon

  # The system bus, in the foreground of a background job: its pid is known and it is a
  # child of this anchor. --nopidfile: nothing to clean up but the tmpfs.
  dbus-daemon --system --nofork --nopidfile </dev/null >"$dir/dbus-daemon.log" 2>&1 &
  local i
  host_children=$! # the pids this anchor stops and reaps on SIGTERM (dbus, avahi, its sleep)
  trap 'kill -TERM $host_children 2>/dev/null; wait; exit 0' TERM INT HUP
  for ((i = 0; i < 100; i++)); do # at most 10 s
    [ -S /run/dbus/system_bus_socket ] && break
    sleep 0.1
  done
  [ -S /run/dbus/system_bus_socket ] || {
    echo "dbus-daemon did not create /run/dbus/system_bus_socket within 10 s" >&2
    exit 1
  }

  # mDNS on this host's end of the veth only, under its own host name. IPv4 only: the
  # addresses are IPv4 and avahi would otherwise also announce link-local IPv6 ones.
  # disallow-other-stacks: each namespace has its own port 5353, so avahi may own it.
  # Generous rate limits as in scripts/services.sh: tests announce and withdraw quickly.
  cat >"$dir/avahi-daemon.conf" <<EOF
# Written by Scenarios/two-host/two-host.sh for host $name.
[server]
host-name=$name
domain-name=local
use-ipv4=yes
use-ipv6=no
allow-interfaces=$iface
disallow-other-stacks=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000

[wide-area]
enable-wide-area=no

[publish]
publish-hinfo=no
publish-workstation=no
EOF
  # --no-chroot: the chroot would need /etc/avahi set up for it; --no-drop-root: the avahi
  # user need not own the tmpfs; --no-rlimits: containers refuse some of them. Foreground
  # (no --daemonize), logs to a file rather than syslog.
  avahi-daemon --no-drop-root --no-chroot --no-rlimits -f "$dir/avahi-daemon.conf" \
    </dev/null >"$dir/avahi-daemon.log" 2>&1 &
  local avahi=$!
  host_children="$host_children $avahi"

  # Ready when avahi has registered on the bus and finished starting (state 2 = RUNNING).
  for ((i = 0; i < 100; i++)); do # at most 10 s (each dbus-send returns at once when no one answers)
    if timeout 2 dbus-send --system --print-reply --dest=org.freedesktop.Avahi / \
      org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'; then
      echo "ready"
      # The anchor: waits (interruptibly, for the trap) until the teardown's SIGTERM.
      local daemons=$host_children
      while :; do
        sleep infinity &
        host_children="$daemons $!"
        wait $! || true
      done
    fi
    kill -0 "$avahi" 2>/dev/null || {
      echo "avahi-daemon exited while starting; its log:" >&2
      cat "$dir/avahi-daemon.log" >&2
      exit 1
    }
    sleep 0.1
  done
  echo "avahi-daemon does not answer on this host's system bus after 10 s" >&2
  exit 1
}

if [ "${1:-}" = "__host" ]; then
  shift
  host_main "$@" # returns only through its trap's exit, or exits on failure
fi

# ---------------------------------------------------------------------------------------------
# Signals. A process started from a thread that blocks SIGINT/SIGTERM (libdispatch's worker
# threads do, and a child inherits the signal mask) would never run our trap: the signal
# stays pending. Unblock them by re-executing through perl (perl-base is essential on
# Debian), keeping our pid. Signals *ignored* on entry are the caller's choice: left alone.
# ---------------------------------------------------------------------------------------------
blocked_mask=$(awk '/^SigBlk:/ { print $2 }' "/proc/$$/status")
if (((0x${blocked_mask:-0} & 0x4003) != 0)) && [ -z "${TWO_HOST_UNBLOCKED:-}" ] \
  && command -v perl >/dev/null; then
  export TWO_HOST_UNBLOCKED=1 # once only
  exec perl -MPOSIX -e 'sigprocmask(SIG_UNBLOCK, POSIX::SigSet->new(SIGHUP, SIGINT, SIGTERM))
    or die "sigprocmask: $!"; exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!"' \
    bash "${BASH_SOURCE[0]}" "$@"
fi

say() { echo "two-host: $*"; }
warn() { echo "two-host: warning: $*" >&2; }
die() {
  echo "two-host: error: $*" >&2
  exit 1
}

# Seconds since $1 (an $EPOCHREALTIME), with one decimal.
elapsed() {
  local now=$EPOCHREALTIME
  awk -v a="$1" -v b="$now" 'BEGIN { printf "%.1f", b - a }'
}
started=$EPOCHREALTIME

# ---------------------------------------------------------------------------------------------
# Options and requirements.
# ---------------------------------------------------------------------------------------------
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/../.." && pwd)
self="$script_dir/$(basename "${BASH_SOURCE[0]}")"
two_host_scenario="$script_dir/two-host.json"
single_host_scenario="$script_dir/single-host.json"

lab=""
out=""
keep_logs=0
delay=${TWO_HOST_DELAY:-}
rate=${TWO_HOST_RATE:-}
while (($# > 0)); do
  case $1 in
    --lab) lab=${2:?--lab needs a path}; shift 2 ;;
    --lab=*) lab=${1#*=}; shift ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --keep-logs) keep_logs=1; shift ;;
    --delay) delay=${2:?--delay needs a time, e.g. 1ms}; shift 2 ;;
    --delay=*) delay=${1#*=}; shift ;;
    --rate) rate=${2:?--rate needs a rate, e.g. 100mbit}; shift 2 ;;
    --rate=*) rate=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "two-host: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

[ "$(id -u)" -eq 0 ] || die "run me as root: I create network namespaces and mount tmpfs"
missing=()
for tool in ip unshare nsenter mountpoint dbus-daemon dbus-send avahi-daemon timeout awk python3; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ -n "$delay$rate" ] && ! command -v tc >/dev/null; then missing+=(tc); fi
((${#missing[@]} == 0)) || die "missing: ${missing[*]} (Debian: iproute2, util-linux, dbus, avahi-daemon, python3)"

if [ -z "$lab" ]; then
  lab="$repo/.build/release/lab"
  [ -x "$lab" ] || lab="$repo/.build/debug/lab"
fi
[ -x "$lab" ] || die "no lab binary at '$lab' (swift build --product lab, or --lab PATH)"
# Absolute paths only: nsenter into a mount namespace starts in its root folder.
lab=$(realpath "$lab")
for file in "$two_host_scenario" "$single_host_scenario"; do
  [ -r "$file" ] || die "missing scenario file $file"
done
# The baseline's server listens where single-host.json says (inside host B, so it is free).
baseline_port=$(python3 -c '
import json, sys
host, _, port = json.load(open(sys.argv[1]))["server"].get("address", "").rpartition(":")
print(port if host == "127.0.0.1" and port.isdigit() else "")
' "$single_host_scenario") || baseline_port=""
[ -n "$baseline_port" ] || die "$single_host_scenario has no server \"address\": \"127.0.0.1:PORT\""

[ -n "$out" ] || out="$repo/Reports/two-host/$(date -u +%Y-%m-%dT%H%M%SZ)"
mkdir -p "$out"
out=$(realpath "$out")

# ---------------------------------------------------------------------------------------------
# Names of this run: unique per script pid, so two runs never share anything.
# ---------------------------------------------------------------------------------------------
ns_a="lab-a-$$"
ns_b="lab-b-$$"
if_a="veth-a-$$" # at most 14 characters (pids are at most 7 digits); Linux allows 15
if_b="veth-b-$$"
subnet="10.203.$(($$ % 250 + 1))" # addresses exist only inside the two namespaces
addr_a="$subnet.1"
addr_b="$subnet.2"
((${#if_a} <= 15)) || die "interface name $if_a is longer than 15 characters"

# ---------------------------------------------------------------------------------------------
# Teardown: runs once, on any exit (success, error, signal).
# ---------------------------------------------------------------------------------------------
work=""      # the temp dir (logs, avahi configs)
made_dirs=() # mount points this run had to create on the host
failed=1     # cleared just before a successful exit
torn_down=0
# `ip netns add` bind-mounts /run/netns onto itself the first time it runs on a machine. A run
# that sees no such mount leaves this marker, and the last two-host run to finish (no
# namespace left at all) removes the mount and the marker: concurrent runs share the mount.
netns_mount_marker=/run/lab-two-host.netns-mount

# Sends $1 to every process in namespace $2 (if it still exists).
signal_namespace() {
  local pids
  pids=$(ip netns pids "$2" 2>/dev/null || true)
  # shellcheck disable=SC2086 # one pid per word
  [ -z "$pids" ] || kill "-$1" $pids 2>/dev/null || true
}

# Waits at most $1 seconds until no process is left in the namespaces $2...
namespaces_empty_within() {
  local deadline ns busy
  deadline=$(awk -v t="$EPOCHREALTIME" -v d="$1" 'BEGIN { printf "%.3f", t + d }')
  shift
  while :; do
    busy=0
    for ns in "$@"; do
      [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] || busy=1
    done
    ((busy == 0)) && return 0
    awk -v t="$EPOCHREALTIME" -v d="$deadline" 'BEGIN { exit !(t >= d) }' && return 1
    sleep 0.05
  done
}

teardown() {
  local status=$?
  ((torn_down)) && return
  torn_down=1
  set +e # clean up as much as possible, whatever fails
  trap '' INT TERM HUP PIPE # a second ^C, or a reader gone, must not cut the teardown short
  local t0=$EPOCHREALTIME ns existing=()
  for ns in "$ns_a" "$ns_b"; do
    [ -e "/run/netns/$ns" ] && existing+=("$ns")
  done
  if ((${#existing[@]} > 0)); then
    # lab serve writes its report on SIGTERM; the daemons stop on it too. Then SIGKILL.
    for ns in "${existing[@]}"; do signal_namespace TERM "$ns"; done
    if ! namespaces_empty_within 10 "${existing[@]}"; then
      warn "processes still running in ${existing[*]} 10 s after SIGTERM: killing them"
      for ns in "${existing[@]}"; do signal_namespace KILL "$ns"; done
      namespaces_empty_within 5 "${existing[@]}" || warn "processes survive SIGKILL in ${existing[*]}"
    fi
    # Deleting a namespace deletes its end of the veth pair, and so the pair.
    for ns in "${existing[@]}"; do
      ip netns delete "$ns" || warn "could not delete network namespace $ns"
    done
  fi
  # The /run/netns bind mount, if a two-host run made it and no namespace is left in it at all
  # (umount refuses if one is being added meanwhile).
  if [ -e "$netns_mount_marker" ] && [ -z "$(ip netns list 2>/dev/null)" ]; then
    if ! mountpoint -q /run/netns || umount /run/netns 2>/dev/null; then
      rm -f "$netns_mount_marker"
    else
      warn "left the /run/netns bind mount in place (busy)"
    fi
  fi
  # Mount points this run created, unless another two-host run still mounts tmpfs on them.
  local dir
  if ! ip netns list 2>/dev/null | grep -qE '^lab-[ab]-[0-9]+'; then
    for dir in "${made_dirs[@]}"; do rmdir "$dir" 2>/dev/null; done
  fi
  if [ -n "$work" ] && [ -d "$work" ]; then
    if ((keep_logs || failed)); then
      mkdir -p "$out/logs" && cp -r "$work/." "$out/logs/" &&
        echo "two-host: logs in $out/logs" >&2
    fi
    rm -rf "$work"
  fi
  say "torn down in $(elapsed "$t0") s" 2>/dev/null # quiet if no one reads any more
  exit "$status"
}

interrupted() {
  local name=$1 number=$2
  # The reader may be gone (SIGPIPE, or stderr piped with stdout): from here on a write fails
  # quietly instead of raising SIGPIPE again inside this handler, which killed the script
  # before its teardown when stdout and stderr went to one closed pipe.
  trap '' PIPE
  echo "two-host: interrupted by SIG$name: tearing down" >&2 || true
  exit $((128 + number)) # runs the EXIT trap
}

trap teardown EXIT
# Commands that fail unexpectedly (set -e): say which, before the teardown.
trap 'echo "two-host: error: \`$BASH_COMMAND\` failed (line $LINENO)" >&2' ERR
trap 'interrupted INT 2' INT
trap 'interrupted TERM 15' TERM
trap 'interrupted HUP 1' HUP
# Whoever reads our output went away (`| head`, a test runner that crashed): a write would
# kill us by SIGPIPE without any trap, so tear down instead.
trap 'interrupted PIPE 13' PIPE

# Shows the end of a log file on stderr, for failures.
show_log() {
  [ -s "$1" ] || return 0
  echo "---- $(basename "$1") (last 30 lines) ----" >&2
  tail -n 30 "$1" >&2
}

# Waits (at most $4 seconds, polling) until file $1 has a line matching the extended regex
# $2, while process $3 lives; $5 says what is awaited, for the error; $6 is the process's
# stderr log, if separate, shown on failure. Sets `line` to the line.
line=""
await_line() {
  local file=$1 pattern=$2 pid=$3 seconds=$4 what=$5 errors=${6:-} deadline
  deadline=$(awk -v t="$EPOCHREALTIME" -v d="$seconds" 'BEGIN { printf "%.3f", t + d }')
  while :; do
    if line=$(grep -m1 -E -- "$pattern" "$file" 2>/dev/null); then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      show_log "$file"
      [ -z "$errors" ] || show_log "$errors"
      die "$what: the process exited first"
    fi
    if awk -v t="$EPOCHREALTIME" -v d="$deadline" 'BEGIN { exit !(t >= d) }'; then
      show_log "$file"
      [ -z "$errors" ] || show_log "$errors"
      die "$what: not within $seconds s"
    fi
    sleep 0.05
  done
}

# Runs `$@` inside a host: the network and mount namespaces of that host's anchor ($1 = pid).
# Only as a background job (`in_host ... &`): it execs, so that $! is the command's own pid
# (nsenter and env exec too), which stop_server signals and waits for.
in_host() {
  local anchor=$1
  shift
  exec nsenter --target "$anchor" --net --mount -- env -u DBUS_SYSTEM_BUS_ADDRESS "$@"
}

# Stops a lab serve (pid $1, a child of this shell) with SIGTERM so it writes its report;
# waits at most 15 s. Sets `stopped` to its last line (`stopped: C connections, ...`, log $2).
stopped=""
stop_server() {
  local pid=$1 log=$2 status=0 i
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    die "lab serve (pid $pid) did not stop within 15 s of SIGTERM"
  fi
  wait "$pid" || status=$?
  ((status == 0)) || { show_log "${log%.out}.err"; die "lab serve exited with status $status"; }
  stopped=$(grep -m1 '^stopped:' "$log" || echo "stopped (no 'stopped:' line)")
}

# ---------------------------------------------------------------------------------------------
# Clean up after earlier runs that were killed with SIGKILL (no trap ran): namespaces named
# lab-a-PID/lab-b-PID and temp dirs /tmp/lab-two-host.PID.* whose PID no longer runs this script.
# ---------------------------------------------------------------------------------------------
run_alive() { grep -qs 'two-host' "/proc/$1/cmdline"; }
for stale in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E '^lab-[ab]-[0-9]+$' || true); do
  if ! run_alive "${stale##*-}"; then
    warn "removing network namespace $stale left by a run that was killed"
    signal_namespace KILL "$stale"
    namespaces_empty_within 5 "$stale" || true
    ip netns delete "$stale" || true
  fi
done
for stale in /tmp/lab-two-host.*.*; do
  [ -d "$stale" ] || continue
  pid=${stale#/tmp/lab-two-host.}
  pid=${pid%%.*}
  run_alive "$pid" || rm -rf "$stale"
done

say "lab $lab"
work=$(mktemp -d "/tmp/lab-two-host.$$.XXXXXX")
mkdir -p "$work/a" "$work/b"
say "work dir $work"

# ---------------------------------------------------------------------------------------------
# The link: two namespaces, a veth pair created directly inside them (never in the host's),
# addresses only there, lo up in each (the baseline uses 127.0.0.1), multicast on for mDNS.
# ---------------------------------------------------------------------------------------------
mountpoint -q /run/netns 2>/dev/null || : >"$netns_mount_marker"
for dir in /run/dbus /run/avahi-daemon; do
  [ -d "$dir" ] || { mkdir -p "$dir" && made_dirs+=("$dir"); }
done
ip netns add "$ns_a"
ip netns add "$ns_b"
say "namespaces $ns_a $ns_b"
ip link add "$if_a" netns "$ns_a" type veth peer name "$if_b" netns "$ns_b"
ip -n "$ns_a" address add "$addr_a/24" dev "$if_a"
ip -n "$ns_b" address add "$addr_b/24" dev "$if_b"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "$if_a" multicast on up
ip -n "$ns_b" link set "$if_b" multicast on up

# Optional shaping, on both ends (so a round trip sees the delay twice). netem does delay and
# rate; without sch_netem (some kernels), tbf can still limit the rate; otherwise unshaped.
shaping="unshaped"
if [ -n "$delay$rate" ]; then
  netem=()
  [ -z "$delay" ] || netem+=(delay "$delay")
  [ -z "$rate" ] || netem+=(rate "$rate")
  if ip netns exec "$ns_a" tc qdisc add dev "$if_a" root netem "${netem[@]}" 2>"$work/tc.err" &&
    ip netns exec "$ns_b" tc qdisc add dev "$if_b" root netem "${netem[@]}" 2>>"$work/tc.err"; then
    shaping="netem ${netem[*]} on each end"
  else
    echo "two-host: warning: tc netem failed ($(tr '\n' ' ' <"$work/tc.err")) - this kernel has no sch_netem?" >&2
    ip netns exec "$ns_a" tc qdisc del dev "$if_a" root 2>/dev/null || true
    if [ -n "$rate" ] &&
      ip netns exec "$ns_a" tc qdisc add dev "$if_a" root tbf rate "$rate" burst 64kb latency 100ms 2>/dev/null &&
      ip netns exec "$ns_b" tc qdisc add dev "$if_b" root tbf rate "$rate" burst 64kb latency 100ms 2>/dev/null; then
      shaping="tbf rate $rate on each end (no delay: netem unavailable)"
      [ -z "$delay" ] || warn "the link is NOT delayed by $delay: netem is unavailable"
    else
      ip netns exec "$ns_a" tc qdisc del dev "$if_a" root 2>/dev/null || true
      shaping="unshaped (tc failed)"
      warn "the link is NOT shaped: going on without${delay:+ delay $delay}${rate:+ rate $rate}"
    fi
  fi
fi
say "link $if_a $addr_a/24 <-> $if_b $addr_b/24, $shaping"

# ---------------------------------------------------------------------------------------------
# The two hosts: one anchor process each, in its namespace and a private mount namespace.
# ---------------------------------------------------------------------------------------------
t_setup=$EPOCHREALTIME
ip netns exec "$ns_a" unshare --mount --propagation private bash "$self" __host lab-a "$if_a" "$work/a" \
  </dev/null >"$work/a/host.log" 2>&1 &
anchor_a=$!
ip netns exec "$ns_b" unshare --mount --propagation private bash "$self" __host lab-b "$if_b" "$work/b" \
  </dev/null >"$work/b/host.log" 2>&1 &
anchor_b=$!
await_line "$work/a/host.log" '^ready$' "$anchor_a" 20 "host lab-a (dbus-daemon, avahi-daemon)"
await_line "$work/b/host.log" '^ready$' "$anchor_b" 20 "host lab-b (dbus-daemon, avahi-daemon)"
d_hosts=$(elapsed "$t_setup")
say "hosts lab-a and lab-b ready in $d_hosts s: each with its own dbus-daemon and avahi-daemon"

# ---------------------------------------------------------------------------------------------
# Host A serves and advertises; host B discovers it and runs the scenario.
# ---------------------------------------------------------------------------------------------
in_host "$anchor_a" "$lab" serve --host 0.0.0.0 --port 0 --no-messaging --advertise lab-a \
  --report "$out/server-a" </dev/null >"$work/a/serve.out" 2>"$work/a/serve.err" &
server_a=$!
await_line "$work/a/serve.out" '^listening on ' "$server_a" 20 "lab serve on host A: listening" "$work/a/serve.err"
port_a=${line##*:}
await_line "$work/a/serve.out" '^advertised as ' "$server_a" 20 "lab serve on host A: advertised" "$work/a/serve.err"
say "server A listening on $addr_a:$port_a, $line"

# Runs `lab run $2 --out $3` on host B (anchor $1) in the background and waits for it, so that
# a signal reaches our trap at once; bounded by timeout(1). Logs to $4.{out,err}.
run_scenario() {
  local anchor=$1 scenario=$2 dir=$3 log=$4 status=0
  in_host "$anchor" timeout --kill-after=5 120 "$lab" run "$scenario" --out "$dir" \
    </dev/null >"$log.out" 2>"$log.err" &
  wait $! || status=$?
  sed 's/^/    /' "$log.out"
  case $status in
    0) ;;
    124) show_log "$log.err"; die "lab run $(basename "$scenario") did not finish within 120 s" ;;
    2) show_log "$log.err"; die "lab run $(basename "$scenario"): a threshold was missed (exit 2)" ;;
    *) show_log "$log.err"; die "lab run $(basename "$scenario") failed with exit status $status" ;;
  esac
}

t_two=$EPOCHREALTIME
say "running two-host.json on host B: discovers 'lab-a' by DNS-SD across the link"
run_scenario "$anchor_b" "$two_host_scenario" "$out/two-host" "$work/b/run-two-host"
d_two=$(elapsed "$t_two")
stop_server "$server_a" "$work/a/serve.out"
say "two-host run done in $d_two s; server A $stopped"

# ---------------------------------------------------------------------------------------------
# The baseline: server and clients both on host B, over 127.0.0.1, same load.
# ---------------------------------------------------------------------------------------------
t_single=$EPOCHREALTIME
in_host "$anchor_b" "$lab" serve --host 127.0.0.1 --port "$baseline_port" --no-messaging \
  --report "$out/server-single-host" </dev/null >"$work/b/serve.out" 2>"$work/b/serve.err" &
server_b=$!
await_line "$work/b/serve.out" '^listening on ' "$server_b" 20 "lab serve on host B (loopback)" "$work/b/serve.err"
say "running single-host.json on host B against 127.0.0.1:$baseline_port (the baseline)"
run_scenario "$anchor_b" "$single_host_scenario" "$out/single-host" "$work/b/run-single-host"
d_single=$(elapsed "$t_single")
stop_server "$server_b" "$work/b/serve.out"
say "single-host run done in $d_single s; server B $stopped"

# ---------------------------------------------------------------------------------------------
# The comparison: baseline first, then the candidate.
# ---------------------------------------------------------------------------------------------
t_compare=$EPOCHREALTIME
"$lab" compare "$out/single-host/results.json" "$out/two-host/results.json" \
  --out "$out/comparison" --label single-host --label two-host \
  </dev/null >"$work/compare.out" 2>"$work/compare.err" ||
  { show_log "$work/compare.err"; die "lab compare failed"; }
sed 's/^/    /' "$work/compare.out"

say "reports in $out"
say "  two-host/report.md  single-host/report.md  server-a/  server-single-host/  comparison/comparison.md"
failed=0
say "done in $(elapsed "$started") s (hosts up $d_hosts s, two-host $d_two s, single-host $d_single s, compare $(elapsed "$t_compare") s)"
