#!/usr/bin/env bash
# A Slurm cluster of two nodes on one machine, for the lab's client fleet (docs/several-hosts.md,
# "On a cluster"), run as root by its test (SlurmFleetTests) or by hand:
#   up RUN WORK        the two hosts of `two-host-net.sh up RUN WORK` (network namespaces lab-a-RUN
#                      and lab-b-RUN, a veth pair, 10.203.X.1 and .2), each with a host name of its
#                      own (lab-a, lab-b: a UTS namespace), its own /etc/hosts naming both, its own
#                      munged (one key, made here) and slurmd; slurmctld on lab-a. Prints
#                      `anchor NAME PID` per host, then `ready` once both nodes are idle (at most 30 s)
#   on NAME RUN WORK CMD...   runs CMD on host NAME (lab-a or lab-b) with SLURM_CONF set
#   down RUN WORK      stops every process of both hosts, deletes the namespaces
# Nothing of the machine's own is touched: the daemons' files are under WORK, and /etc/hosts,
# /run/munge and the host name are each host's own.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

subnet() { echo "10.203.$(($1 % 250 + 1))"; }

conf() {
  local run=$1 work=$2 net
  net=$(subnet "$run")
  cat >"$work/slurm.conf" <<EOF
ClusterName=lab$run
SlurmctldHost=lab-a($net.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool-%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd-%n.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=lab-a NodeAddr=$net.1 CPUs=2 State=UNKNOWN
NodeName=lab-b NodeAddr=$net.2 CPUs=2 State=UNKNOWN
PartitionName=lab Nodes=lab-a,lab-b Default=YES MaxTime=30 State=UP OverSubscribe=FORCE:4
EOF
  printf '127.0.0.1 localhost\n%s.1 lab-a\n%s.2 lab-b\n' "$net" "$net" >"$work/hosts"
}

# Inside one host's namespaces (network, UTS, mount): its name, its /etc/hosts and /run/munge,
# munged, slurmd, and on lab-a slurmctld; then waits for the teardown's SIGTERM.
host() {
  local name=$1 work=$2 children="" i
  cd /
  hostname "$name"
  mount --bind "$work/hosts" /etc/hosts
  mount -t tmpfs -o mode=0755,size=1m "$name-munge" /run/munge
  mkdir -p "$work/munge-$name"
  chmod 0700 "$work/munge-$name"
  export SLURM_CONF=$work/slurm.conf
  trap 'kill -TERM $children 2>/dev/null; wait; exit 0' TERM INT HUP
  munged --foreground --force --key-file="$work/munge.key" --log-file="$work/munge-$name/munged.log" \
    --seed-file="$work/munge-$name/munged.seed" --pid-file="$work/munge-$name/munged.pid" \
    </dev/null >>"$work/munge-$name/out.log" 2>&1 &
  children=$!
  for ((i = 0; i < 100; i++)); do [ -S /run/munge/munge.socket.2 ] && break || sleep 0.05; done
  [ -S /run/munge/munge.socket.2 ] || { echo "munged did not start on $name: $(tail -n 3 "$work/munge-$name/munged.log")" >&2 && exit 1; }
  if [ "$name" = lab-a ]; then
    slurmctld -D -i </dev/null >"$work/slurmctld.out" 2>&1 &
    children="$children $!"
  fi
  slurmd -D -N "$name" </dev/null >"$work/slurmd-$name.out" 2>&1 &
  children="$children $!"
  echo ready
  local daemons=$children
  while :; do
    sleep infinity &
    children="$daemons $!"
    wait $! || true
  done
}

up() {
  local run=$1 work=$2 name side i pid
  command -v slurmctld >/dev/null && command -v munged >/dev/null ||
    { echo "Slurm and munge are not installed: apt-get install slurm-wlm munge" >&2 && return 1; }
  mkdir -p "$work/state"
  conf "$run" "$work"
  # One key for the cluster, as a real one would share it (munge's own format: random bytes).
  head -c 1024 /dev/urandom >"$work/munge.key"
  chmod 0400 "$work/munge.key"
  bash "$here/two-host-net.sh" up "$run" "$work" >"$work/net.out"
  # The hosts' /run/munge mount point: made here if the machine has none, listed with the
  # two hosts' own, which `down` removes once no run uses them.
  [ -d /run/munge ] || { mkdir -p /run/munge && echo /run/munge >>"$work/made-dirs"; }
  for side in a b; do
    name=lab-$side
    # Not `ip netns exec`, which mounts a /sys of its own without the cgroup hierarchies slurmd reads.
    detached nsenter --net="/run/netns/lab-$side-$run" unshare --uts --mount --propagation private \
      bash "$here/slurm-cluster.sh" host "$name" "$work" >"$work/host-$name.out" 2>&1 &
    pid=$!
    echo "$pid" >"$work/anchor-$name.pid"
    for ((i = 0; i < 100; i++)); do grep -q '^ready' "$work/host-$name.out" 2>/dev/null && break || sleep 0.05; done
    grep -q '^ready' "$work/host-$name.out" || { echo "host $name did not start: $(cat "$work/host-$name.out")" >&2 && return 1; }
    echo "anchor $name $pid"
  done
  for ((i = 0; i < 300; i++)); do # both nodes idle: at most 30 s
    if [ "$(on lab-a "$run" "$work" sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" = 2 ]; then
      echo ready
      return 0
    fi
    sleep 0.1
  done
  echo "the nodes did not come up in 30 s: $(on lab-a "$run" "$work" sinfo -N 2>&1 | tr '\n' ' ')" >&2
  tail -n 5 "$work"/slurmctld.log "$work"/slurmd-*.log >&2 2>/dev/null || true
  return 1
}

# Runs "$@" without this shell's descriptors above 2: a caller that reads this script's output
# through a pipe would otherwise wait for the host's daemons, which inherit it, to end.
detached() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    ((fd > 2)) && eval "exec $fd>&-"
  done
  exec "$@"
}

# The process that anchors host $1's namespaces: unshare's child, the `host` shell.
anchor() {
  local pid
  pid=$(cat "$3/anchor-$1.pid")
  pgrep -P "$pid" -x bash 2>/dev/null | head -n 1 || pgrep -P "$pid" | head -n 1
}

on() {
  local name=$1 run=$2 work=$3 target
  shift 3
  target=$(anchor "$name" "$run" "$work")
  [ -n "$target" ] || { echo "host $name of run $run is not up" >&2 && return 1; }
  SLURM_CONF=$work/slurm.conf exec nsenter --target "$target" --net --mount --uts --wd="$PWD" -- "$@"
}

down() {
  local run=$1 work=$2
  bash "$here/two-host-net.sh" down "$run" "$work"
}

command=${1:-}
shift || true
case $command in
  up | host | on | down) "$command" "$@" ;;
  *) echo "usage: slurm-cluster.sh up RUN WORK | on NAME RUN WORK CMD... | down RUN WORK" >&2; exit 2 ;;
esac
