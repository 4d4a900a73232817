#!/bin/sh
# Installs the Debian packages slem needs to build and test, when they are missing.
# Idempotent: with everything present it prints nothing and exits 0.
# As a non-root user it prints the command to run instead and exits 1.
set -eu

# build and test: GSL (with OpenBLAS as its CBLAS), cJSON, Check, pkg-config, a compiler;
# LIBLINEAR for slem-esvm; gnuplot-nox for tools/plot-pr; libpng-dev for the pictures of
# slem-report; GNU parallel, Slurm and munge for tools/slem-parallel, tools/slem-sbatch
# and their tests (which start a single-node cluster of their own); libhdf5-dev for
# FILE.h5:DATASET inputs, python3-h5py for scripts/gen-hdf5.py (its oracle), python3-faiss
# for scripts/gen-faiss.py (FAISS's own I and D files, testdata/faiss) and the Python
# package's comparison with faiss.IndexFlatIP; groff-base for the man-test check that every
# page renders without a warning; g++ for the check that the public header compiles as C++
# (tests/header.sh); python3-numpy and python3-pytest for the Python package (python/slem)
# and its tests (make python-test)
PKGS="libgsl-dev libopenblas-dev libcjson-dev liblinear-dev check pkg-config gcc make gnuplot-nox libpng-dev parallel slurm-wlm munge libhdf5-dev python3-h5py python3-faiss groff-base g++ python3-numpy python3-pytest"
# extra packages named on the command line (for example: scripts/install-deps.sh python3-numpy)
PKGS="$PKGS $*"

missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: missing Debian packages:$missing" >&2
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo"
  else
    echo "install-deps: not root; run:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
  fi
else
  SUDO=""
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2
echo "install-deps: installed:$missing" >&2
