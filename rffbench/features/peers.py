"""Peers as feature maps: what a user would otherwise pick, behind the same API.

``sklearn_rbf``: scikit-learn's ``RBFSampler`` (the ``rff`` map, computed by
numpy), Gaussian kernel only, gamma = 1 / (2 lengthscale^2).  Its estimator is
the cos + offset one, so the ``rff`` variances and bounds apply.
"""
from __future__ import annotations


from .fourier import FeatureMap


class SklearnRBF(FeatureMap):
    """scikit-learn ``RBFSampler`` wrapped as an rffbench map (attribute ``sampler_``)."""

    name = "sklearn_rbf"
    variance = "rff"
    SPARSE_NATIVE = True  # RBFSampler takes sparse input

    KERNELS = ("gaussian",)
    KERNEL_REASON = ("scikit-learn's RBFSampler approximates the Gaussian kernel only; use "
                     "features=rff (any kernel) or kernel=gaussian")

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, fit_rows=0, **params):
        """RBFSampler's weights, and its transform's temporaries (about 3 n x D float64)."""
        return 8.0 * (d + 1) * n_components + float(n_rows) * n_components * (24 + itemsize)

    def _fit(self, X, rng):
        from sklearn.kernel_approximation import RBFSampler

        self.sampler_ = RBFSampler(gamma=0.5 / self.kernel_.ls**2, n_components=self.n_components,
                                   random_state=int(rng.integers(2**31 - 1))).fit(X)
        self.n_freq_ = self.n_components

    def _transform_into(self, X, out):
        out[:] = self.sampler_.transform(X)
