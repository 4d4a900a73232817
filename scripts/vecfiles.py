"""fvecs files for the Python generators and benchmarks in scripts/ (one copy of the format),
and the rankings of the reference scripts as slem-match's tsv writes them.

fvecs: per record, int32 d (little-endian), then d float32 values. The scripts import this
module from their own directory (Python puts a script's directory first on sys.path).
"""

import numpy as np

_BLOCK = 65536  # rows converted at a time, so that a large file needs no second copy


def write_fvecs(path, x):
    """Writes the rows of x (n, d) as float32 records to path; returns them as float32."""
    x = np.ascontiguousarray(x, dtype="<f4")
    if x.ndim != 2:
        raise ValueError(f"{path}: write_fvecs takes a 2-D array, not {x.ndim}-D")
    head = np.full((x.shape[0], 1), x.shape[1], dtype="<i4").view("<f4")
    with open(path, "wb") as f:
        for i in range(0, x.shape[0], _BLOCK):
            np.hstack([head[i:i + _BLOCK], x[i:i + _BLOCK]]).tofile(f)
    return x


def read_fvecs(path, dtype=np.float64):
    """The records of path as an (n, d) array of dtype (float32: a view of the file's
    values, no copy)."""
    raw = np.fromfile(path, dtype="<f4")
    if raw.size == 0:
        return np.empty((0, 0), dtype=dtype)
    d = int(raw[:1].view("<i4")[0])
    return raw.reshape(-1, d + 1)[:, 1:].astype(dtype, copy=False)


def write_ranking(out, simi, k):
    """The top k of each row of simi(queries, database) as slem-match's tsv: query, rank,
    row, score (%.9g of the float32); ties by the lower row, as slem-match breaks them."""
    for i in range(simi.shape[0]):
        order = np.lexsort((np.arange(simi.shape[1]), -simi[i]))[:k]
        for rank, j in enumerate(order, 1):
            out.write("%d\t%d\t%d\t%.9g\n" % (i, rank, j, np.float32(simi[i, j])))
