#!/usr/bin/env bash
# Starts what the DNS-SD tests need, unless it is already running: the D-Bus system bus and
# avahi-daemon restricted to loopback. Runs as root and needs no systemd (containers, CI).
# Safe to run again: it prints one line per thing it starts and nothing when all is up.
set -euo pipefail

state_dir=/run/crypto-lab
avahi_conf="$state_dir/avahi-daemon.conf"

fail() {
  echo "services: $*" >&2
  exit 1
}

# Whether the pid in file $1 is a live process named $2.
pid_file_alive() {
  local pid
  [ -r "$1" ] || return 1
  pid=$(tr -dc '0-9' <"$1")
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}

# Whether avahi-daemon answers on the system bus (state 2 = AVAHI_SERVER_RUNNING).
avahi_answers() {
  if command -v dbus-send >/dev/null; then
    timeout 2 dbus-send --system --print-reply --dest=org.freedesktop.Avahi / \
      org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'
  else
    timeout 3 avahi-browse -pt _crypttest._tcp >/dev/null 2>&1
  fi
}

[ "$(id -u)" -eq 0 ] || fail "run me as root (I start dbus-daemon and avahi-daemon)"
command -v dbus-daemon >/dev/null || fail "dbus-daemon is missing; scripts/setup.sh installs it"
command -v avahi-daemon >/dev/null || fail "avahi-daemon is missing; scripts/setup.sh installs it"

# Whether the system bus answers.
bus_answers() {
  command -v dbus-send >/dev/null && timeout 2 dbus-send --system --print-reply --dest=org.freedesktop.DBus \
    /org/freedesktop/DBus org.freedesktop.DBus.GetId >/dev/null 2>&1
}

# The D-Bus system bus, which Avahi's clients (dns_sd, avahi-browse) talk to the daemon through.
if ! pid_file_alive /run/dbus/pid dbus-daemon && ! bus_answers; then
  # A pid file or socket left by a bus that is gone would stop dbus-daemon from starting.
  rm -f /run/dbus/pid /run/dbus/system_bus_socket
  mkdir -p /run/dbus
  dbus-daemon --system --fork
  echo "services: started the D-Bus system bus"
fi

# mDNS on lo needs the interface up and accepting multicast.
if command -v ip >/dev/null; then
  lo_flags=$(ip -o link show lo | grep -o '<[^>]*>')
  multicast='[<,]MULTICAST[,>]' up='[<,]UP[,>]'
  if ! [[ $lo_flags =~ $multicast ]]; then
    ip link set lo multicast on || fail "could not enable multicast on lo (needs CAP_NET_ADMIN)"
    echo "services: enabled multicast on lo"
  fi
  if ! [[ $lo_flags =~ $up ]]; then
    ip link set lo up || fail "could not bring lo up (needs CAP_NET_ADMIN)"
    echo "services: brought lo up"
  fi
elif ((($(cat /sys/class/net/lo/flags) & 0x1001) != 0x1001)); then  # IFF_UP | IFF_MULTICAST
  fail "lo is down or without multicast, and ip (iproute2) is missing to fix it"
fi

if ! avahi-daemon --check 2>/dev/null; then
  mkdir -p "$state_dir" /run/avahi-daemon
  rm -f /run/avahi-daemon/pid
  cat >"$avahi_conf" <<'EOF'
# Written by scripts/services.sh: mDNS on loopback only, for the crypto-lab tests.
[server]
use-ipv4=yes
use-ipv6=no
allow-interfaces=lo
ratelimit-interval-usec=1000000
ratelimit-burst=1000

[wide-area]
enable-wide-area=no

[publish]
publish-hinfo=no
publish-workstation=no
EOF
  avahi-daemon --no-drop-root --no-chroot --no-rlimits -f "$avahi_conf" --daemonize \
    || fail "avahi-daemon did not start; try: avahi-daemon --no-drop-root --no-chroot --no-rlimits -f $avahi_conf"
  echo "services: started avahi-daemon on lo ($avahi_conf)"
fi

# Wait (at most 10 s) until the daemon has registered on the bus and finished starting.
for _ in $(seq 50); do
  avahi_answers && exit 0
  sleep 0.2
done
fail "avahi-daemon is running but does not answer on the D-Bus system bus after 10 s; see its messages with: avahi-daemon --no-drop-root --no-chroot --no-rlimits -f $avahi_conf"
