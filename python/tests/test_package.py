"""The package itself: its version, the library it loads, its docstrings, the GIL."""

import ctypes
import os
import pydoc
import subprocess
import sys
import threading
import time

import numpy as np

import slem
from conftest import ROOT, tool


def test_version_is_the_tools():
    out = tool("slem-negstats", "--version").stdout.decode()
    assert slem.__version__ and slem.__version__ in out.split("\n")[0]


def test_library_is_the_checkouts():
    # $SLEM_LIBRARY when set (make python-test leaves it unset), else the checkout's
    want = os.environ.get("SLEM_LIBRARY") or ROOT / "lib" / "libslem.so"
    assert os.path.samefile(slem.library_path, want)


def test_slem_library_names_the_library(tmp_path):
    env = dict(os.environ, SLEM_LIBRARY=str(tmp_path / "nolib.so"),
               PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run([sys.executable, "-c", "import slem"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode != 0
    assert b"ImportError" in p.stderr and b"nolib.so" in p.stderr
    env["SLEM_LIBRARY"] = str(slem.library_path)
    p = subprocess.run([sys.executable, "-c", "import slem; print(slem.library_path)"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0 and p.stdout.decode().strip() == str(slem.library_path)


def test_calls_release_the_gil():
    # ctypes releases the GIL around every call of a CDLL's functions, never a PyDLL's
    assert isinstance(slem._C, ctypes.CDLL) and not isinstance(slem._C, ctypes.PyDLL)


def test_help_shows_the_docstrings():
    text = pydoc.render_doc(slem, renderer=pydoc.plaintext)
    for name in ("fit", "load", "search", "evaluate", "IndexFlatIP", "Cache", "Error",
                 "GIL"):
        assert name in text
    for f in (slem.fit, slem.load, slem.search, slem.evaluate, slem.merge,
              slem.Cache.encode, slem.Cache.save, slem.IndexFlatIP.add,
              slem.IndexFlatIP.search):
        assert f.__doc__ and len(f.__doc__) > 40, f


def test_installed_layout_finds_its_library(tmp_path):
    # make install's layout: PREFIX/lib/libslem.so.0 and the package under
    # PREFIX/lib/python3/dist-packages/slem, found without SLEM_LIBRARY or ldconfig
    lib = tmp_path / "usr" / "lib"
    pkg = lib / "python3" / "dist-packages" / "slem"
    pkg.mkdir(parents=True)
    for f in (ROOT / "python" / "slem").glob("*.py"):
        (pkg / f.name).write_bytes(f.read_bytes())
    (lib / "libslem.so.0").write_bytes((ROOT / "lib" / "libslem.so.0").read_bytes())
    env = {k: v for k, v in os.environ.items() if k != "SLEM_LIBRARY"}
    env["PYTHONPATH"] = str(pkg.parent)
    p = subprocess.run([sys.executable, "-c", "import slem; print(slem.library_path)"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().strip() == str(lib / "libslem.so.0")


def test_other_threads_run_during_a_call():
    # another Python thread runs while slem works: its stamps fall inside the call's window
    # (a GIL held through the call would allow none past the first few milliseconds)
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1000, 64)).astype(np.float32)
    db = rng.standard_normal((20000, 64)).astype(np.float32)
    window, stamps = [], []

    def work():
        t0 = time.monotonic()
        slem.search(q, db, 10, threads=1)
        window.extend([t0, time.monotonic()])

    t = threading.Thread(target=work)
    t.start()
    while t.is_alive():
        stamps.append(time.monotonic())
        time.sleep(0.001)
    t.join()
    t0, t1 = window
    quarter = (t1 - t0) / 4
    assert t1 - t0 > 0.02, "the call is too short to tell"
    assert any(t0 + quarter < s < t1 - quarter for s in stamps)
