"""rffbench/_numba/binning.py: Maji & Berg's unary codes against their definition in numpy."""
import itertools
import math

import numpy as np
import scipy.sparse as sp

from rffbench import _numba as nbk


def test_unary_codes_are_the_maji_berg_encoding(rng):
    X = np.abs(rng.normal(size=(7, 3)))
    X[0, 0], X[1, 1], X[2, 2] = 0.0, 5.0, 0.75  # zero, clipped, on a bin edge (top 1.5)
    top = np.array([2.0, 1.0, 1.5])
    nbins = np.array([4, 3, 6])
    first = np.array([0, 4, 7])
    counts = np.empty(7, dtype=np.int64)
    nbk.unary_counts(X, top, nbins, counts)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    vals, idx = np.empty(indptr[-1]), np.empty(indptr[-1], dtype=np.int64)
    nbk.unary_codes(X, top, nbins, first, indptr, vals, idx)
    Z = sp.csr_matrix((vals, idx, indptr), shape=(7, 13)).toarray()
    ref = np.zeros((7, 13))
    for i, k in itertools.product(range(7), range(3)):
        t = min(X[i, k], top[k]) * nbins[k] / top[k]
        for j in range(nbins[k]):
            ref[i, first[k] + j] = math.sqrt(top[k] / nbins[k]) * min(1.0, max(0.0, t - j))
    np.testing.assert_allclose(Z, ref, rtol=1e-14, atol=1e-15)
    assert np.count_nonzero(Z) == indptr[-1]  # no stored zeros
