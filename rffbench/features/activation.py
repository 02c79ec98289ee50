"""Maps z(x) = s phi(W x) with Gaussian W and a non-trigonometric activation:
``arccos`` (arc-cosine kernels) and ``positive`` (positive random features).

* ``arccos`` (Cho & Saul 2009): w ~ N(0, I / l^2), z(x) = sqrt(2/D) step(w.x) for the
  order-0 kernel, sqrt(2/D) max(w.x, 0) for order 1; E z(x).z(y) = k_n(x / l, y / l)
  exactly (their eq. 1 is 2 E[step(w.x) step(w.y) (w.x)^n (w.y)^n]).
* ``positive`` (FAVOR+, Choromanski et al. 2021) for the Gaussian kernel: with u = x / l,
  exp(-|u - v|^2 / 2) = exp(-|u|^2 / 2) exp(-|v|^2 / 2) exp(u.v) and exp(u.v) =
  E[exp(w.u - |u|^2 / 2) exp(w.v - |v|^2 / 2)], w ~ N(0, I), so z(x) = exp(w.u - |u|^2) /
  sqrt(D) is unbiased and positive.  Its variance is not the trigonometric one: D Var =
  exp(4 u.v) - k^2 (depends on u + v, not only on u - v; theory.positive_variance),
  smaller than rff's for nearby points with small norms, far larger for large u.v.
* ``positive_orf``: the same features with orthogonal directions, the variant the paper
  recommends (FAVOR+ "with orthogonal random features", its Theorem 2: a smaller mean
  squared error): blocks of d orthogonal rows with chi_d lengths, as ``orf``; each row is
  still N(0, I) alone, so the estimate stays unbiased.

Transform: a chunk GEMM writes X @ W^T into the output, a numba-parallel pass applies the
activation in place.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .. import _numba as nbk
from .base import FeatureMap, project_into
from .formulas import positive_variance
from .fourier import ZERO_TOL, activate
from .structured import orthogonal_gaussian_rows


class ActivationMap(FeatureMap):
    """z(x) = phi(W x) with W drawn from the kernel's Gaussian frequency law; dense or
    sparse input.  Attributes: ``random_weights_`` (d, D), ``n_freq_``."""

    tags = {"sparse_input": True}
    KERNEL_NEEDS = ("sample_frequencies",)

    def _fit(self, X, rng):
        self.n_freq_ = self.n_components
        W = self.kernel_.sample_frequencies(self.n_components, X.shape[1], rng)
        self.random_weights_ = np.ascontiguousarray(W.T, dtype=X.dtype)

    def _transform_into(self, X, out):
        project_into(X, self._as("random_weights_", X.dtype), out)
        self._activate(X, out)

    def projection_bound(self, X):
        """Per-row upper bound on |w.x| over the directions, O(n d)."""
        wmax = np.abs(self._as("random_weights_", X.dtype)).max(axis=1)
        return np.asarray(abs(X) @ wmax, dtype=np.float64)


class ArcCosineFeatures(ActivationMap):
    """Arc-cosine features (Cho & Saul 2009): sqrt(2/D) step(w.x) or relu(w.x), w Gaussian."""

    name = "arccos"
    KERNELS = ("arccos0", "arccos1")
    KERNEL_REASON = ("step / relu features of Gaussian projections represent the arc-cosine "
                     "kernels of order 0 and 1 only")

    def __init__(self, *, kernel="arccos1", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)

    def _activate(self, X, out):
        activate(self.kernel_, out, self.n_components, ZERO_TOL * self.projection_bound(X))


class PositiveRandomFeatures(ActivationMap):
    """Positive random features (FAVOR+, Choromanski et al. 2021) for the Gaussian kernel:
    exp(w.x / l - |x|^2 / l^2) / sqrt(D), unbiased and positive."""

    name = "positive"
    KERNELS = ("gaussian",)
    KERNEL_REASON = ("exp(w.x - |x|^2) features represent the Gaussian (softmax) kernel only")
    tags = {"heavy_tails": "each term exp(w.(u + v) - |u|^2 - |v|^2) is log-normal: at large "
                           "u.v its variance is carried by draws rarer than 1 in 1000"}
    EXACT_MSE_SOURCE = "Choromanski et al. 2021, Lemma 2"

    @classmethod
    def exact_mse(cls, kernel, x, y, D, **params):
        """D Var = exp(4 u.v) - k^2 at u = x / l, v = y / l
        (:func:`~rffbench.features.formulas.positive_variance`)."""
        return positive_variance(x / kernel.ls, y / kernel.ls) / D

    def exp_shift(self, X):
        """|x|^2 / l^2 per row: what the features subtract from w.x in the exponent."""
        if sp.issparse(X):
            sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        else:
            sq = np.einsum("ij,ij->i", X, X, dtype=np.float64)
        return sq / self.kernel_.ls ** 2

    def _activate(self, X, out):
        nbk.positive_features_inplace(out, self.exp_shift(X), 1.0 / math.sqrt(self.n_components))


class OrthogonalPositiveFeatures(PositiveRandomFeatures):
    """Positive random features with orthogonal directions (FAVOR+ with orthogonal random
    features, Choromanski et al. 2021): blocks of d orthogonal rows with chi_d lengths.
    Attributes: ``random_weights_`` (d, D), ``row_scales_`` (D,) the chi lengths."""

    name = "positive_orf"
    tags = {"variance": None}
    EXACT_MSE_SOURCE = ""

    @classmethod
    def exact_mse(cls, kernel, x, y, D, **params):
        """None: the i.i.d. formula of ``positive`` does not hold for coupled rows."""
        return None

    def _fit(self, X, rng):
        self.n_freq_ = self.n_components
        W, norms = orthogonal_gaussian_rows(self.n_components, X.shape[1], rng)
        self.row_scales_ = norms.astype(X.dtype)
        self.random_weights_ = np.ascontiguousarray(W.T / self.kernel_.ls, dtype=X.dtype)


#: the maps this module registers (rffbench.features collects them)
MAPS = (ArcCosineFeatures, PositiveRandomFeatures, OrthogonalPositiveFeatures)
