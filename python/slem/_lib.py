"""The binding of libslem.so: finding and loading it, its structures and its prototypes.

Every function of include/slem.h that the package calls is declared here once, with its
argument and result types, so that a wrong argument is a TypeError in Python rather than a
crash in C. Nothing here is public: the package's functions (slem/__init__.py) wrap these.

The library is a ctypes.CDLL, so every call releases the GIL while it runs (ctypes does so
for every CDLL function) and takes it again before it returns.
"""

import ctypes
import ctypes.util
import os

# the statuses of slem.h (SLEM_OK ... SLEM_EINVAL)
OK, EIO, EFORMAT, ENUMERIC, ENOMEM, EINVAL = range(6)
FLOAT32, FLOAT64 = 1, 2
SEARCH_NORMALIZE = 1
ERRMSG_MAX = 1024


class SlemError(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("msg", ctypes.c_char * ERRMSG_MAX)]


class SlemArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("rows", ctypes.c_size_t), ("cols", ctypes.c_size_t)]


class SlemTruthArrays(ctypes.Structure):
    _fields_ = [("qrels", ctypes.c_char_p),
                ("query_labels", ctypes.POINTER(ctypes.c_int64)),
                ("db_labels", ctypes.POINTER(ctypes.c_int64)),
                ("ndb", ctypes.c_size_t),
                ("nq", ctypes.c_size_t)]


def candidates():
    """The paths tried, in order: $SLEM_LIBRARY alone when it is set; else the checkout's
    lib/libslem.so (python/slem/../../lib/), the installed layout's
    PREFIX/lib/libslem.so.0 (from PREFIX/lib/python3/dist-packages/slem/), then what
    the dynamic linker finds (ctypes.util.find_library('slem'), libslem.so.0)."""
    env = os.environ.get("SLEM_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(here, os.pardir, os.pardir, "lib", "libslem.so"),
             os.path.join(here, os.pardir, os.pardir, os.pardir, "libslem.so.0")]
    paths = [os.path.normpath(p) for p in paths if os.path.exists(p)]
    found = ctypes.util.find_library("slem")
    if found:
        paths.append(found)
    paths.append("libslem.so.0")
    return paths


def load():
    """The first of candidates() that loads, with its prototypes set. ImportError naming
    every path tried and why, when none does."""
    tried = []
    for path in candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        try:
            _prototypes(lib)
        except AttributeError as e:
            tried.append("%s (not the slem API: %s)" % (path, e))
            continue
        return lib, path
    raise ImportError("slem: cannot load libslem.so (build it with `make` in the checkout, "
                      "or set SLEM_LIBRARY to its path); tried: " + "; ".join(tried))


def _proto(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


def _prototypes(lib):
    c_int, c_size_t, c_char_p, c_void_p = ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p
    pp = ctypes.POINTER(c_void_p)
    err = ctypes.POINTER(SlemError)
    arr = ctypes.POINTER(SlemArray)
    truth = ctypes.POINTER(SlemTruthArrays)
    strs = ctypes.POINTER(c_char_p)
    f32 = ctypes.POINTER(ctypes.c_float)
    i64 = ctypes.POINTER(ctypes.c_int64)
    f64 = ctypes.POINTER(ctypes.c_double)

    _proto(lib, "slem_version", c_char_p)
    _proto(lib, "slem_error_str", c_char_p, c_int)

    _proto(lib, "slem_fit_options_new", c_int, pp, err)
    _proto(lib, "slem_fit_options_free", None, c_void_p)
    _proto(lib, "slem_fit_options_set", c_int, c_void_p, c_char_p, c_char_p, err)
    _proto(lib, "slem_fit_options_count", c_size_t)
    _proto(lib, "slem_fit_option_name", c_char_p, c_size_t)
    _proto(lib, "slem_fit_option_metavar", c_char_p, c_size_t)
    _proto(lib, "slem_fit_option_help", c_char_p, c_size_t)
    _proto(lib, "slem_fit", c_int, pp, arr, c_void_p, c_int, err)
    _proto(lib, "slem_fit_files", c_int, pp, strs, c_size_t, c_void_p, c_int, err)
    _proto(lib, "slem_fit_merge", c_int, pp, pp, c_size_t, c_void_p, c_int, err)
    _proto(lib, "slem_load", c_int, pp, c_char_p, err)
    _proto(lib, "slem_save", c_int, c_void_p, c_char_p, err)
    _proto(lib, "slem_cache_free", None, c_void_p)
    _proto(lib, "slem_cache_info", c_char_p, c_void_p)
    _proto(lib, "slem_cache_kind_name", c_char_p, c_void_p)
    _proto(lib, "slem_cache_dim", c_size_t, c_void_p)
    _proto(lib, "slem_cache_fingerprint_of", c_char_p, c_void_p)

    _proto(lib, "slem_encode_options_new", c_int, pp, err)
    _proto(lib, "slem_encode_options_free", None, c_void_p)
    _proto(lib, "slem_encode_options_set", c_int, c_void_p, c_char_p, c_char_p, err)
    _proto(lib, "slem_encode_dim", c_size_t, c_void_p, c_void_p, err)
    _proto(lib, "slem_encode", c_int, c_void_p, arr, c_void_p, c_int, f32, err)

    _proto(lib, "slem_search", c_int, arr, arr, c_size_t, c_int, c_int, f32, i64, err)
    _proto(lib, "slem_search_kernel", c_int, c_void_p, arr, arr, c_size_t, c_int, c_int,
           f32, i64, err)

    _proto(lib, "slem_evaluate", c_int, i64, c_size_t, c_size_t, truth, strs, c_size_t,
           f64, err)
    _proto(lib, "slem_evaluate_file", c_int, c_char_p, c_char_p, truth, strs, c_size_t,
           f64, err)
