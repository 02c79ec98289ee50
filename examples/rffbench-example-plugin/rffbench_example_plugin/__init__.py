"""An example rffbench plug-in (see pyproject.toml for the entry points).

* ``stratified_rff``: the rff map z(x) = sqrt(2/D) cos(W x + b) with stratified
  offsets: b_i = 2 pi (pi_i + u_i) / D for a random permutation pi and u_i ~ U[0, 1).
  Each b_i is still uniform on [0, 2 pi), independent of W, so z(x).z(y) stays
  unbiased; the offsets are no longer independent, so the i.i.d. variance formula
  and the published bounds do not apply: the map declares no family
  (``variance = None``) and rffbench reports them as n/a.
* ``rational_quadratic``: k(delta) = (1 + |delta|^2 / (2 alpha l^2))^-alpha, scikit-learn's
  RationalQuadratic kernel.  A Gaussian scale mixture: tau ~ Gamma(alpha, rate alpha) and
  omega | tau ~ N(0, tau I / l^2) give E exp(-tau |delta|^2 / (2 l^2)) = k(delta), so
  sigma_p^2 = E|omega|^2 = d / l^2.
* ``two_moons``: scikit-learn's make_moons (dataset.n points, noise 0.1), 2 classes.
* ``alignment`` (module :mod:`.alignment`): a measurement, the centred kernel-target
  alignment of the exact Gram matrix and of the features' estimate, with its own config
  block ``measure.alignment``, a table and a figure in the report.
"""

import numpy as np
from scipy.spatial.distance import cdist
from scipy.special import ndtri
from scipy.stats import gamma as gamma_dist

from rffbench.checks import Real
from rffbench.datasets import DatasetLoader
from rffbench.features import RandomFourierFeatures
from rffbench.kernels import Kernel


class StratifiedRFF(RandomFourierFeatures):
    """rff with stratified offsets: unbiased, no i.i.d. family (bounds n/a)."""

    name = "stratified_rff"
    variance = None  # offsets are not independent: no exact variance formula, no bound

    def _draw(self, d, m, rng):
        W = self.kernel_.sample_frequencies(m, d, rng)
        offsets = 2.0 * np.pi * (rng.permutation(m) + rng.random(m)) / m
        return W, offsets


class RationalQuadratic(Kernel):
    """k(delta) = (1 + |delta|^2 / (2 alpha l^2))^-alpha (scikit-learn's RationalQuadratic)."""

    name = "rational_quadratic"
    constraints = {"alpha": Real(gt=0)}  # +kernel.params.alpha: checked, documented, tested

    def __init__(self, lengthscale="median", alpha=2.0, gamma=None, median_subsample=1000,
                 random_state=0):
        super().__init__(lengthscale=lengthscale, gamma=gamma,
                         median_subsample=median_subsample, random_state=random_state)
        self.alpha = alpha

    def sample_frequencies(self, n, d, rng):
        tau = rng.gamma(self.alpha, 1.0 / self.alpha, size=(n, 1))
        return rng.standard_normal((n, d)) * np.sqrt(tau) / self.ls

    def uniform_dims(self, d):
        return d + 1

    def frequencies_from_uniform(self, U, d):
        tau = gamma_dist.ppf(U[:, d:d + 1], self.alpha, scale=1.0 / self.alpha)
        return ndtri(U[:, :d]) * np.sqrt(tau) / self.ls

    def sigma_p2(self, d):
        return d / self.ls**2

    def k_of_delta(self, delta):
        r2 = np.sum(np.asarray(delta, dtype=np.float64) ** 2, axis=-1)
        return (1.0 + r2 / (2.0 * self.alpha * self.ls**2)) ** -self.alpha

    def _gram_into(self, X, Y, out):
        r2 = cdist(X, Y, "sqeuclidean")
        out[...] = (1.0 + r2 / (2.0 * self.alpha * self.ls**2)) ** -self.alpha


class TwoMoons(DatasetLoader):
    """scikit-learn make_moons: two interleaved half circles, noise 0.1 (classification)."""

    def shape(self, cfg):
        return (cfg.n, 2)  # dataset.n points in the plane: the memory plan before loading

    def load(self, cfg, seed):
        from sklearn.datasets import make_moons

        X, y = make_moons(n_samples=cfg.n, noise=0.1, random_state=seed)
        return X, y, dict(task="classification", source="scikit-learn make_moons (noise 0.1)",
                          licence="generated")


two_moons = TwoMoons()


__all__ = ["RationalQuadratic", "StratifiedRFF", "TwoMoons", "two_moons"]
