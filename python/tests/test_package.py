"""The package itself: its version, the library it loads, its docstrings, the GIL."""

import ctypes
import os
import pydoc
import subprocess
import sys

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
