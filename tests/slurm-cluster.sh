# shellcheck shell=sh
# A single-node Slurm cluster for the tests, on this host only: sourced, then
#   slurm_start DIR   munged, slurmctld and slurmd with every file under DIR (config from
#                     tests/slurm/slurm.conf.in, free ports, a fresh munge key), SLURM_CONF
#                     exported so that sbatch, squeue and scontrol talk to it; returns once
#                     the node is idle, 77 when slurm-wlm or munge is not installed, 1 (the
#                     logs' ends on stderr) when a daemon does not come up
#   slurm_stop DIR    stops the three daemons and waits for them; safe to call twice
# Needs root (slurmd runs the jobs as their user).

slurm_pid() { # slurm_pid FILE: the pid in FILE, if that process runs
  [ -f "$1" ] || return 1
  p=$(cat "$1" 2>/dev/null)
  case $p in ''|*[!0-9]*) return 1 ;; esac
  kill -0 "$p" 2>/dev/null && echo "$p"
}

slurm_free_port() { # a TCP port nobody listens on, from $1 upwards
  p=$1
  while [ "$p" -lt 65000 ]; do
    if ! (ss -Htln 2>/dev/null || netstat -tln 2>/dev/null) | awk '{ print $4 }' | grep -q ":$p\$"; then
      echo "$p"
      return 0
    fi
    p=$((p + 1))
  done
  return 1
}

slurm_logs() {
  for f in "$1"/log/*.log; do
    [ -f "$f" ] || continue
    echo "== $f" >&2
    tail -n 8 "$f" >&2
  done
}

slurm_start() {
  dir=$1
  for c in slurmctld slurmd sbatch squeue scontrol munged; do
    command -v "$c" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
    command -v "$c" >/dev/null 2>&1 || { echo "slurm-cluster: $c is not installed" >&2; return 77; }
  done
  [ "$(id -u)" = 0 ] || { echo "slurm-cluster: needs root" >&2; return 77; }
  mkdir -p "$dir/etc" "$dir/state" "$dir/spool" "$dir/log" "$dir/run" "$dir/munge" "$dir/tmp" || return 1
  chmod 700 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
  chmod 400 "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" 2>>"$dir/log/munged.log" || {
    echo "slurm-cluster: munged did not start" >&2; slurm_logs "$dir"; return 1; }
  host=$(hostname -s 2>/dev/null || hostname)
  cpus=8
  mem=$(awk '/^MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
  # ports from a range that depends on this process, so that two runs at once differ
  portc=$(slurm_free_port $((20000 + $$ % 20000))) || return 1
  portd=$(slurm_free_port $((portc + 1))) || return 1
  sed -e "s|@DIR@|$dir|g" -e "s|@HOST@|$host|g" -e "s|@PORTC@|$portc|" -e "s|@PORTD@|$portd|" \
    -e "s|@CPUS@|$cpus|" -e "s|@MEM@|$mem|" "$TOP/tests/slurm/slurm.conf.in" >"$dir/etc/slurm.conf"
  SLURM_CONF=$dir/etc/slurm.conf
  export SLURM_CONF
  slurmctld -f "$SLURM_CONF" -i 2>>"$dir/log/slurmctld.log" ||
    { echo "slurm-cluster: slurmctld did not start" >&2; slurm_logs "$dir"; return 1; }
  slurmd -f "$SLURM_CONF" -N "$host" 2>>"$dir/log/slurmd.log" ||
    { echo "slurm-cluster: slurmd did not start" >&2; slurm_logs "$dir"; return 1; }
  i=0
  while [ $i -lt 60 ]; do
    st=$(sinfo -h -N -o %T 2>/dev/null)
    case $st in idle*) return 0 ;; esac
    sleep 0.5
    i=$((i + 1))
  done
  echo "slurm-cluster: the node did not become idle (state: ${st:-none})" >&2
  slurm_logs "$dir"
  return 1
}

slurm_stop() {
  dir=$1
  for d in slurmd slurmctld munged; do
    p=$(slurm_pid "$dir/run/$d.pid") || continue
    kill "$p" 2>/dev/null
    i=0
    while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
    kill -9 "$p" 2>/dev/null
  done
  # the jobs' shells, should one be left
  pkill -f "$dir/" 2>/dev/null
  return 0
}
