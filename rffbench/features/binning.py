"""``binning``: random binning features (Rahimi & Recht 2007, Algorithm 2), sparse output.

For the Laplacian (L1) kernel k(delta) = prod_j exp(-|delta_j| / l): per grid p
and dimension j a pitch delta_pj ~ Gamma(2, l) and a shift u_pj ~ U[0, delta_pj);
x falls in the bin (floor((x_j - u_pj) / delta_pj))_j of grid p.  Two points
share a bin with probability prod_j E[max(0, 1 - |delta_j| / pitch)] =
prod_j exp(-|delta_j| / l) = k(delta), so z(x) = sqrt(1/P) [one-hot bin of
grid 1, ..., grid P] is unbiased.  ``n_components`` = D = P, the number of
grids; each row has exactly P nonzeros.

Bins are hashed (random odd 64-bit multipliers, numba) and the columns are the
bins seen in ``fit``: ``n_columns_`` (recorded by the measurements) is their
number.  A bin first seen in ``transform`` has no column: that row gets fewer
than P nonzeros, which changes no inner product with a fitted row (a new bin
is shared with no fitted point).  Output: scipy.sparse CSR.

Other kernels are refused: the construction needs a separable kernel whose
1-d profile is convex on [0, inf) (then the pitch density is delta k''(delta));
among rffbench's kernels only the (L1) Laplacian is both.  The Cauchy product
kernel is separable but 1/(1 + t^2) is concave below t = 1/sqrt(3).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from .. import _numba as nbk
from .base import DenseRows, FeatureMap


class RandomBinning(FeatureMap):
    """Random binning (Rahimi & Recht 2007, Algorithm 2): one-hot bins of D random grids,
    sparse output.

    Attributes: ``pitch_``, ``shift_`` (P, d), ``vocab_`` (list of sorted bin
    keys per grid), ``col_offset_`` (P + 1,), ``n_columns_``."""

    name = "binning"
    tags = {
        "variance": None,
        "sparse_output": True,
        "data_dependent": True,
    }

    KERNELS = ("laplacian",)
    KERNEL_REASON = ("random binning needs a separable kernel with a convex 1-d profile; of "
                     "rffbench's kernels only laplacian (L1) is one")

    def __init__(self, *, kernel="laplacian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Pitches and shifts (P x d), the bin keys of the fitted rows and their vocabulary,
        and per transformed row P keys, columns, flags and CSR entries (about 40 bytes)."""
        P = n_components
        return 16.0 * P * d + 16.0 * train_rows * P + 40.0 * n_rows * P

    def _fit(self, X, rng):
        P, d = self.n_components, X.shape[1]
        pitch = rng.gamma(2.0, self.kernel_.ls, size=(P, d))
        self.pitch_ = pitch.astype(self._dtype)  # in the input's dtype; the keys use
        self.shift_ = (rng.uniform(0.0, 1.0, size=(P, d)) * pitch).astype(self._dtype)  # f64
        self._mult = (rng.integers(0, 2**63, size=d, dtype=np.uint64) * np.uint64(2)
                      + np.uint64(1))
        keys = self._keys(X)
        self.vocab_ = [np.unique(keys[:, p]) for p in range(P)]
        self.col_offset_ = np.concatenate([[0], np.cumsum([v.size for v in self.vocab_])])
        self.n_columns_ = int(self.col_offset_[-1])
        self.n_freq_ = P

    def _keys(self, X):
        """Bin keys (n, P) of dense rows, or of CSR / DenseRows densified by chunks."""
        keys = np.empty((X.shape[0], self.n_components), dtype=np.uint64)
        pitch, shift = self._as("pitch_", np.float64), self._as("shift_", np.float64)
        if isinstance(X, np.ndarray):
            nbk.binning_keys(np.ascontiguousarray(X), pitch, shift, self._mult, keys)
            return keys
        s = 0
        for Xc in (X.chunks() if hasattr(X, "chunks") else DenseRows(X).chunks()):
            nbk.binning_keys(np.ascontiguousarray(Xc), pitch, shift, self._mult,
                             keys[s:s + Xc.shape[0]])
            s += Xc.shape[0]
        return keys

    def transform(self, X):
        """CSR (n_samples, n_columns_) with value 1/sqrt(P) at each row's bins."""
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        keys = self._keys(X)
        n, P = keys.shape
        cols = np.empty((n, P), dtype=np.int64)
        found = np.empty((n, P), dtype=bool)
        for p, vocab in enumerate(self.vocab_):
            i = np.minimum(np.searchsorted(vocab, keys[:, p]), vocab.size - 1)
            found[:, p] = vocab[i] == keys[:, p]
            cols[:, p] = self.col_offset_[p] + i
        counts = found.sum(axis=1)
        indptr = np.concatenate([[0], np.cumsum(counts)])
        data = np.full(int(indptr[-1]), 1.0 / math.sqrt(P), dtype=X.dtype)
        return sp.csr_matrix((data, cols[found], indptr), shape=(n, self.n_columns_))

    @property
    def _n_features_out(self):
        return self.n_columns_


#: the maps this module registers (rffbench.features collects them)
MAPS = (RandomBinning,)
