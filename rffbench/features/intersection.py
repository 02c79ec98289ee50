"""``mb``: the Maji-Berg map of the intersection kernel k(x, y) = sum_k min(x_k, y_k) / l
(Maji & Berg, ICCV 2009; pyrfm's MB), deterministic and sparse.

Each coordinate k gets N_k bins over [0, T_k], T_k its largest training value (of x / l),
N_k = D // d or one more (the first D mod d coordinates), so that the output has D columns.
A value a, clipped to [0, T_k], with t = a N_k / T_k, is coded as sqrt(T_k / N_k) times 1 on
the first floor(t) bins and t - floor(t) on the next: the inner product of two codes is
min(a, b) exactly when a and b fall in different bins, and (T_k / N_k) (floor(t) + f_a f_b)
instead of (T_k / N_k) (floor(t) + min(f_a, f_b)) when they share one.  So 0 <= k - z(x).z(y)
<= sum_k T_k / (4 N_k) for inputs within the training range: a deterministic bias, no
variance.  A test value above T_k is clipped to it (its error is its excess).  The output is
CSR with ceil(t) entries per coordinate (few for sparse histograms).  (pyrfm's SparseMB, two
entries per coordinate, does not approximate the kernel itself, its docs say: it serves
their linear classifier, and rffbench does not include it.)
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from .. import _numba as nbk
from ..errors import ConfigError
from .base import DenseRows, FeatureMap


class MajiBerg(FeatureMap):
    """Unary codes of each coordinate on a grid of its training range (module docs).

    Attributes: ``top_`` (d,) T_k, ``n_bins_`` (d,) N_k, ``first_`` (d,) the first column of
    each coordinate's bins."""

    name = "mb"
    tags = {"deterministic": True, "sparse_output": True, "data_dependent": True,
            "bias": ("deterministic quantisation: 0 <= k - estimate <= sum_k T_k / (4 N_k) "
                     "within the training range (T_k the largest training value of "
                     "coordinate k, N_k = D / d bins); test values above T_k are clipped")}
    KERNELS = ("intersection",)
    KERNEL_REASON = "unary codes on a grid represent the intersection (min) kernel only"

    def __init__(self, *, kernel="intersection", n_components=100, lengthscale=None,
                 gamma=None, random_state=None, chunk_rows=None):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)

    @classmethod
    def check_data(cls, n_components, n_samples, d=None, **params):
        if d is not None and n_components < d:
            raise ConfigError.not_allowed("D", int(n_components), f" for features=mb with d={d}: "
                              f"each coordinate needs at least one bin; use D >= {d}")

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """At most D entries per row (value and column, 16 bytes each) and the row counts."""
        return 24.0 * d + float(n_rows) * (n_components * 16.0 + 8)

    def _fit(self, X, rng):
        d, D = X.shape[1], self.n_components
        if D < d:  # a run refuses this beforehand (check_data)
            warnings.warn(f"n_components={D} < d={d}: mb gives each coordinate one bin and "
                          f"outputs {d} features", UserWarning, stacklevel=3)
            D = d
        self.n_components_ = D
        top = np.zeros(d)  # X: dense, or sparse rows densified by chunks (DenseRows)
        for Xc in (X.chunks() if isinstance(X, DenseRows) else [X]):
            top = np.maximum(top, Xc.max(axis=0) if Xc.shape[0] else 0.0)
        self.top_ = (top / self.kernel_.ls).astype(self._dtype)
        base, extra = divmod(D, d)
        self.n_bins_ = np.full(d, base, dtype=np.int64) + (np.arange(d) < extra)
        self.first_ = np.concatenate([[0], np.cumsum(self.n_bins_)[:-1]]).astype(np.int64)

    def transform(self, X):
        """CSR (n_samples, D): the codes of x / l."""
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        self.kernel_.check_domain(X)
        parts = []
        top = self._as("top_", np.float64)
        for _, Xc in self._chunks(X):  # sparse rows densified a chunk at a time
            U = np.ascontiguousarray(Xc, dtype=np.float64) / self.kernel_.ls
            counts = np.empty(U.shape[0], dtype=np.int64)
            nbk.unary_counts(U, top, self.n_bins_, counts)
            indptr = np.concatenate([[0], np.cumsum(counts)])
            values = np.empty(int(indptr[-1]))
            indices = np.empty(int(indptr[-1]), dtype=np.int64)
            nbk.unary_codes(U, top, self.n_bins_, self.first_, indptr, values, indices)
            parts.append(sp.csr_matrix((values.astype(X.dtype), indices, indptr),
                                       shape=(U.shape[0], self.n_components_)))
        return parts[0] if len(parts) == 1 else sp.vstack(parts, format="csr")

    @property
    def _n_features_out(self):
        return self.n_components_


#: the maps this module registers (rffbench.features collects them)
MAPS = (MajiBerg,)
