"""scikit-learn's samplers as feature maps: the peers a user would otherwise pick, behind
the same API.

``sklearn_chi2`` and ``sklearn_skewed_chi2``: scikit-learn's AdditiveChi2Sampler and
SkewedChi2Sampler for the chi2 kernels (non-negative data); the skewed sampler's estimator
is the rff one in log(x + c), so the rff variance and bounds apply there.

``sklearn_rbf``: scikit-learn's ``RBFSampler`` (the ``rff`` map, computed by
numpy), Gaussian kernel only, gamma = 1 / (2 lengthscale^2).  Its estimator is
the cos + offset one, so the ``rff`` variances and bounds apply.

In Python, each of them with its defaults is scikit-learn's sampler with scikit-learn's
defaults (``KERNEL_DEFAULTS``): ``sklearn_rbf`` gamma = 1 (lengthscale 1/sqrt(2)),
``sklearn_chi2`` and ``sklearn_skewed_chi2`` their inputs unscaled (lengthscale 1),
``sklearn_polysketch`` gamma = 1, coef0 = 0; rffbench's other maps default to the median
heuristic (and the polynomial kernel to coef0 = 1).  Giving ``lengthscale`` or ``gamma``
(or a Kernel instance, as a run does) sets the kernel instead.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError
from .base import FeatureMap


class SklearnRBF(FeatureMap):
    """scikit-learn ``RBFSampler`` wrapped as an rffbench map (attribute ``sampler_``); with
    its defaults, ``RBFSampler()``'s gamma = 1 (lengthscale 1/sqrt(2))."""

    name = "sklearn_rbf"
    tags = {
        "variance": "rff",
        "sparse_input": True,  # RBFSampler takes sparse input
    }

    KERNELS = ("gaussian",)
    KERNEL_REASON = ("scikit-learn's RBFSampler approximates the Gaussian kernel only; use "
                     "features=rff (any kernel) or kernel=gaussian")
    KERNEL_DEFAULTS = {"gamma": 1.0}  # RBFSampler's

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """RBFSampler's weights, and its transform's temporaries (about 3 n x D float64)."""
        return 8.0 * (d + 1) * n_components + float(n_rows) * n_components * (24 + itemsize)

    def _fit(self, X, rng):
        from sklearn.kernel_approximation import RBFSampler

        self.sampler_ = RBFSampler(gamma=self.kernel_.gamma_, n_components=self.n_components,
                                   random_state=int(rng.integers(2**31 - 1))).fit(X)
        self.n_freq_ = self.n_components

    def _transform_into(self, X, out):
        out[:] = self.sampler_.transform(X)


class _ChiPeer(FeatureMap):
    """Shared part of the scikit-learn chi2 samplers."""

    tags = {"sparse_input": True}

    def sampler_input(self, X):
        return X * (1.0 / self.kernel_.ls)

    def _transform_into(self, X, out):
        self.kernel_.check_domain(X)
        Z = self.sampler_.transform(self.sampler_input(X))
        out[...] = Z.toarray() if sp.issparse(Z) else Z


class SklearnAdditiveChi2(_ChiPeer):
    """scikit-learn's AdditiveChi2Sampler (Vedaldi & Zisserman 2012), deterministic: with
    sample_steps s in 1..3 its output has d (2 s - 1) features, so D must be one of d, 3 d,
    5 d (a run refuses other values; in Python the nearest is used, with a warning).  With
    its defaults the inputs are not scaled (lengthscale 1), as the sampler's."""

    name = "sklearn_chi2"
    tags = {"deterministic": True}
    KERNELS = ("additive_chi2",)
    KERNEL_REASON = "scikit-learn's AdditiveChi2Sampler approximates the additive chi2 kernel only"
    STEPS = (1, 2, 3)  # sample_steps with scikit-learn's default sample_interval
    KERNEL_DEFAULTS = {"lengthscale": 1.0}  # AdditiveChi2Sampler's inputs as they are

    def __init__(self, *, kernel="additive_chi2", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)

    @classmethod
    def check_data(cls, n_components, n_samples, d=None, **params):
        if d is not None and n_components not in [d * (2 * s - 1) for s in cls.STEPS]:
            raise ConfigError.not_allowed("D", int(n_components),
                                          " for features=sklearn_chi2 with "
                              f"d={d}: AdditiveChi2Sampler outputs d (2 s - 1) features for "
                              f"sample_steps s = 1..3: use D={d}, {3 * d} or {5 * d}")

    def _fit(self, X, rng):
        from sklearn.kernel_approximation import AdditiveChi2Sampler

        d = X.shape[1]
        s = min(self.STEPS, key=lambda s: abs(d * (2 * s - 1) - self.n_components))
        if d * (2 * s - 1) != self.n_components:
            warnings.warn(f"n_components={self.n_components}: sklearn_chi2 outputs d (2 s - 1) "
                          f"features; uses sample_steps={s}, {d * (2 * s - 1)} features",
                          UserWarning, stacklevel=3)
        self.kernel_.check_domain(X)
        self.sampler_ = AdditiveChi2Sampler(sample_steps=s).fit(X)
        self.n_components_ = d * (2 * s - 1)
        self.n_freq_ = self.n_components_

    @property
    def _n_features_out(self):
        return self.n_components_


class SklearnSkewedChi2(_ChiPeer):
    """scikit-learn's SkewedChi2Sampler: the rff map on log(x + c) with hyperbolic-secant
    frequencies, for the skewed chi2 kernel at lengthscale 1 (its only scale)."""

    name = "sklearn_skewed_chi2"
    tags = {
        "variance": "rff",
        "sparse_input": False,  # SkewedChi2Sampler takes dense input only
    }
    KERNELS = ("skewed_chi2",)
    KERNEL_REASON = "scikit-learn's SkewedChi2Sampler approximates the skewed chi2 kernel only"

    KERNEL_DEFAULTS = {"lengthscale": 1.0}  # the sampler's only scale

    def __init__(self, *, kernel="skewed_chi2", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)

    def _fit(self, X, rng):
        from sklearn.kernel_approximation import SkewedChi2Sampler

        if self.kernel_.ls != 1.0:
            raise ConfigError(f"features=sklearn_skewed_chi2 needs kernel.lengthscale=1 (got "
                              f"{self.kernel_.ls:.4g}): SkewedChi2Sampler has no scale; use "
                              "features=rff for other lengthscales")
        X = X if isinstance(X, np.ndarray) else X[:]  # dense rows of a sparse input
        self.kernel_.check_domain(X)
        self.sampler_ = SkewedChi2Sampler(
            skewedness=float(self.kernel_.skewedness), n_components=self.n_components,
            random_state=int(rng.integers(2**31 - 1))).fit(X)
        self.n_freq_ = self.n_components


#: the maps this module registers (rffbench.features collects them)
MAPS = (SklearnRBF, SklearnAdditiveChi2, SklearnSkewedChi2)
