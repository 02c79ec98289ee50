"""``nystrom``: the Nystrom method (Williams & Seeger, NIPS 2001), any kernel.

fit draws D landmarks L from the fitted rows (uniformly, without replacement,
with the seed) and eigendecomposes K_LL = U diag(s) U^T; the map is
phi(x) = k(x, L) U diag(s)^{-1/2}, so phi(x).phi(y) = k(x, L) K_LL^+ k(L, y).
Directions with s <= ``EIG_RTOL`` * max(s) are dropped (their columns are
zero): the pseudo-inverse of a numerically singular K_LL.  The map is
data-dependent and no published random-feature bound covers it.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .fourier import FeatureMap

EIG_RTOL = 1e-12


class Nystrom(FeatureMap):
    """Attributes: ``landmarks_`` (D, d), ``normalization_`` (D, D), ``rank_``, ``n_freq_``."""

    name = "nystrom"
    variance = None

    @classmethod
    def check_data(cls, n_components, n_samples):
        if n_components > n_samples:
            raise ConfigError(f"D={n_components} is not allowed for features=nystrom: it draws D "
                              f"landmarks from the {n_samples} training rows; use D <= "
                              f"{n_samples}")

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, fit_rows=0, **params):
        """Landmarks, K_LL and its eigendecomposition (about 4 D x D), k(x, L) and the output."""
        D = n_components
        return 8.0 * (D * d + 4 * D * D) + float(n_rows) * D * (8 + itemsize)

    def _fit(self, X, rng):
        n, D = X.shape[0], self.n_components
        self.check_data(D, n)
        self.landmarks_ = np.ascontiguousarray(X[np.sort(rng.choice(n, D, replace=False))],
                                               dtype=np.float64)
        s, U = np.linalg.eigh(self.kernel_.gram(self.landmarks_))
        keep = s > EIG_RTOL * s.max()
        T = np.zeros((D, D))
        T[:, keep] = U[:, keep] / np.sqrt(s[keep])
        self.normalization_ = T
        self.rank_ = int(keep.sum())
        self.n_freq_ = D
        self._T32 = None

    def _transform_into(self, X, out):
        T = self.normalization_
        if X.dtype == np.float32:
            if self._T32 is None:
                self._T32 = T.astype(np.float32)
            T = self._T32
        Kx = self.kernel_.gram(X, self.landmarks_.astype(X.dtype, copy=False))
        np.matmul(Kx, T, out=out)
