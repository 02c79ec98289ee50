"""``nystrom``: the Nystrom method (Williams & Seeger, NIPS 2001), any kernel.

fit draws D landmarks L from the fitted rows (uniformly, without replacement,
with the seed) and eigendecomposes K_LL = U diag(s) U^T; the map is
phi(x) = k(x, L) U diag(s)^{-1/2}, so phi(x).phi(y) = k(x, L) K_LL^+ k(L, y).
Directions with s <= ``EIG_RTOL`` * max(s) are dropped (their columns are
zero): the pseudo-inverse of a numerically singular K_LL.  The map is
data-dependent and no published random-feature bound covers it.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import ConfigError
from .base import FeatureMap

EIG_RTOL = 1e-12


class Nystrom(FeatureMap):
    """The Nystrom method (Williams & Seeger 2001): D landmarks drawn from the training rows.

    Attributes: ``landmarks_`` (D, d), ``normalization_`` (D, D), ``rank_``, ``n_freq_``,
    ``n_components_`` (min(D, n_samples): the output dimension)."""

    name = "nystrom"
    SHIFT_INVARIANT_ONLY = False  # the kernel's Gram only: any kernel
    tags = {
        "data_dependent": True,
        "bias": ("a projection onto the span of the landmarks, k(x, L) K_LL^+ k(L, y) <= k "
                 "on the diagonal: not an unbiased estimate"),
        "variance": None,
    }

    @classmethod
    def check_data(cls, n_components, n_samples, d=None, **params):
        if n_components > n_samples:
            raise ConfigError.not_allowed("D", int(n_components),
                                          " for features=nystrom: it draws D "
                              f"landmarks from the {n_samples} training rows; use D <= "
                              f"{n_samples}")

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Landmarks, K_LL and its eigendecomposition (about 4 D x D), k(x, L) and the output."""
        D = n_components
        return 8.0 * (D * d + 4 * D * D) + float(n_rows) * D * (8 + itemsize)

    def _fit(self, X, rng):
        n, D = X.shape[0], self.n_components
        if D > n:  # as scikit-learn's Nystroem (a run refuses it beforehand: check_data)
            warnings.warn(f"n_components={D} > n_samples={n}: nystrom uses all {n} rows as "
                          f"landmarks and outputs {n} features", UserWarning, stacklevel=3)
            D = n
        self.n_components_ = D
        self.landmarks_ = np.ascontiguousarray(X[np.sort(rng.choice(n, D, replace=False))],
                                               dtype=self._dtype)
        s, U = np.linalg.eigh(self.kernel_.gram(self.landmarks_.astype(np.float64)))
        keep = s > EIG_RTOL * s.max()
        T = np.zeros((D, D))
        T[:, keep] = U[:, keep] / np.sqrt(s[keep])
        self.normalization_ = T.astype(self._dtype)
        self.rank_ = int(keep.sum())
        self.n_freq_ = D

    @property
    def _n_features_out(self):
        return self.n_components_

    def _transform_into(self, X, out):
        Kx = self.kernel_.gram(X, self._as("landmarks_", X.dtype))
        np.matmul(Kx, self._as("normalization_", X.dtype), out=out)


#: the maps this module registers (rffbench.features collects them)
MAPS = (Nystrom,)
