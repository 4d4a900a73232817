# slem-scale's engine Slurm (a driver: tools/slem-scale says what one defines); --help:
# Slurm (slem-sbatch):
#   --partition P, --account A, --time T, --mem M, --cpus-per-task C
#                      passed to sbatch
#   --wait             wait for the ranking (else exit once the jobs are queued)

# shellcheck shell=sh
# shellcheck disable=SC2016,SC2034,SC2154 # slem-scale reads the engine_ variables, and
# sets those of its own that this file reads
engine_command=slem-sbatch
engine_flags="--wait"
# a task that Slurm started: its work directory (sbatch starts in it), its number, its cores
engine_task='[ -z "${SLURM_JOB_ID:-}" ] || {
  W=$SLURM_SUBMIT_DIR I=${SLURM_ARRAY_TASK_ID:-}
  [ -z "${SLURM_CPUS_PER_TASK:-}" ] || export SLEM_THREADS=$SLURM_CPUS_PER_TASK
}'
partition="" account="" time_limit="" mem="" cpus="" wait=0
# the jobs this run queued ("STEP:ID", ID empty for a step with nothing to do), their ids,
# and the last step's
sl_steps="" sl_queued="" sl_last=""

engine_option() { # engine_option OPTION [VALUE]
  taken=2
  case $1 in
    --partition) partition=$2 ;;
    --account) account=$2 ;;
    --time) time_limit=$2 ;;
    --mem) mem=$2 ;;
    --cpus-per-task) cpus=$2 ;;
    --wait) wait=1; taken=1 ;;
    *) return 1 ;;
  esac
}

# sbatch checks the values itself
engine_validate() { :; }

engine_check() {
  command -v sbatch >/dev/null 2>&1 || fail "Slurm's sbatch is not installed"
}

# One array job per step, chained by afterok; a failed task cancels what follows.
sb() { # sb STEP COUNT DEPENDENCY: submits the tasks not done, prints the job id ("" none)
  t=$(todo "$1" "$2")
  [ -n "$t" ] || return 0
  forget_logs "$1" $t
  # no name of the work directory: sbatch runs in it, and the task writes its own log
  # (Slurm would read a '%' or '\' of the directory's name in --output as a pattern, and
  # not start the task)
  set -- "$1" "$2" "$3" --parsable --job-name "slem-$1" --output /dev/null \
    --array "$(echo $t | tr ' ' ,)"
  [ -z "$partition" ] || set -- "$@" --partition "$partition"
  [ -z "$account" ] || set -- "$@" --account "$account"
  [ -z "$time_limit" ] || set -- "$@" --time "$time_limit"
  [ -z "$mem" ] || set -- "$@" --mem "$mem"
  [ -z "$cpus" ] || set -- "$@" --cpus-per-task "$cpus"
  [ "$blas_core" = none ] || set -- "$@" --export "ALL,OPENBLAS_CORETYPE=$blas_core,SLEM_BLAS_PIN=$blas_core"
  [ -z "$3" ] || set -- "$@" --dependency "afterok:$3" --kill-on-invalid-dep=yes
  step=$1
  shift 3
  (cd "$W" && sbatch "$@" "jobs/$step.sh") >"$T/sbatch.out" 2>"$T/sbatch.err" ||
    fail "sbatch refused step $step: $(cat "$T/sbatch.err")"
  cut -d';' -f1 "$T/sbatch.out"
}
active() { # active JOB...: prints those still pending or running (or not known to have
  # ended: a squeue that fails for another reason than a job id forgotten counts as running)
  for j in "$@"; do
    if squeue -h -t all -j "$j" -o %T >"$T/squeue.out" 2>"$T/squeue.err"; then
      grep -Eq 'PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|REQUEUE|RESIZING|STAGE_OUT' \
        "$T/squeue.out" && echo "$j"
    else
      grep -qi 'invalid job id' "$T/squeue.err" || echo "$j"
    fi
  done
}
wait_for() { # wait_for JOB...: until none is pending or running
  while [ -n "$(active "$@")" ]; do sleep 1; done
}

# the jobs a run before this one queued (without --wait): never submitted twice
engine_previous() {
  [ -f "$W/queued" ] || return 0
  # shellcheck disable=SC2046
  still=$(active $(cat "$W/queued"))
  if [ -n "$still" ]; then
    if [ "$wait" = 0 ]; then
      echo "$me: jobs $(echo $still) of the run in $W are still queued or running; add --wait" \
        "to wait for them" >&2
      exit 0
    fi
    say "waiting for the jobs queued before: $(echo $still)"
    # shellcheck disable=SC2046
    wait_for $(cat "$W/queued")
  fi
  rm -f "$W/queued"
}

# sbatch refused a step (sb said why): with no job of this run queued, a work directory
# that this run filled goes as after success (a new one, made beside the ranking, would
# else be left behind by every refused run); with jobs queued, they are recorded so that
# the next run with this work directory waits for them, and the message says where it is
refused() { # refused JOB...: the jobs this run queued before the refusal
  if [ -z "$*" ]; then
    [ "$resuming" = 1 ] || [ "$keep" = 1 ] || clean
  else
    echo "$@" >"$W/queued"
    echo "$me: jobs $* are queued; run again with --workdir $(q "$W") --wait to resume" >&2
  fi
  echo "$me: no ranking written" >&2
  exit 1
}

# queues the step's tasks not done, to start when the jobs of the steps AFTER succeed
engine_submit() { # engine_submit STEP COUNT AFTER...
  sl_step=$1 sl_count=$2
  shift 2
  sl_after=""
  for a in "$@"; do
    for p in $sl_steps; do [ "${p%%:*}" != "$a" ] || sl_after="$sl_after ${p#*:}"; done
  done
  # shellcheck disable=SC2086
  sl_job=$(sb "$sl_step" "$sl_count" "$(echo $sl_after | tr ' ' :)") || refused $sl_queued
  sl_steps="$sl_steps $sl_step:$sl_job"
  sl_queued="$sl_queued${sl_job:+ $sl_job}"
  sl_last=$sl_job
}

# waits for the last job: it ends when the ranking is written, or is cancelled when a task
# before it fails; without --wait, leaves the jobs queued (named in W/queued) and exits
engine_wait() {
  [ -n "$sl_last" ] || finish
  say "queued jobs $(echo $sl_queued); the ranking comes from job $sl_last"
  # shellcheck disable=SC2086
  echo $sl_queued >"$W/queued"
  if [ "$wait" = 0 ]; then
    echo "$me: without --wait: run again with --workdir '$W' --wait to see how it ended" >&2
    trap - EXIT
    rm -rf "$T"
    exit 0
  fi
  # shellcheck disable=SC2086
  wait_for $sl_queued
  rm -f "$W/queued"
}
