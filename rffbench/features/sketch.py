"""Random projections of the linear kernel k(x, y) = x.y / l^2 (Johnson-Lindenstrauss
sketches): ``gaussian_rp``, ``srht``, ``countsketch``.  With u = x / l, v = y / l each
estimate z(x).z(y) is unbiased for u.v.

* ``gaussian_rp``: z(x) = W u / sqrt(D), W with i.i.d. N(0, 1) entries.  D Var = |u|^2 |v|^2
  + (u.v)^2 (the second moment of a Wishart matrix: E (w.u)^2 (w.v)^2 = |u|^2 |v|^2 +
  2 (u.v)^2).  (orf, sorf, fastfood, circulant and qmc take the linear kernel too: the same
  estimate with orthogonal or structured W.)
* ``srht`` (subsampled randomized Hadamard transform; Ailon & Chazelle 2009, Tropp 2011):
  per block of L = 2^ceil(log2 d) outputs, z = sqrt(L / D) P H S u, S Rademacher signs,
  H the normalised Walsh-Hadamard matrix, P a uniform choice of rows without replacement
  (the last block keeps D - (B - 1) L of them).  H S is orthogonal, so a full block gives
  u.v exactly; E over P gives (rows kept / L) u.v per block: unbiased.  O(D log d) by a
  numba FWHT; no closed-form variance (it depends on the spread of H S u, Tropp 2011).
* ``countsketch`` (Charikar, Chen & Farach-Colton 2002; as a feature map, Weinberger et al.
  2009's hashing trick): z_h(u) = sum_(k: h(k) = b) s_k u_k, one hash h and sign s per
  coordinate; E z(x).z(y) = u.v and D Var = |u|^2 |v|^2 + (u.v)^2 - 2 sum_k u_k^2 v_k^2
  (the Gaussian projection's minus the diagonal terms a hash never splits).  O(nnz) time:
  sparse input stays sparse, the output is dense.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .. import _numba as nbk
from .base import FeatureMap, project_into
from .structured import next_pow2

LINEAR_REASON = "it is a random projection: it represents the linear kernel x.y / l^2 only"


class _LinearSketch(FeatureMap):
    """A projection of the linear kernel (unbiased for u.v, u = x / l)."""

    KERNELS = ("linear",)
    KERNEL_REASON = LINEAR_REASON

    def __init__(self, *, kernel="linear", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)


class GaussianRandomProjection(_LinearSketch):
    """Gaussian random projection z(x) = W x / (l sqrt(D)) with standard normal W (Johnson-
    Lindenstrauss).

    Attributes: ``random_weights_`` (d, D)."""

    name = "gaussian_rp"
    tags = {"sparse_input": True}
    EXACT_MSE_SOURCE = "Gaussian projection: D Var = |u|^2 |v|^2 + (u.v)^2"

    @classmethod
    def exact_mse(cls, kernel, x, y, D, **params):
        u, v = x / kernel.ls, y / kernel.ls
        return (u.dot(u) * v.dot(v) + u.dot(v) ** 2) / D

    def _fit(self, X, rng):
        W = rng.standard_normal((X.shape[1], self.n_components))
        self.random_weights_ = np.ascontiguousarray(
            W / (self.kernel_.ls * math.sqrt(self.n_components)), dtype=X.dtype)

    def _transform_into(self, X, out):
        project_into(X, self._as("random_weights_", X.dtype), out)


class SubsampledHadamard(_LinearSketch):
    """The subsampled randomized Hadamard transform, sqrt(L / D) P H S x / l per block of L
    outputs.

    Attributes: ``signs_`` (B, L), ``rows_`` (B, L) the rows of H S x each block keeps (in
    the first D - b L entries of the last block), ``padded_dim_`` L."""

    name = "srht"
    tags = {"sparse_input": False}

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Signs and rows (2 L B values), a tile per thread, and the output."""
        L = next_pow2(d)
        B = -(-n_components // L)
        return 8.0 * (2 * L * B + 8 * L) + float(n_rows) * n_components * itemsize

    def _fit(self, X, rng):
        L = next_pow2(X.shape[1])
        B = -(-self.n_components // L)
        self.padded_dim_ = L
        self.signs_ = rng.choice(np.array([-1.0, 1.0]), size=(B, L)).astype(self._dtype)
        self.rows_ = np.argsort(rng.random((B, L)), axis=1).astype(np.int64)
        # H unnormalised (H / sqrt(L) orthogonal): sqrt(L / D) / sqrt(L) / l
        self._scale = 1.0 / (self.kernel_.ls * math.sqrt(self.n_components))

    def _transform_into(self, X, out):
        nbk.srht_project(X, self._as("signs_", np.float64), self.rows_, self._scale, out)


class CountSketch(_LinearSketch):
    """The count sketch of x / l: z_b(x) = sum_(k: h(k) = b) s_k x_k / l.

    Attributes: ``hashes_`` (d,), ``signs_`` (d,)."""

    name = "countsketch"
    tags = {"sparse_input": True}
    EXACT_MSE_SOURCE = ("count sketch: D Var = |u|^2 |v|^2 + (u.v)^2 - 2 sum u_k^2 v_k^2 "
                        "(Weinberger et al. 2009)")

    @classmethod
    def exact_mse(cls, kernel, x, y, D, **params):
        u, v = x / kernel.ls, y / kernel.ls
        return (u.dot(u) * v.dot(v) + u.dot(v) ** 2 - 2.0 * np.sum(u * u * v * v)) / D

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        return 16.0 * d + float(n_rows) * n_components * (itemsize + 8)

    def _fit(self, X, rng):
        d = X.shape[1]
        self.hashes_ = rng.integers(0, self.n_components, size=d).astype(np.int64)
        self.signs_ = (rng.choice(np.array([-1.0, 1.0]), size=d) / self.kernel_.ls).astype(
            self._dtype)

    def _transform_into(self, X, out):
        if sp.issparse(X):  # O(nnz): the sketch as a sparse d x D matrix
            S = sp.csr_matrix((self._as("signs_", np.float64),
                               (np.arange(X.shape[1]), self.hashes_)),
                              shape=(X.shape[1], self.n_components))
            out[...] = (X @ S).toarray()
            return
        nbk.count_sketches(X, self.hashes_[None], self._as("signs_", np.float64)[None], out[None])


#: the maps this module registers (rffbench.features collects them)
MAPS = (GaussianRandomProjection, SubsampledHadamard, CountSketch)
