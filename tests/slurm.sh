#!/bin/sh
# tools/slem-sbatch on a real single-node Slurm cluster that this test starts (munged,
# slurmctld and slurmd from Debian's slurm-wlm and munge, every file in a temporary
# directory, tests/slurm-cluster.sh) and stops at its end: sharded rankings equal to the
# single-process ones byte for byte, a failed array task stopping the chain, and the rerun
# resuming. Run from the top of the tree, as root; skipped when Slurm is not installed.
# shellcheck disable=SC2034,SC2154 # SCALE_ARGS and odd are shared with scale-common.sh
. "$(dirname "$0")/testlib.sh"
if [ -n "${SLEM_SKIP_ENGINES:-}" ]; then
  echo "slurm: skipped (SLEM_SKIP_ENGINES is set: the engines ran in the first pass)"
  exit 0
fi
. "$TOP/tests/slurm-cluster.sh"
C=$(mktemp -d "${TMPDIR:-/tmp}/slem-slurm.XXXXXX")
trap 'slurm_stop "$C"; rm -rf "$T" "$C"' EXIT
trap 'exit 1' INT TERM
slurm_start "$C"
case $? in
  0) ;;
  77) echo "slurm: Slurm or munge is not installed, or not root: skipped"; exit 0 ;;
  *) bad "the test cluster did not start"; finish slurm; exit 1 ;;
esac
# the cluster answers, and runs jobs as its own (no system Slurm is involved)
sinfo -h -o '%P %a %T' | grep -q '^test\* up idle' && ok || bad "sinfo: $(sinfo 2>&1)"
SCALE=$TOP/tools/slem-sbatch
SCALE_ARGS="--wait --time 10"
. "$TOP/tests/scale-common.sh"
. "$TOP/tests/scale-arith.sh"
# without --wait the jobs are queued and the script returns at once; the same command with
# --wait and the same work directory then waits for those jobs (never queues them twice)
rm -f "$T/q.tsv"
if "$SCALE" -N 2 -n "$odd" -n "$D/validation.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/q.tsv" -k 20 \
  --leaf-rows 32 --workdir "$T/qw" >"$T/out" 2>"$T/err"; then
  grep -q "queued jobs" "$T/err" && ok || bad "no --wait: no word of the queued jobs: $(cat "$T/err")"
else
  bad "no --wait: status $?: $(cat "$T/err")"
fi
if "$SCALE" --wait -N 2 -n "$odd" -n "$D/validation.fvecs" -q "$D/queries.fvecs" -d "$D/database.fvecs" -o "$T/q.tsv" -k 20 \
  --leaf-rows 32 --workdir "$T/qw" --keep >"$T/out" 2>"$T/err"; then
  cmp -s "$T/q.tsv" "$T/lin.tsv" && ok || bad "the queued jobs wrote no ranking, or another"
  grep -q "queued jobs" "$T/err" && bad "the rerun queued jobs again: $(cat "$T/err"); done: $(ls "$T/qw/done" | tr '\n' ' ')" || ok
else
  bad "--wait on a queued run: status $?: $(cat "$T/err")"
fi
finish slurm
