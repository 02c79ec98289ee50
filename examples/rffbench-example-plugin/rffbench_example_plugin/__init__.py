"""An example rffbench plug-in (see pyproject.toml for the entry points).

* ``stratified_rff``: the rff map z(x) = sqrt(2/D) cos(W x + b) with stratified
  offsets: b_i = 2 pi (pi_i + u_i) / D for a random permutation pi and u_i ~ U[0, 1).
  Each b_i is still uniform on [0, 2 pi), independent of W, so z(x).z(y) stays
  unbiased; the offsets are no longer independent, so the i.i.d. variance formula
  and the published bounds do not apply: the map declares no family
  (``tags = {"variance": None}``) and rffbench reports them as n/a.
* ``two_scale``: k(delta) = (exp(-|delta|^2 / (2 l^2)) + exp(-|delta|^2 / (2 r^2 l^2))) / 2,
  the mean of two Gaussian kernels whose lengthscales differ by the factor ``ratio`` = r.
  Its spectral density is the mean of theirs: a frequency is N(0, I / l^2) or
  N(0, I / (r l)^2) with probability 1/2 each, so sigma_p^2 = d (1 + 1 / r^2) / (2 l^2).
* ``two_moons``: scikit-learn's make_moons (dataset.n points, noise 0.1), 2 classes.
* ``alignment`` (module :mod:`.alignment`): a measurement, the centred kernel-target
  alignment of the exact Gram matrix and of the features' estimate, with its own config
  block ``measure.alignment``, a table and a figure in the report.
"""

import numpy as np
from scipy.spatial.distance import cdist
from scipy.special import ndtri

from rffbench.checks import Real
from rffbench.datasets import DatasetLoader
from rffbench.features import RandomFourierFeatures
from rffbench.kernels import Kernel


class StratifiedRFF(RandomFourierFeatures):
    """rff with stratified offsets: unbiased, no i.i.d. family (bounds n/a)."""

    name = "stratified_rff"
    tags = {"variance": None}  # offsets are not independent: no variance formula, no bound

    def _draw(self, d, m, rng):
        W = self.kernel_.sample_frequencies(m, d, rng)
        offsets = 2.0 * np.pi * (rng.permutation(m) + rng.random(m)) / m
        return W, offsets


class TwoScale(Kernel):
    """k(delta) = (exp(-|delta|^2 / (2 l^2)) + exp(-|delta|^2 / (2 r^2 l^2))) / 2, r = ratio."""

    name = "two_scale"
    constraints = {"ratio": Real(gt=0)}  # kernel.params.ratio: checked, documented, tested

    def __init__(self, lengthscale="median", ratio=4.0, gamma=None, median_subsample=1000,
                 random_state=0):
        super().__init__(lengthscale=lengthscale, gamma=gamma,
                         median_subsample=median_subsample, random_state=random_state)
        self.ratio = ratio

    def _scales(self, coin):
        """1 / l or 1 / (r l) per frequency, by a fair coin (uniform numbers below 1/2)."""
        return np.where(coin < 0.5, 1.0, 1.0 / self.ratio) / self.ls

    def sample_frequencies(self, n, d, rng):
        return rng.standard_normal((n, d)) * self._scales(rng.random((n, 1)))

    def uniform_dims(self, d):
        return d + 1  # d normals and the coin

    def frequencies_from_uniform(self, U, d):
        return ndtri(U[:, :d]) * self._scales(U[:, d:d + 1])

    def sigma_p2(self, d):
        return d * (1.0 + 1.0 / self.ratio**2) / (2.0 * self.ls**2)

    def _profile(self, r2):
        s = 2.0 * self.ls**2
        return 0.5 * (np.exp(-r2 / s) + np.exp(-r2 / (s * self.ratio**2)))

    def k_of_delta(self, delta):
        return self._profile(np.sum(np.asarray(delta, dtype=np.float64) ** 2, axis=-1))

    def _gram_into(self, X, Y, out):
        out[...] = self._profile(cdist(X, Y, "sqeuclidean"))


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


__all__ = ["StratifiedRFF", "TwoMoons", "TwoScale", "two_moons"]
