# slem-scale's engine GNU parallel (a driver: tools/slem-scale says what one defines); --help:
# GNU parallel (slem-parallel):
#   -j J               jobs at once per host (default: one per core)
#   -S HOSTS, --sshloginfile FILE
#                      the hosts, as for parallel (default: this host only)

# shellcheck shell=sh
# shellcheck disable=SC2016,SC2034,SC2154 # slem-scale reads the engine_ variables, and
# sets those of its own that this file reads
engine_command=slem-parallel
engine_flags=""
# (a task that parallel started: its number is its first argument; its work directory is
# found from its script's place)
engine_task=""
jobs="" hosts="" loginfile=""

engine_option() { # engine_option OPTION VALUE
  case $1 in
    -j) jobs=$2 ;;
    -S) hosts=$2 ;;
    --sshloginfile) absname "$2" >"$T/eng.loginfile"; loginfile=1 ;;
    *) return 1 ;;
  esac
  taken=2
}

engine_validate() {
  [ -z "$jobs" ] || whole "$jobs" || die "-j: a whole number"
}

engine_check() {
  command -v parallel >/dev/null 2>&1 || fail "GNU parallel is not installed"
}

# nothing of a run before this one is still running: parallel ended with it
engine_previous() { :; }

# runs the tasks of the step not done, now, each step after the one before; parallel runs in
# the work directory and gets no name of it or of the user's (a '{}' or '{= perl =}' in a
# name would be a replacement string to it): only the job script's relative name and task
# numbers
engine_submit() { # engine_submit STEP COUNT AFTER...
  t=$(todo "$1" "$2")
  [ -n "$t" ] || return 0
  step=$1 count=$2
  forget_logs "$step" $t
  set -- --joblog "log/$step.joblog" --halt now,fail=1
  [ -z "$jobs" ] || set -- "$@" -j "$jobs"
  [ -z "$hosts" ] || set -- "$@" -S "$hosts" --wd .
  if [ -n "$loginfile" ]; then lf=$(cat "$T/eng.loginfile"); set -- "$@" --sshloginfile "${lf%x}" --wd .; fi
  [ "$blas_core" = none ] || set -- "$@" --env OPENBLAS_CORETYPE --env SLEM_BLAS_PIN
  # shellcheck disable=SC2086
  (cd "$W" && parallel -q "$@" sh "jobs/$step.sh" {} ::: $t) >/dev/null 2>&1 ||
    failed "$step" "$count"
  [ -z "$(todo "$step" "$count")" ] || failed "$step" "$count"
}

# every step ran to its end in engine_submit
engine_wait() { :; }
