#!/usr/bin/env bash
# The network half of the two-host lab, run as root by its tool (Sources/TwoHost; docs/several-hosts.md):
#   probe                       what can shape a link here, tried in a namespace of its own that it
#                               removes: prints `netem yes|no`, `tbf ...`, `nft ...`, `ethtool ...`,
#                               `nfqueue ...` (iptables can send a link's packets to NFQUEUE)
#   up RUN WORK                 network namespaces lab-a-RUN and lab-b-RUN joined by a veth pair
#                               (veth-a-RUN 10.203.X.1/24, veth-b-RUN 10.203.X.2/24), lo up in each,
#                               shaped on both ends as LINK_DELAY, LINK_JITTER (e.g. 20ms), LINK_LOSS
#                               (percent), LINK_RATE (e.g. 100mbit) and LINK_MTU say: netem where the
#                               kernel has it, else nftables drops and tbf; the delay and jitter by
#                               LINK_DELAY_BY: `netem`, or `queue`: LINK_DELAYER (link-delay) holds
#                               each packet arriving at each end, given by iptables' NFQUEUE
#                               (LINK_REORDER=yes lets jitter reorder); offloads off when shaped;
#                               each end's delivered packets counted where nft is; prints an
#                               `applied: ...` line per mechanism, then `link: ...`
#   counters RUN [WORK]         each end's packets: `counters SIDE SENT DROPPED DELIVERED`, and the
#                               segments its TCP received out of order: `tcp SIDE ofo N`; with the
#                               queue, each end's holder's figures so far: `delayer SIDE held N ...`
#   host NAME IFACE DIR         inside one namespace, under `unshare --mount`: a D-Bus system bus and
#                               avahi-daemon of its own (tmpfs over /run/dbus and /run/avahi-daemon:
#                               the machine's never meet them); prints `ready`, then anchors the host
#   down RUN WORK               stops every process left in the two namespaces, deletes them
#   stale                       `down` for runs whose tool no longer runs (killed with SIGKILL)
set -euo pipefail

up() {
  local run=$1 work=$2 subnet="10.203.$(($1 % 250 + 1))" dir
  local delay=${LINK_DELAY:-} jitter=${LINK_JITTER:-} loss=${LINK_LOSS:-} rate=${LINK_RATE:-} mtu=${LINK_MTU:-}
  local delay_by=${LINK_DELAY_BY:-netem}
  # `ip netns add` bind-mounts /run/netns the first time on a machine: the last run removes it.
  mountpoint -q /run/netns 2>/dev/null || : >/run/lab-two-host.netns-mount
  for dir in /run/dbus /run/avahi-daemon; do # mount points of the hosts' tmpfs
    [ -d "$dir" ] || { mkdir -p "$dir" && echo "$dir" >>"$work/made-dirs"; }
  done
  ip netns add "lab-a-$run"
  ip netns add "lab-b-$run"
  ip link add "veth-a-$run" netns "lab-a-$run" type veth peer name "veth-b-$run" netns "lab-b-$run"
  ip -n "lab-a-$run" address add "$subnet.1/24" dev "veth-a-$run"
  ip -n "lab-b-$run" address add "$subnet.2/24" dev "veth-b-$run"
  local side shaping="unshaped" netem=() nft_loss=
  for side in a b; do
    ip -n "lab-$side-$run" link set lo up
    [ -z "$mtu" ] || ip -n "lab-$side-$run" link set "veth-$side-$run" mtu "$mtu"
    ip -n "lab-$side-$run" link set "veth-$side-$run" multicast on up
  done
  if [ -n "$delay$jitter$loss$rate$mtu" ]; then
    # Segmentation offloads off: the veth then carries MTU-sized packets, which are the
    # packets delayed, dropped and counted, not 64 KiB super-packets.
    for side in a b; do
      ip netns exec "lab-$side-$run" ethtool -K "veth-$side-$run" tso off gso off gro off >/dev/null
    done
    echo "applied: segmentation offloads off on both ends (ethtool -K tso gso gro off), mtu ${mtu:-1500}"
    shaping="mtu ${mtu:-1500}, offloads off"
  fi
  if [ -n "$delay" ] && [ "$delay_by" = queue ]; then
    hold "$run" "$work" "$delay" "$jitter" || return 1
    shaping="$shaping, delay $delay${jitter:+ jitter $jitter} by link-delay on arrival at each end (NFQUEUE)"
    local order="order kept"
    [ -z "${LINK_REORDER:-}" ] || order="jitter may reorder"
    echo "applied: link-delay holds each packet arriving at each end $delay${jitter:+ ± $jitter (uniform)}, $order (iptables NFQUEUE, raw PREROUTING; no sch_netem)"
    delay=""
    jitter=""
  fi
  [ -z "$delay" ] || netem+=(delay "$delay" ${jitter:+"$jitter"})
  [ -z "$loss" ] || netem+=(loss "$loss%")
  [ -z "$rate" ] || netem+=(rate "$rate")
  if ((${#netem[@]} > 0)) && shape netem "${netem[@]}"; then # on each end: a round trip meets it twice
    shaping="$shaping, netem ${netem[*]} on each end"
    echo "applied: tc netem ${netem[*]} on each end's egress"
  elif ((${#netem[@]} > 0)); then
    [ -z "$delay$jitter" ] || { echo "the link cannot be delayed: this kernel has no sch_netem" >&2 && return 1; }
    if [ -n "$loss" ]; then
      nft_loss=$loss
      shaping="$shaping, loss $loss% by nftables on arrival at each end (no sch_netem)"
      echo "applied: nftables drops $loss% of the packets arriving at each end, at random (netdev ingress, numgen random; no sch_netem)"
    fi
    if [ -n "$rate" ]; then
      shape tbf rate "$rate" burst 64kb latency 100ms || { echo "tc tbf failed" >&2 && return 1; }
      shaping="$shaping, tbf rate $rate on each end (no sch_netem)"
      echo "applied: tc tbf rate $rate burst 64kb latency 100ms on each end's egress (no sch_netem)"
    fi
  fi
  if [ -n "$nft_loss" ]; then
    count "$run" "$nft_loss" || { echo "nftables could not drop the link's packets" >&2 && return 1; }
  elif command -v nft >/dev/null; then
    count "$run" || echo "nftables could not count the link's packets: loss not measured" >&2
  fi
  # What paces and recovers the hosts' TCP: a new namespace takes the kernel's default.
  echo "applied: TCP congestion control $(ip netns exec "lab-a-$run" sysctl -n net.ipv4.tcp_congestion_control) on both hosts (the kernel's default)"
  echo "link: veth-a-$run $subnet.1/24 <-> veth-b-$run $subnet.2/24, $shaping"
}

# Starts LINK_DELAYER in each end's namespace, holding the packets that arrive on its veth
# (NFQUEUE queue 0 of that namespace) for delay $3 ± jitter $4; waits for its `ready` line,
# then sends the veth's arrivals to it. Its output is WORK/link-delay-SIDE.out (`held ...` on
# SIGUSR1 and at its exit); `down` stops it with the namespace's other processes.
hold() {
  local run=$1 work=$2 delay=$3 jitter=$4 side args pid i
  [ -x "${LINK_DELAYER:-}" ] || { echo "LINK_DELAYER '${LINK_DELAYER:-}' is not a program" >&2 && return 1; }
  args=(--queue 0 --delay "$delay")
  [ -z "$jitter" ] || args+=(--jitter "$jitter")
  [ -z "${LINK_REORDER:-}" ] || args+=(--reorder)
  for side in a b; do
    ip netns exec "lab-$side-$run" "$LINK_DELAYER" "${args[@]}" \
      </dev/null >"$work/link-delay-$side.out" 2>"$work/link-delay-$side.err" &
    pid=$!
    echo "$pid" >"$work/link-delay-$side.pid"
    for ((i = 0; i < 100; i++)); do
      grep -q '^ready' "$work/link-delay-$side.out" 2>/dev/null && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    grep -q '^ready' "$work/link-delay-$side.out" 2>/dev/null || {
      echo "link-delay did not start on side $side: $(cat "$work/link-delay-$side.err")" >&2
      return 1
    }
    ip netns exec "lab-$side-$run" iptables -t raw -A PREROUTING -i "veth-$side-$run" -j NFQUEUE --queue-num 0 || {
      echo "iptables could not send veth-$side-$run's packets to NFQUEUE" >&2
      return 1
    }
  done
}

# Counts the packets each end's veth delivers to its host (nftables' netdev ingress hook: real
# packets, with offloads off), so that the loss a run met is measured whatever made it: each end's
# device count of packets sent, less what the other end delivered. With $2, also drops $2 percent
# of the packets arriving at each end, at random (numgen): the loss where netem is missing. (Not on
# the sender's output hook: TCP hands netfilter 64 KiB super-packets there, cut into real packets
# only later, whatever the device's offloads.)
count() {
  local run=$1 loss=${2:-} side drop=""
  command -v nft >/dev/null || return 1
  [ -z "$loss" ] || drop="numgen random mod 1000000 < $(awk -v p="$loss" 'BEGIN { printf "%d", p * 10000 + 0.5 }') counter name dropped drop"
  for side in a b; do
    ip netns exec "lab-$side-$run" nft -f - <<EOF || return 1
table netdev lab {
  counter dropped {}
  counter delivered {}
  chain ingress {
    type filter hook ingress device "veth-$side-$run" priority 0;
    $drop
    counter name delivered
  }
}
EOF
  done
}

# Each end's packets: `counters SIDE SENT DROPPED DELIVERED`: sent by its veth (the device's
# count, after any netem drop), dropped and delivered on arrival (nftables).
counters() {
  local run=$1 side name values
  for side in a b; do
    values=" $(ip -n "lab-$side-$run" -s -j link show "veth-$side-$run" 2>/dev/null |
      python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["packets"])' 2>/dev/null)"
    for name in dropped delivered; do
      values="$values $(ip netns exec "lab-$side-$run" nft list counter netdev lab "$name" 2>/dev/null |
        awk '/packets/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }')"
    done
    echo "counters $side$values"
    # Segments this host's TCP received out of order and queued (TcpExt TCPOFOQueue).
    ip netns exec "lab-$side-$run" awk -v side="$side" '/^TcpExt:/ { if (!names) { for (i = 2; i <= NF; i++) name[i] = $i; names = 1 } else for (i = 2; i <= NF; i++) if (name[i] == "TCPOFOQueue") print "tcp " side " ofo " $i }' /proc/net/netstat 2>/dev/null || true
  done
  # The holders' figures so far: each prints a `held ...` line on SIGUSR1.
  local work=${2:-} lines pid i
  [ -n "$work" ] || return 0
  for side in a b; do
    [ -f "$work/link-delay-$side.pid" ] || continue
    pid=$(cat "$work/link-delay-$side.pid")
    lines=$(grep -c '^held' "$work/link-delay-$side.out" 2>/dev/null || true)
    if ! kill -USR1 "$pid" 2>/dev/null; then
      echo "delayer $side gone: $(tail -n 3 "$work/link-delay-$side.err" 2>/dev/null | tr '\n' ' ')"
      continue
    fi
    for ((i = 0; i < 40; i++)); do
      (($(grep -c '^held' "$work/link-delay-$side.out" 2>/dev/null || true) > lines)) && break
      sleep 0.05
    done
    echo "delayer $side $(grep '^held' "$work/link-delay-$side.out" | tail -n 1)"
  done
}

# What can shape a link here, tried on a veth pair in a namespace of its own, which it removes.
probe() {
  local ns="lab-probe-$$" tool args
  ip netns add "$ns"
  trap 'ip netns delete "$ns" 2>/dev/null || true' RETURN
  ip -n "$ns" link add probe0 type veth peer name probe1 || return 1
  ip -n "$ns" link set probe0 up
  for tool in netem tbf; do
    args=(netem delay 1ms)
    [ "$tool" = tbf ] && args=(tbf rate 1mbit burst 32kb latency 10ms)
    if ip netns exec "$ns" tc qdisc add dev probe0 root "${args[@]}" 2>/dev/null; then
      echo "$tool yes"
      ip netns exec "$ns" tc qdisc del dev probe0 root 2>/dev/null || true
    else
      echo "$tool no"
    fi
  done
  if command -v nft >/dev/null && ip netns exec "$ns" nft add table inet probe 2>/dev/null; then
    echo "nft yes"
  else
    echo "nft no"
  fi
  if command -v ethtool >/dev/null; then echo "ethtool yes"; else echo "ethtool no"; fi
  if command -v iptables >/dev/null &&
    ip netns exec "$ns" iptables -t raw -A PREROUTING -i probe0 -j NFQUEUE --queue-num 0 2>/dev/null; then
    echo "nfqueue yes"
  else
    echo "nfqueue no"
  fi
}

# Adds the root qdisc `$@` on both ends of the link of run $run; removes it again if one fails.
shape() {
  for side in a b; do
    ip netns exec "lab-$side-$run" tc qdisc add dev "veth-$side-$run" root "$@" 2>/dev/null || {
      ip netns exec "lab-a-$run" tc qdisc del dev "veth-a-$run" root 2>/dev/null || true
      return 1
    }
  done
}

host() {
  local name=$1 iface=$2 dir=$3 i children
  unset DBUS_SYSTEM_BUS_ADDRESS # the default system bus: this host's, never the caller's
  cd /
  mount -t tmpfs -o mode=0755,size=4m "$name-dbus" /run/dbus
  mount -t tmpfs -o mode=0755,size=4m "$name-avahi" /run/avahi-daemon
  dbus-daemon --system --nofork --nopidfile </dev/null >"$dir/dbus-daemon.log" 2>&1 &
  children=$!
  trap 'kill -TERM $children 2>/dev/null; wait; exit 0' TERM INT HUP
  for ((i = 0; i < 100; i++)); do [ -S /run/dbus/system_bus_socket ] && break || sleep 0.1; done
  # mDNS on this end of the veth only, IPv4 only, rate limits as in scripts/services.sh.
  cat >"$dir/avahi-daemon.conf" <<EOF
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
  avahi-daemon --no-drop-root --no-chroot --no-rlimits -f "$dir/avahi-daemon.conf" \
    </dev/null >"$dir/avahi-daemon.log" 2>&1 &
  children="$children $!"
  for ((i = 0; i < 100; i++)); do # ready when avahi runs on this bus (state 2), at most 10 s
    if timeout 2 dbus-send --system --print-reply --dest=org.freedesktop.Avahi / \
      org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'; then
      echo ready
      local daemons=$children
      while :; do # the anchor: waits, interruptibly, for the teardown's SIGTERM
        sleep infinity &
        children="$daemons $!"
        wait $! || true
      done
    fi
    sleep 0.1
  done
  echo "avahi-daemon does not answer on host $name's system bus after 10 s; its log:" >&2
  cat "$dir/avahi-daemon.log" >&2
  exit 1
}

# Sends $1 to every process left in the namespaces $2..., then waits up to 5 s for them to go.
signal_all() {
  local signal=$1 ns i busy
  shift
  for ns in "$@"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill "-$signal" 2>/dev/null || true; done
  for ((i = 0; i < 100; i++)); do
    busy=0
    for ns in "$@"; do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] || busy=1; done
    ((busy)) || return 0
    sleep 0.05
  done
  return 1
}

down() {
  local run=$1 work=${2:-} namespaces=() ns
  for ns in "lab-a-$run" "lab-b-$run"; do [ -e "/run/netns/$ns" ] && namespaces+=("$ns"); done
  if ((${#namespaces[@]} > 0)); then
    signal_all TERM "${namespaces[@]}" || signal_all KILL "${namespaces[@]}" ||
      echo "processes survive SIGKILL in ${namespaces[*]}" >&2
    for ns in "${namespaces[@]}"; do # the veth pair goes with them
      ip netns delete "$ns" || echo "could not delete network namespace $ns" >&2
    done
  fi
  if ! ip netns list 2>/dev/null | grep -qE '^lab-[ab]-[0-9]+'; then # no other run is using them
    if [ -n "$work" ] && [ -f "$work/made-dirs" ]; then xargs -r rmdir <"$work/made-dirs" 2>/dev/null || true; fi
    if [ -e /run/lab-two-host.netns-mount ] && [ -z "$(ip netns list)" ]; then
      if ! mountpoint -q /run/netns || umount /run/netns 2>/dev/null; then
        rm -f /run/lab-two-host.netns-mount
      else
        echo "left the /run/netns bind mount in place (busy)" >&2
      fi
    fi
  fi
}

stale() {
  local ns run
  for ns in $(ip netns list 2>/dev/null | awk '/^lab-[ab]-[0-9]+/ { print $1 }' | sort -u); do
    run=${ns##*-}
    grep -qs 'two-host' "/proc/$run/cmdline" || { echo "removing $ns, left by a run that was killed" >&2 && down "$run"; }
  done
}

command=${1:-}
shift || true
case $command in
  probe | up | counters | host | down | stale) "$command" "$@" ;;
  *) echo "usage: two-host-net.sh probe | up RUN WORK | counters RUN [WORK] | host NAME IFACE DIR | down RUN WORK | stale" >&2; exit 2 ;;
esac
