"""What the tests of the slem package share: the checkout's tools (the references the
package must match byte for byte), the demo digits, and small vector file helpers.

The tools run by subprocess with a list argv (no shell), writing under pytest's tmp_path.
"""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = ROOT / "bin"
DIGITS = ROOT / "testdata" / "digits"


# The tools run without the LD_PRELOAD that `make python-test SANITIZE=1` gives this Python
# (the sanitizers' shared runtime, for the instrumented libslem.so): an instrumented tool
# carries its own runtime, and refuses a second one.
TOOL_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def tool(name, *args, check=True):
    """Runs bin/NAME with args (each one argument), quiet; the CompletedProcess."""
    argv = [str(BIN / name)] + [str(a) for a in args]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=TOOL_ENV)
    if check and p.returncode != 0:
        raise AssertionError("%s exited %d: %s" % (argv, p.returncode, p.stderr.decode()))
    return p


def cache_info(path):
    """The JSON header of a cache as slem-negstats --info prints it."""
    return json.loads(tool("slem-negstats", "--info", path).stdout)


def read_fvecs(path):
    raw = np.fromfile(str(path), dtype="<i4")
    if raw.size == 0:
        return np.zeros((0, 0), dtype=np.float32)
    d = int(raw[0])
    rows = raw.reshape(-1, d + 1)
    assert (rows[:, 0] == d).all()
    return np.ascontiguousarray(rows[:, 1:]).view("<f4").astype(np.float32)


def write_fvecs(path, x):
    x = np.asarray(x, dtype="<f4")
    rows = np.empty((x.shape[0], x.shape[1] + 1), dtype="<i4")
    rows[:, 0] = x.shape[1]
    rows[:, 1:] = x.view("<i4")
    rows.tofile(str(path))


def cli_args(options):
    """slem-negstats' (or slem-encode's) arguments for the package's keywords."""
    argv = []
    for key, value in options.items():
        name = "--" + ("lambda" if key == "lam" else key.replace("_", "-"))
        if value is True:
            argv.append(name)
        elif value is not None and value is not False:
            argv += [name, str(value)]
    return argv


@pytest.fixture(scope="session")
def digits():
    """The demo digits: float32 negatives, queries, database, and their labels."""
    d = {name: read_fvecs(DIGITS / (name + ".fvecs"))
         for name in ("negatives", "queries", "database")}
    for name in ("queries", "database"):
        d[name + "_labels"] = (DIGITS / (name + ".labels")).read_text().split()
    return d


@pytest.fixture(scope="session")
def tool_cache(tmp_path_factory):
    """slem-negstats' default cache of the digits' negatives."""
    path = tmp_path_factory.mktemp("cache") / "neg.slem"
    tool("slem-negstats", "-q", "-o", path, DIGITS / "negatives.fvecs")
    return path
