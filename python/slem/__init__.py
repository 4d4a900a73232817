"""slem: square-loss exemplar machine descriptors and exact cosine retrieval, from Python.

The package is a thin layer over libslem.so (include/slem.h), the library under the
command-line tools, called through ctypes as LIBLINEAR's python/ does. Every function
gives the tools' bytes:

    fit       = slem-negstats   (the same cache, the same fingerprint)
    encode    = slem-encode     (the same float32 rows)
    search    = slem-match -F npy   (FAISS's D and I; IndexFlatIP is a drop-in for
                                     faiss.IndexFlatIP)
    evaluate  = slem-eval       (trec_eval's measures)

    >>> import numpy as np, slem
    >>> cache = slem.fit(negatives)                # n x d float32 or float64
    >>> db = cache.encode(database_vectors)        # float32 descriptors, unit length
    >>> q = cache.encode(query_vectors)
    >>> D, I = slem.search(q, db, 100)             # scores and rows, FAISS's layout
    >>> slem.evaluate(I, query_labels=ql, db_labels=dl)
    {'map': 0.83..., 'P_10': 0.9...}

Arrays are numpy arrays of float32 or float64, two dimensions (rows, d); a C-contiguous
float32 array is read in place, never copied; float64 is converted by the library a block
at a time. Results are new numpy arrays.

Errors raise slem.Error (a ValueError) with the library's message, which names the
option, the dimension, the row or the file.

Threads: `threads` is the number of BLAS threads of one call (None: $SLEM_THREADS, else
every core); results are the same bytes at every thread count. The library is loaded with
ctypes.CDLL, which releases the GIL for the whole of every call, so other Python threads
run while slem works; but the BLAS thread count is process-wide, so two Python threads must
not call into slem at the same time (take a lock around the calls if they might).

The library is found at $SLEM_LIBRARY, else at the checkout's lib/libslem.so (after
`make`, with PYTHONPATH=python), else installed (PREFIX/lib/libslem.so.0 beside the
package's PREFIX/lib/python3/dist-packages, or wherever the dynamic linker finds
libslem.so.0). slem.library_path says which was loaded.
"""

import ctypes
import json
import operator
import os

import numpy as np

from . import _lib

__all__ = ["Error", "Cache", "IndexFlatIP", "fit", "merge", "load", "search", "evaluate",
           "fit_options", "__version__", "library_path"]

_C, library_path = _lib.load()
__version__ = _C.slem_version().decode()

_FLT_MAX = float(np.finfo(np.float32).max)


class Error(ValueError):
    """An error of libslem (or of the arguments, found before calling it).

    str(e) is the library's message, naming the option, the dimension, the row or the file;
    e.status is its status: 1 I/O, 2 format, 3 numeric, 4 memory, 5 bad argument
    (slem.h's SLEM_EIO ... SLEM_EINVAL)."""

    def __init__(self, message, status=_lib.EINVAL):
        super().__init__(message)
        self.status = status


def _raise(status, err):
    msg = err.msg.decode("utf-8", "replace")
    if not msg:
        msg = (_C.slem_error_str(status) or b"error").decode()
    raise Error(msg, status)


def _check(status, err):
    if status != _lib.OK:
        _raise(status, err)


# ---- arguments ----

def _matrix(x, what, dtype=None):
    """x as a C-contiguous 2-D float32 or float64 array (no copy when it already is one),
    converted to dtype when given, and its SlemArray. slem.Error for another dtype or
    shape."""
    a = np.asarray(x)
    if a.dtype.kind != "f" or a.dtype.itemsize not in (4, 8):
        raise Error("%s: dtype %s: expected float32 or float64" % (what, a.dtype))
    if a.ndim != 2:
        raise Error("%s: shape %s: expected a 2-D array (rows, d)" % (what, a.shape))
    if dtype is None:
        dtype = np.float32 if a.dtype.itemsize == 4 else np.float64
    a = np.ascontiguousarray(a, dtype=dtype)
    s = _lib.SlemArray(a.ctypes.data, _lib.FLOAT32 if a.dtype == np.float32 else _lib.FLOAT64,
                       a.shape[0], a.shape[1])
    return a, s


def _threads(threads):
    if threads is None:
        return 0
    try:
        t = operator.index(threads)
    except TypeError:
        raise Error("threads: %r is not a whole number" % (threads,)) from None
    # the library's range (slem.h), checked here so that no int beyond C's reaches ctypes
    if t < 0 or t > 1024:
        raise Error("threads: %d is not a whole number from 0 to 1024" % t)
    return t


def _count(k, what="k"):
    try:
        v = operator.index(k)
    except TypeError:
        raise Error("%s: %r is not a whole number" % (what, k)) from None
    if v < 1:
        raise Error("%s: %d: expected at least 1" % (what, v))
    return v


def _path(p):
    return os.fsencode(os.fspath(p))


def _text(value):
    """An option's value as its command-line text."""
    if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
        return os.fsencode(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value)).encode()
    if isinstance(value, (float, np.floating)):
        return repr(float(value)).encode()
    return str(value).encode()


def _py_name(name):
    return "lam" if name == "lambda" else name.replace("-", "_")


def _c_name(key):
    return "lambda" if key == "lam" else key.replace("_", "-")


# ---- options ----

def fit_options():
    """The options of fit() and merge(), from the library's table (slem-negstats --help's
    order): a list of (keyword, metavar or None for a flag, help text)."""
    out = []
    for i in range(_C.slem_fit_options_count()):
        mv = _C.slem_fit_option_metavar(i)
        out.append((_py_name(_C.slem_fit_option_name(i).decode()),
                    mv.decode() if mv is not None else None,
                    (_C.slem_fit_option_help(i) or b"").decode()))
    return out


class _Options:
    """A SlemFitOptions or SlemEncodeOptions filled from keywords, freed with the block."""

    def __init__(self, kind, values, flags=None):
        self.kind = kind
        new = getattr(_C, "slem_%s_options_new" % kind)
        self._set = getattr(_C, "slem_%s_options_set" % kind)
        self._free = getattr(_C, "slem_%s_options_free" % kind)
        self.h = ctypes.c_void_p()
        err = _lib.SlemError()
        _check(new(ctypes.byref(self.h), ctypes.byref(err)), err)
        try:
            for key, value in values.items():
                self.set(key, value, flags)
        except BaseException:
            self.close()
            raise

    def set(self, key, value, flags):
        if value is None:
            return
        name = _c_name(key)
        is_flag = flags.get(name) if flags is not None else None
        if isinstance(value, (bool, np.bool_)):
            if is_flag is False:
                raise Error("%s: option '%s' takes a value, not %r" % (self.kind, key, value))
            if not value:
                return
            text = None
        else:
            if is_flag:
                raise Error("%s: option '%s' is a flag: give True or False, not %r"
                            % (self.kind, key, value))
            text = _text(value)
        err = _lib.SlemError()
        _check(self._set(self.h, name.encode(), text, ctypes.byref(err)), err)

    def close(self):
        if self.h:
            self._free(self.h)
            self.h = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _fit_flags():
    """{option name: True when it is a flag}, from the library's table."""
    return {_C.slem_fit_option_name(i).decode(): _C.slem_fit_option_metavar(i) is None
            for i in range(_C.slem_fit_options_count())}


# ---- caches ----

class Cache:
    """Negative statistics of one variant: the cache slem-negstats writes (.slem).

    Made by slem.fit(), slem.merge() or slem.load(); written by save(); encodes vectors
    with encode(). info is the cache's JSON header (kind, d, n, lambda, arithmetic and its
    BLAS core, sections, fingerprint)."""

    def __init__(self, handle):
        self._h = handle

    def __del__(self):
        self.close()

    def close(self):
        """Frees the statistics now (else when the object is collected)."""
        h = getattr(self, "_h", None)
        if h and _C is not None:
            _C.slem_cache_free(h)
        self._h = None

    def _handle(self):
        if not self._h:
            raise Error("cache: closed")
        return self._h

    @property
    def info(self):
        """The cache's JSON header as a dict, as slem-negstats --info prints it: kind, d,
        n, lambda, arithmetic (with the BLAS core), sections, fingerprint."""
        h = self._handle()
        info = json.loads(_C.slem_cache_info(h).decode())
        info.setdefault("kind", self.kind)
        info.setdefault("d", self.d)
        info.setdefault("fingerprint", self.fingerprint)
        return info

    @property
    def blas_core(self):
        """The OpenBLAS kernel the statistics were computed with (info's arithmetic): the
        same cache on another core differs in its last bits."""
        return self.info.get("arithmetic", {}).get("blas_core")

    @property
    def kind(self):
        """The cache's kind: 'linear', 'kernel', 'partial', ..."""
        return _C.slem_cache_kind_name(self._handle()).decode()

    @property
    def d(self):
        """The dimension of the vectors the cache encodes."""
        return int(_C.slem_cache_dim(self._handle()))

    @property
    def fingerprint(self):
        """16 hex digits of the checksum of the cache's payload, as the tools print it."""
        return _C.slem_cache_fingerprint_of(self._handle()).decode()

    def __repr__(self):
        if not self._h:
            return "<slem.Cache closed>"
        return "<slem.Cache kind=%s d=%d fingerprint=%s>" % (self.kind, self.d,
                                                             self.fingerprint)

    def save(self, path):
        """Writes the cache to path, atomically: the bytes slem-negstats writes for it (a
        file at path is replaced only when the whole cache is written; on error nothing is
        written there). slem.Error on failure, naming the file."""
        err = _lib.SlemError()
        _check(_C.slem_save(self._handle(), _path(path), ctypes.byref(err)), err)

    def encode(self, x, *, alpha=None, basic=False, classifier=False, theta=1.0,
               threads=None, **options):
        """Encodes the rows of x (rows x d, float32 or float64; 0 rows give 0 rows) into a
        new float32 array, rows x dim: row i is the bytes slem-encode writes for row i of a file holding x,
        at any thread count and however x is cut.

        alpha: the whitening exponent (slem-encode --alpha; -1 is SLEM, -0.5 PCA
        whitening); basic: slem-encode --basic; classifier: the classifier (omega, nu)
        rather than the unit descriptor, with its theta; other options of slem-encode by
        name, '-' written '_' (couple, projections, coordinates, precision): True for a
        flag, else the value as on the command line. threads: BLAS threads of this call."""
        h = self._handle()
        a, s = _matrix(x, "encode: x")
        values = dict(alpha=alpha, basic=basic, classifier=classifier)
        if classifier or theta != 1.0:
            values["theta"] = theta
        values.update(options)
        t = _threads(threads)
        with _Options("encode", values) as opts:
            err = _lib.SlemError()
            dim = _C.slem_encode_dim(h, opts.h, ctypes.byref(err))
            if dim == 0:
                _raise(err.status or _lib.EINVAL, err)
            out = np.empty((a.shape[0], dim), dtype=np.float32)
            if a.shape[0] == 0:  # an empty batch: its empty rows, as slem-encode of no vector
                return out
            _check(_C.slem_encode(h, ctypes.byref(s), opts.h, t,
                                  out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                  ctypes.byref(err)), err)
        return out

    def search(self, queries, database, k, *, normalize=False, threads=None):
        """Kernel SLEM's exact similarity (slem-match -c CACHE) of raw vectors, the cache's
        dimension: the k best database rows of every query, (D, I) as slem.search()."""
        h = self._handle()
        return _search(queries, database, k, normalize, threads,
                       lambda qs, ds, kk, fl, t, D, I, e:
                       _C.slem_search_kernel(h, qs, ds, kk, fl, t, D, I, e))


def fit(negatives, *, lambda_rel=None, lam=None, kernel=None, rank=None, depth=None,
        pca=None, eigen=False, threads=None, **options):
    """Fits the negative statistics of negatives: the cache slem-negstats writes.

    negatives: an n x d array (float32, read in place when C-contiguous, or float64), or a
    path or a list of paths of vector files of any format slem reads, or partial caches
    (fitted with partial=True), merged exactly.

    The keywords are slem-negstats' options by name, '-' written '_' (lam is --lambda,
    lambda_rel --lambda-rel): True for a flag, else the value as on the command line
    (numbers as Python writes them). fit_options() lists them all, with their help; the
    table is printed below. threads: BLAS threads of this call (the cache is the same
    bytes at every thread count). Returns a slem.Cache; slem.Error with slem-negstats'
    message when an option is wrong or the data are (a non-finite row, a singular matrix).
    """
    values = dict(lambda_rel=lambda_rel, lam=lam, kernel=kernel, rank=rank, depth=depth,
                  pca=pca, eigen=eigen)
    values.update(options)
    t = _threads(threads)
    out = ctypes.c_void_p()
    err = _lib.SlemError()
    with _Options("fit", values, _fit_flags()) as opts:
        if isinstance(negatives, (str, bytes, os.PathLike)) or (
                isinstance(negatives, (list, tuple)) and negatives
                and all(isinstance(p, (str, bytes, os.PathLike)) for p in negatives)):
            paths = [negatives] if not isinstance(negatives, (list, tuple)) else negatives
            cpaths = (ctypes.c_char_p * len(paths))(*[_path(p) for p in paths])
            st = _C.slem_fit_files(ctypes.byref(out), cpaths, len(paths), opts.h, t,
                                   ctypes.byref(err))
        else:
            a, s = _matrix(negatives, "fit: negatives")
            st = _C.slem_fit(ctypes.byref(out), ctypes.byref(s), opts.h, t,
                             ctypes.byref(err))
    _check(st, err)
    return Cache(out)


def merge(parts, *, threads=None, **options):
    """Merges partial caches (slem.Cache objects fitted with partial=True, of shards with
    shard='I/N') into the cache of one fit over all their rows, bit for bit: a final cache
    (with the options' lambda), or a partial one with partial=True. Options as fit()."""
    parts = list(parts)
    for p in parts:
        if not isinstance(p, Cache):
            raise Error("merge: %r is not a slem.Cache" % (p,))
    t = _threads(threads)
    handles = (ctypes.c_void_p * len(parts))(*[p._handle() for p in parts])
    out = ctypes.c_void_p()
    err = _lib.SlemError()
    with _Options("fit", options, _fit_flags()) as opts:
        st = _C.slem_fit_merge(ctypes.byref(out), handles, len(parts), opts.h, t,
                               ctypes.byref(err))
    _check(st, err)
    return Cache(out)


def load(path):
    """Loads a .slem cache written by slem-negstats or Cache.save(), checked as the tools
    check it (slem.Error naming the file and what is wrong)."""
    out = ctypes.c_void_p()
    err = _lib.SlemError()
    _check(_C.slem_load(ctypes.byref(out), _path(path), ctypes.byref(err)), err)
    return Cache(out)


# ---- search ----

def _search(queries, database, k, normalize, threads, call, dtype=None):
    q, qs = _matrix(queries, "search: queries", dtype)
    db, ds = _matrix(database, "search: database", dtype)
    k = _count(k)
    t = _threads(threads)
    D = np.empty((q.shape[0], k), dtype=np.float32)
    I = np.empty((q.shape[0], k), dtype=np.int64)
    err = _lib.SlemError()
    _check(call(ctypes.byref(qs), ctypes.byref(ds), k,
                _lib.SEARCH_NORMALIZE if normalize else 0, t,
                D.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                I.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), ctypes.byref(err)), err)
    return D, I


def search(queries, database, k, *, normalize=False, threads=None):
    """The k best database rows of every query by inner product (cosine with normalize):
    (D, I), D float32 scores and I int64 database rows, queries x k, FAISS's layout: a
    query's hits by decreasing score, ties by the lower row, padded with I = -1 and
    D = -FLT_MAX when k exceeds the database. The very scores and rows of
    `slem-match -F npy` on the same vectors, at any thread count: each score is the exact
    inner product (double sums of float products) rounded once to float32.

    queries and database: 2-D float32 (read in place) or float64 arrays of the same d."""
    return _search(queries, database, k, normalize, threads, _C.slem_search)


class IndexFlatIP:
    """An exact inner-product index with faiss.IndexFlatIP's interface: add(x),
    search(x, k) -> (D, I), ntotal, reset(), d, so that a script changes `faiss.` to
    `slem.` and gets exact, deterministic scores (slem.search's).

    As FAISS does, vectors are stored as float32 (float64 input is rounded once) in one
    array, queries are rounded to float32 too, and short result lists are padded with
    I = -1 and D = -FLT_MAX. Equal scores are ordered by the lower row (FAISS leaves them
    in no set order). The attribute threads (None: $SLEM_THREADS, else every core) is the
    BLAS threads of each search."""

    is_trained = True
    metric_type = 0  # faiss.METRIC_INNER_PRODUCT

    def __init__(self, d):
        self.d = _count(d, "IndexFlatIP: d")
        self.threads = None
        self.reset()

    def reset(self):
        """Removes every vector."""
        self._xb = np.empty((0, self.d), dtype=np.float32)
        self.ntotal = 0

    def _rows(self, x, what):
        a, _ = _matrix(x, "IndexFlatIP.%s: x" % what, np.float32)
        if a.shape[1] != self.d:
            raise Error("IndexFlatIP.%s: dimension %d, expected %d"
                        % (what, a.shape[1], self.d))
        return a

    def add(self, x):
        """Appends the rows of x (n x d) as rows ntotal .. ntotal + n - 1. slem.Error for
        another dimension or a non-finite value (naming its row), nothing added then."""
        a = self._rows(x, "add")
        bad = ~np.isfinite(a).all(axis=1)
        if bad.any():
            r = int(np.argmax(bad))
            raise Error("IndexFlatIP.add: row %d: %s" % (r, "NaN" if np.isnan(a[r]).any()
                                                          else "infinite value"),
                        _lib.EFORMAT)
        n = self.ntotal + a.shape[0]
        if n > self._xb.shape[0]:
            grown = np.empty((max(n, 2 * self._xb.shape[0]), self.d), dtype=np.float32)
            grown[:self.ntotal] = self._xb[:self.ntotal]
            self._xb = grown
        self._xb[self.ntotal:n] = a
        self.ntotal = n

    def reconstruct_n(self, i0, n):
        """A copy of rows i0 .. i0 + n - 1."""
        return self._xb[i0:min(i0 + n, self.ntotal)].copy()

    def search(self, x, k):
        """(D, I) of the k best rows for each row of x, as faiss.IndexFlatIP.search."""
        a = self._rows(x, "search")
        k = _count(k)
        if a.shape[0] == 0 or self.ntotal == 0:
            return (np.full((a.shape[0], k), -_FLT_MAX, dtype=np.float32),
                    np.full((a.shape[0], k), -1, dtype=np.int64))
        return _search(a, self._xb[:self.ntotal], k, False, self.threads, _C.slem_search)

    def __repr__(self):
        return "<slem.IndexFlatIP d=%d ntotal=%d>" % (self.d, self.ntotal)


# ---- evaluation ----

def _labels(values, n, what):
    a = np.asarray(values)
    if a.ndim != 1:
        raise Error("evaluate: %s: shape %s: expected one label per row" % (what, a.shape))
    if n is not None and a.shape[0] != n:
        raise Error("evaluate: %s: %d labels for %d rows" % (what, a.shape[0], n))
    return a


def evaluate(I, *, qrels=None, query_labels=None, db_labels=None,
             measures=("map", "P_10")):
    """trec_eval's measures of a ranking against ground truth, averaged over the queries:
    {measure: value}, what slem-eval prints for a ranking of the same rows.

    I: the nq x k database rows of search() (-1 padding ignored), or the path of a
    ranking file of slem-match (any ranking format). Ground truth: qrels (the path of a
    TREC qrels file whose qids and docnos are query and database rows), or query_labels
    and db_labels (one label per query and per database row, of any type: relevant is the
    same label). measures: slem-eval's summary ("map", "P_1", "P_5", "P_10", "recall_K")
    and the names of slem-eval -M (ndcg, ndcg_cut.10, recip_rank, ...)."""
    if isinstance(measures, str):
        measures = (measures,)
    measures = list(measures)
    if not measures:
        raise Error("evaluate: no measure")
    if (qrels is None) == (query_labels is None):
        raise Error("evaluate: give qrels, or query_labels and db_labels")
    if (query_labels is None) != (db_labels is None):
        raise Error("evaluate: query_labels and db_labels go together")
    from_file = isinstance(I, (str, bytes, os.PathLike))
    if not from_file:
        a = np.asarray(I)
        if a.dtype.kind not in "iu":
            raise Error("evaluate: I: dtype %s: expected integers (database rows)" % a.dtype)
        if a.ndim != 2:
            raise Error("evaluate: I: shape %s: expected a 2-D array (queries, k)" % (a.shape,))
        a = np.ascontiguousarray(a, dtype=np.int64)
    truth = _lib.SlemTruthArrays()
    keep = []
    if qrels is not None:
        truth.qrels = _path(qrels)
    else:
        ql = _labels(query_labels, None if from_file else a.shape[0], "query_labels")
        dl = _labels(db_labels, None, "db_labels")
        if ql.dtype.kind in "iu" and dl.dtype.kind in "iu":
            ql = np.ascontiguousarray(ql, dtype=np.int64)
            dl = np.ascontiguousarray(dl, dtype=np.int64)
        else:  # any labels: numbered by their sorted distinct values
            _, codes = np.unique(np.concatenate([ql.astype(str), dl.astype(str)]),
                                 return_inverse=True)
            codes = codes.astype(np.int64)
            ql, dl = codes[:ql.shape[0]].copy(), codes[ql.shape[0]:].copy()
        keep += [ql, dl]
        truth.query_labels = ql.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        truth.db_labels = dl.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        truth.ndb = dl.shape[0]
        truth.nq = ql.shape[0]
    names = (ctypes.c_char_p * len(measures))(*[m.encode() for m in measures])
    values = np.empty(len(measures), dtype=np.float64)
    vp = values.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    err = _lib.SlemError()
    if from_file:
        st = _C.slem_evaluate_file(_path(I), None, ctypes.byref(truth), names, len(measures),
                                   vp, ctypes.byref(err))
    else:
        st = _C.slem_evaluate(a.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), a.shape[0],
                              a.shape[1], ctypes.byref(truth), names, len(measures), vp,
                              ctypes.byref(err))
    _check(st, err)
    return {m: float(v) for m, v in zip(measures, values)}


def _fit_doc():
    lines = ["    Options (fit_options(), from the library's table):"]
    for key, metavar, text in fit_options():
        lines.append("        %s%s" % (key, "=True" if metavar is None else "=" + metavar))
        if text:
            lines.append("            " + " ".join(text.split()))
    return "\n".join(lines)


try:
    fit.__doc__ = fit.__doc__.rstrip() + "\n\n" + _fit_doc() + "\n"
except Exception:  # the docstring only; never let it stop the import
    pass
