#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for testing `lasthop slurm` (docs/cluster.md):
# munged, slurmctld and slurmd from Debian's `munge` and `slurm-wlm` packages (slurmctld,
# slurmd, slurm-client), all on localhost, all state in one directory, no systemd.
#
#   scripts/slurm-local.sh up STATE_DIR     install what is missing, start the cluster, wait for
#                                           the node to be idle; prints `export SLURM_CONF=...`
#   scripts/slurm-local.sh down STATE_DIR   cancel its jobs, stop its daemons, remove STATE_DIR
#   scripts/slurm-local.sh reap             take down every cluster of `up` whose owner died
#   scripts/slurm-local.sh install          only install the packages
#
# Needs root (the daemons run as root and the jobs run as the submitting user). STATE_DIR is
# created by `up` and must be new; `down` stops only the daemons whose pid files are in it, and
# the job steps those daemons started, and removes it. The cluster listens on the first free
# pair of ports from 16817 (slurmctld) and 16818 (slurmd) up, and the munge socket is
# STATE_DIR/munge/munge.socket, so it does not touch a system's own munge or Slurm, nor
# another local cluster. Commands reach it with SLURM_CONF set.
#
# With SLURM_LOCAL_OWNER=PID, `up` records that process as the cluster's owner, and `reap`
# takes the cluster down once the owner has ended: a test killed before its own `down` (say,
# a CI run stopped by hand) leaves daemons behind that the next run's `reap` stops. Clusters
# without an owner are never reaped.
set -euo pipefail

FIRST_PORT=16817
PACKAGES=(munge slurmctld slurmd slurm-client)

die() {
    echo "slurm-local.sh: error: $*" >&2
    exit 1
}

need_root() {
    [ "$(id -u)" = 0 ] || die "$1 needs root (the Slurm daemons run as root); run it as root"
}

install() {
    need_root install
    local missing=()
    for c in munged mungekey slurmctld slurmd sbatch; do
        command -v "$c" >/dev/null 2>&1 || missing+=("$c")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null 2>&1 ||
        die "missing ${missing[*]} and there is no apt-get to install ${PACKAGES[*]} with"
    echo "slurm-local.sh: installing ${PACKAGES[*]} (missing: ${missing[*]})" >&2
    # The packages' scripts would start the system's munge and Slurm services: a policy-rc.d
    # that says no keeps them stopped (only while installing, and only if there is none).
    local policy=/usr/sbin/policy-rc.d ours=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && ours=1
    fi
    local ok=1
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${PACKAGES[@]}" >&2 ||
        { apt-get -o DPkg::Lock::Timeout=300 update -qq >&2 &&
            apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${PACKAGES[@]}" >&2; } ||
        ok=""
    [ -n "$ours" ] && rm -f "$policy"
    [ -n "$ok" ] || die "apt-get install ${PACKAGES[*]} failed"
    for c in munged mungekey slurmctld slurmd sbatch; do
        command -v "$c" >/dev/null 2>&1 || die "$c still missing after installing ${PACKAGES[*]}"
    done
}

port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# The start time of process $1 in clock ticks since boot (field 22 of /proc/PID/stat), which
# tells a process from a later one that got its pid; empty when it does not run (a zombie has
# ended).
start_time() {
    local st
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 0
    # After the command name: state is field 3, so the start time is the 20th word here.
    echo "$st" | awk '$1 != "Z" {print $20}'
}

up() {
    local state=$1
    need_root up
    [ -e "$state" ] && die "$state exists: give a new directory for the cluster's state"
    install
    # The first pair of free ports from FIRST_PORT up (another cluster may hold the first).
    local try
    CTLD_PORT="" SLURMD_PORT=""
    for try in $(seq 0 2 98); do
        if port_free $((FIRST_PORT + try)) && port_free $((FIRST_PORT + try + 1)); then
            CTLD_PORT=$((FIRST_PORT + try)) SLURMD_PORT=$((FIRST_PORT + try + 1))
            break
        fi
    done
    [ -n "$CTLD_PORT" ] || die "no free pair of ports in $FIRST_PORT-$((FIRST_PORT + 99)) (stale local clusters? scripts/slurm-local.sh down DIR stops one)"
    local owner="" owner_start=""
    if [ -n "${SLURM_LOCAL_OWNER:-}" ]; then
        owner=$SLURM_LOCAL_OWNER
        owner_start=$(start_time "$owner")
        [ -n "$owner_start" ] || die "SLURM_LOCAL_OWNER=$owner is not a running process"
    fi
    mkdir -p "$state"
    state=$(cd "$state" && pwd -P)
    chmod 755 "$state"
    # Ours from here: `down` stops what it finds, also what a failed `up` started.
    printf 'owner=%s\nowner_start=%s\n' "$owner" "$owner_start" >"$state/.slurm-local"
    UP_STATE=$state
    trap 'down "$UP_STATE" >/dev/null 2>&1 || true' EXIT
    mkdir -m 700 "$state/munge"
    mkdir -p "$state/ctld" "$state/spool"
    # munge: a fresh key and a daemon of our own on our own socket.
    mungekey --create --keyfile="$state/munge/munge.key" >&2
    chmod 600 "$state/munge/munge.key"
    munged --force --socket="$state/munge/munge.socket" --key-file="$state/munge/munge.key" \
        --pid-file="$state/munge/munged.pid" --log-file="$state/munge/munged.log" \
        --seed-file="$state/munge/munged.seed" ||
        die "munged did not start: $(tail -3 "$state/munge/munged.log" 2>/dev/null)"

    # slurm.conf: this machine's name, CPUs and memory as slurmd sees them.
    local node host
    node=$(slurmd -C 2>&1 | head -1) || die "slurmd -C failed: $node"
    case "$node" in NodeName=*) ;; *) die "slurmd -C gave no NodeName line: $node" ;; esac
    host=${node#NodeName=}
    host=${host%% *}
    cat >"$state/slurm.conf" <<EOF
# A one-node cluster for lasthop's tests (scripts/slurm-local.sh); all state in $state.
ClusterName=lasthop-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
PlugStackConfig=$state/plugstack.conf
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ReturnToService=2
MinJobAge=3600
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    : >"$state/plugstack.conf"
    export SLURM_CONF=$state/slurm.conf
    slurmctld -c -f "$SLURM_CONF" ||
        die "slurmctld did not start: $(tail -5 "$state/slurmctld.log" 2>/dev/null)"
    slurmd -f "$SLURM_CONF" -N "$host" ||
        die "slurmd did not start: $(tail -5 "$state/slurmd.log" 2>/dev/null)"
    local t
    for t in $(seq 1 120); do
        if [ "$(sinfo -h -N -n "$host" -o %t 2>/dev/null)" = idle ]; then
            echo "slurm-local.sh: node $host idle after ${t}x0.5 s" >&2
            trap - EXIT
            echo "export SLURM_CONF=$SLURM_CONF"
            return 0
        fi
        sleep 0.5
    done
    die "the node did not become idle in 60 s: $(sinfo -N 2>&1 | tail -2); slurmctld.log: $(tail -5 "$state/slurmctld.log")"
}

# Whether process $1 runs (a zombie, ended but not yet reaped by its parent, does not).
alive() {
    local st
    st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "${st:0:1}" != Z ]
}

# Sends SIGTERM, then SIGKILL after 10 s, to the process in pid file $1 (if it is alive).
stop_pidfile() {
    local f=$1 pid
    [ -f "$f" ] || return 0
    pid=$(cat "$f")
    [ -n "$pid" ] && alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        alive "$pid" || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

down() {
    local state=$1
    [ -d "$state" ] || return 0
    state=$(cd "$state" && pwd -P)
    [ -f "$state/.slurm-local" ] || die "$state is not a directory of scripts/slurm-local.sh up (no .slurm-local): leaving it alone"
    export SLURM_CONF=$state/slurm.conf
    # Cancel its jobs first, so that slurmd ends their steps itself.
    if [ -f "$state/slurmctld.pid" ] && command -v scancel >/dev/null; then
        local jobs
        jobs=$(squeue -h -o %A 2>/dev/null || true)
        if [ -n "$jobs" ]; then
            # shellcheck disable=SC2086
            scancel $jobs 2>/dev/null || true
            for _ in $(seq 1 50); do
                [ -z "$(squeue -h -o %A 2>/dev/null || true)" ] && break
                sleep 0.2
            done
        fi
    fi
    # Job steps of this cluster still alive (slurmstepd keeps its socket in our spool).
    local p
    for p in /proc/[0-9]*; do
        [ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
        if [ "$(readlink "$p/cwd" 2>/dev/null)" = "$state/spool" ] ||
            { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qx "SLURM_CONF=$state/slurm.conf"; then
            kill -KILL "${p#/proc/}" 2>/dev/null || true
        fi
    done
    stop_pidfile "$state/slurmd.pid"
    stop_pidfile "$state/slurmctld.pid"
    stop_pidfile "$state/munge/munged.pid"
    rm -rf "$state"
}

# Takes down the clusters of `up` (found by their running slurmctld, munged or slurmd, whose
# command lines name the state directory) whose recorded owner has ended.
reap() {
    need_root reap
    local p cmd dir dirs=()
    for p in /proc/[0-9]*; do
        case "$(cat "$p/comm" 2>/dev/null)" in slurmctld | slurmd | munged) ;; *) continue ;; esac
        cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
        # slurmctld/slurmd: -f DIR/slurm.conf; munged: --socket=DIR/munge/munge.socket.
        dir=$(echo "$cmd" | sed -nE 's#.* -f ([^ ]+)/slurm\.conf.*#\1#p; s#.*--socket=([^ ]+)/munge/munge\.socket.*#\1#p')
        [ -n "$dir" ] && [ -f "$dir/.slurm-local" ] && dirs+=("$dir")
    done
    [ ${#dirs[@]} -eq 0 ] && return 0
    local owner owner_start
    for dir in $(printf '%s\n' "${dirs[@]}" | sort -u); do
        owner=$(sed -n 's/^owner=//p' "$dir/.slurm-local")
        owner_start=$(sed -n 's/^owner_start=//p' "$dir/.slurm-local")
        [ -n "$owner" ] || continue
        [ "$(start_time "$owner")" = "$owner_start" ] && continue
        echo "slurm-local.sh: reaping $dir (its owner, process $owner, has ended)" >&2
        down "$dir"
    done
}

case "${1:-}" in
    reap) [ $# -eq 1 ] || die "usage: $0 reap"; reap ;;
    up) [ $# -eq 2 ] || die "usage: $0 up STATE_DIR"; up "$2" ;;
    down) [ $# -eq 2 ] || die "usage: $0 down STATE_DIR"; down "$2" ;;
    install) install ;;
    *) die "usage: $0 up STATE_DIR | down STATE_DIR | reap | install (got ${1:-nothing})" ;;
esac
