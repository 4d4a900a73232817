#!/usr/bin/python3
"""Generate the vector-format golden files in testdata/formats/ (outputs are committed).

Every file here is written by numpy itself (numpy.save, ndarray.tofile), so that slem's
readers are checked against the field's own writer rather than against slem's. Each data
file comes with the values it holds as text (repr of float64: exact), named *.expect.txt,
which tests/check_formats.c reads through slem's text reader and compares value by value.

Run from the top of the tree: /usr/bin/python3 scripts/gen-formats.py
(Debian's python3-numpy). `make check` needs no Python.
"""
import os

import numpy as np

OUT = "testdata/formats"


def expect(name, x):
    """The values of x, one row per line, exact."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    with open(os.path.join(OUT, name + ".expect.txt"), "w") as f:
        for row in x:
            f.write(" ".join(repr(float(v)) for v in row) + "\n")


def bin_file(path, x, dtype):
    """big-ann-benchmarks layout: uint32 n, uint32 d, then the rows."""
    x = np.asarray(x, dtype=dtype)
    with open(path, "wb") as f:
        np.array(x.shape, dtype="<u4").tofile(f)
        x.tofile(f)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261122)

    # floats: npy in every byte order and both memory orders, and fbin
    x = (rng.standard_normal((7, 5)) * 10).astype(np.float32)
    x[0, 0], x[0, 1], x[0, 2] = 1.17549435e-38, -3.4028235e38, 0.0
    expect("float", x)
    np.save(os.path.join(OUT, "f4.npy"), x.astype("<f4"))
    np.save(os.path.join(OUT, "f8.npy"), x.astype("<f8"))
    np.save(os.path.join(OUT, "f4be.npy"), x.astype(">f4"))
    np.save(os.path.join(OUT, "f8be.npy"), x.astype(">f8"))
    np.save(os.path.join(OUT, "f4fortran.npy"), np.asfortranarray(x.astype("<f4")))
    np.save(os.path.join(OUT, "f8befortran.npy"), np.asfortranarray(x.astype(">f8")))
    bin_file(os.path.join(OUT, "float.fbin"), x, "<f4")

    # a Fortran-order array of many blocks, its C-order twin
    big = rng.standard_normal((300, 6)).astype(np.float32)
    np.save(os.path.join(OUT, "big_c.npy"), big)
    np.save(os.path.join(OUT, "big_fortran.npy"), np.asfortranarray(big))

    # float16: values of every kind (normal, subnormal, largest, ties), read and rounded
    h = np.array([[0.0, -0.0, 1.0, -2.5, 65504.0, -65504.0],
                  [6.1035156e-05, 5.9604645e-08, 3.0517578e-05, 1e-3, 0.1, 3.14159265],
                  [1 + 2 ** -11, 1 + 3 * 2 ** -11, 2048 + 1, 2048 + 3, 65519.0, -65519.0],
                  [2 ** -25, 2 ** -25 * 3, 1e-8, 0.33333334, 1000.5, -7e-6]],
                 dtype=np.float32)
    np.save(os.path.join(OUT, "f2src.npy"), h)
    np.save(os.path.join(OUT, "f2.npy"), h.astype("<f2"))
    np.save(os.path.join(OUT, "f2be.npy"), h.astype(">f2"))
    expect("f2", h.astype(np.float16))

    # integers at their extremes, in each width and byte order
    i1 = np.array([[-128, 127, 0], [-1, 1, 42], [5, -7, 100]], dtype=np.int8)
    i2 = np.array([[-32768, 32767, 0], [-1, 1, 1234], [5, -7, 30000]], dtype=np.int16)
    i4 = np.array([[-2147483648, 2147483647, 0], [-1, 1, 123456789], [5, -7, 16777217]],
                  dtype=np.int32)
    u1 = np.array([[0, 255, 1], [128, 127, 42], [5, 7, 200]], dtype=np.uint8)
    expect("i1", i1)
    expect("i2", i2)
    expect("i4", i4)
    expect("u1", u1)
    np.save(os.path.join(OUT, "i1.npy"), i1)
    np.save(os.path.join(OUT, "i2.npy"), i2.astype("<i2"))
    np.save(os.path.join(OUT, "i2be.npy"), i2.astype(">i2"))
    np.save(os.path.join(OUT, "i4.npy"), i4.astype("<i4"))
    np.save(os.path.join(OUT, "i4be.npy"), i4.astype(">i4"))
    np.save(os.path.join(OUT, "i4fortran.npy"), np.asfortranarray(i4.astype("<i4")))
    np.save(os.path.join(OUT, "u1.npy"), u1)
    bin_file(os.path.join(OUT, "i1.i8bin"), i1, "i1")
    bin_file(os.path.join(OUT, "u1.u8bin"), u1, "u1")
    bin_file(os.path.join(OUT, "i4.ibin"), i4, "<i4")

    # big-ann-benchmarks ground truth: n, k, the ids, then the distances
    ids = np.array([[3, 1], [0, 2], [2, 3], [1, 0]], dtype=np.int32)
    dist = np.array([[0.5, 0.75], [1, 2], [0.25, 3], [4, 5]], dtype=np.float32)
    with open(os.path.join(OUT, "gt.ibin"), "wb") as f:
        np.array(ids.shape, dtype="<u4").tofile(f)
        ids.astype("<i4").tofile(f)
        dist.astype("<f4").tofile(f)
    expect("gt", ids)

    # int8 descriptors: round(127 x), halves away from zero, clipped to +-127
    q = np.array([[0.5, -0.5, 1.0, -1.0, 0.0],
                  [0.30151135, -0.9045340, 1.2, -1.5, 0.0039370079],
                  [0.2, 0.4, 0.6, -0.8, 0.001]], dtype=np.float32)
    np.save(os.path.join(OUT, "i1src.npy"), q)
    q64 = q.astype(np.float64) * 127
    expect("i1q", np.clip(np.sign(q64) * np.floor(np.abs(q64) + 0.5), -127, 127))


if __name__ == "__main__":
    main()
