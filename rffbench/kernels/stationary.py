"""Shift-invariant kernels k(x, y) = k(x - y) (Bochner): Gaussian, Laplacian, Cauchy,
Matern, rational quadratic and hyperbolic secant, each with its spectral sampler and
sigma_p^2."""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from .. import _numba as nbk
from ..checks import OneOf, Real
from .base import MEDIAN_SUBSAMPLE, Kernel, TileSpec, sqdist_gram


class Gaussian(Kernel):
    """k(delta) = exp(-|delta|^2 / (2 l^2)); sklearn's rbf_kernel with gamma = 1/(2 l^2)."""

    name = "gaussian"

    GAMMA = (0.5, 2)  # rbf_kernel, RBFSampler

    def sample_frequencies(self, n, d, rng):
        return rng.standard_normal((n, d)) / self.ls

    def frequencies_from_uniform(self, U, d):
        return ndtri(U) / self.ls

    def sigma_p2(self, d):
        return d / self.ls**2

    def k_of_delta(self, delta):
        delta = np.asarray(delta, dtype=np.float64)
        with np.errstate(over="ignore"):  # an overflowing square is a kernel value of 0
            return np.exp(-np.sum(delta**2, axis=-1) / (2.0 * self.ls**2))

    def tile_spec(self):
        return TileSpec(nbk.TILE_SQDIST, profile=nbk.PROFILE_EXP, a=0.5 / self.ls**2)


class Laplacian(Kernel):
    """k(delta) = exp(-|delta|_1 / l); sklearn's laplacian_kernel with gamma = 1/l."""

    name = "laplacian"
    metric = "l1"

    GAMMA = (1.0, 1)  # laplacian_kernel

    def sample_frequencies(self, n, d, rng):
        return rng.standard_cauchy((n, d)) / self.ls

    def frequencies_from_uniform(self, U, d):
        return np.tan(np.pi * (U - 0.5)) / self.ls  # Cauchy(0, 1/l) per coordinate

    def sigma_p2(self, d):
        return math.inf

    def k_of_delta(self, delta):
        delta = np.asarray(delta, dtype=np.float64)
        with np.errstate(over="ignore"):
            return np.exp(-np.sum(np.abs(delta), axis=-1) / self.ls)

    def tile_spec(self):
        return TileSpec(nbk.TILE_COORD, nbk.L1DIST, nbk.PROFILE_EXP, 1.0 / self.ls)


class Cauchy(Kernel):
    """k(delta) = prod_j 1 / (1 + delta_j^2 / l^2) (product Cauchy kernel, k(0) = 1)."""

    name = "cauchy"

    def sample_frequencies(self, n, d, rng):
        return rng.laplace(0.0, 1.0 / self.ls, (n, d))

    def frequencies_from_uniform(self, U, d):
        c = U - 0.5  # Laplace(0, 1/l) per coordinate
        return -np.sign(c) * np.log1p(-2.0 * np.abs(c)) / self.ls

    def sigma_p2(self, d):
        return 2.0 * d / self.ls**2

    def k_of_delta(self, delta):
        delta = np.asarray(delta, dtype=np.float64)
        with np.errstate(over="ignore"):
            return np.prod(1.0 / (1.0 + delta**2 / self.ls**2), axis=-1)

    def tile_spec(self):
        return TileSpec(nbk.TILE_COORD, nbk.CAUCHY, nbk.PROFILE_NONE, 1.0 / self.ls**2)


class Matern(Kernel):
    """Matern kernel, nu in {0.5, 1.5, 2.5} (sklearn/GPML form, Euclidean r).

    Parameters
    ----------
    nu : float, default 1.5
        Smoothness, one of 0.5 (exponential), 1.5, 2.5; sigma_p^2 is finite only for nu > 1.
    """

    name = "matern"
    NUS = (0.5, 1.5, 2.5)
    constraints = {"nu": OneOf(NUS)}

    def __init__(self, lengthscale="median", nu=1.5, gamma=None, median_subsample=MEDIAN_SUBSAMPLE,
                 random_state=0):
        super().__init__(lengthscale=lengthscale, gamma=gamma, median_subsample=median_subsample,
                         random_state=random_state)
        self.nu = nu

    def describe(self):
        return f"matern(nu={self.nu})"

    def sample_frequencies(self, n, d, rng):
        z = rng.standard_normal((n, d))
        g = rng.chisquare(2.0 * self.nu, size=(n, 1))
        return z * np.sqrt(2.0 * self.nu / g) / self.ls

    def uniform_dims(self, d):
        return d + 1  # Gaussian scale mixture: d normals and one chi-square

    def frequencies_from_uniform(self, U, d):
        from scipy.stats import chi2

        g = chi2.ppf(U[:, d:d + 1], 2.0 * self.nu)
        return ndtri(U[:, :d]) * np.sqrt(2.0 * self.nu / g) / self.ls

    def sigma_p2(self, d):
        if self.nu <= 1.0:
            return math.inf
        return d / self.ls**2 * self.nu / (self.nu - 1.0)

    def k_of_delta(self, delta):
        with np.errstate(over="ignore"):
            r = np.sqrt(np.sum(np.asarray(delta, dtype=np.float64) ** 2, axis=-1))
            # capped where exp(-t) is 0: the polynomial must not reach inf (inf * 0)
            t = np.minimum(math.sqrt(2.0 * self.nu) * r / self.ls, nbk.MATERN_T_MAX)
        if self.nu == 0.5:
            return np.exp(-t)
        if self.nu == 1.5:
            return (1.0 + t) * np.exp(-t)
        return (1.0 + t + t * t / 3.0) * np.exp(-t)

    def tile_spec(self):
        """nu = 1/2 takes sqrt(|x - y|^2): a GEMM's cancellation (~1e-16 |x|^2) would
        become ~1e-8 after the sqrt, so its distances come from the exact loop."""
        profile = {0.5: nbk.PROFILE_EXP_SQRT, 1.5: nbk.PROFILE_MATERN15,
                   2.5: nbk.PROFILE_MATERN25}[self.nu]
        a = math.sqrt(2.0 * self.nu) / self.ls
        if self.nu == 0.5:
            return TileSpec(nbk.TILE_COORD, nbk.SQDIST, profile, a)
        return TileSpec(nbk.TILE_SQDIST, profile=profile, a=a)


class RationalQuadratic(Kernel):
    """Rational quadratic kernel k(delta) = (1 + |delta|^2 / (2 alpha l^2))^-alpha,
    scikit-learn's ``RationalQuadratic(length_scale=l, alpha=alpha)``.

    A Gaussian scale mixture: with tau ~ Gamma(alpha, rate alpha) and omega | tau ~
    N(0, tau I / l^2), E exp(-tau |delta|^2 / (2 l^2)) = k(delta), so the frequencies are
    z sqrt(tau) / l and sigma_p^2 = E|omega|^2 = d / l^2 (E tau = 1).  alpha -> inf gives
    the Gaussian kernel.

    Parameters
    ----------
    alpha : float, default 2.0
        The scale-mixture shape (> 0): small alpha, heavy tails (many lengthscales mixed);
        large alpha, close to the Gaussian kernel.
    """

    name = "rational_quadratic"
    constraints = {"alpha": Real(gt=0)}

    def __init__(self, lengthscale="median", alpha=2.0, gamma=None,
                 median_subsample=MEDIAN_SUBSAMPLE, random_state=0):
        super().__init__(lengthscale=lengthscale, gamma=gamma, median_subsample=median_subsample,
                         random_state=random_state)
        self.alpha = alpha

    def describe(self):
        return f"rational_quadratic(alpha={self.alpha:g})"

    def sample_frequencies(self, n, d, rng):
        tau = rng.gamma(self.alpha, 1.0 / self.alpha, size=(n, 1))
        return rng.standard_normal((n, d)) * np.sqrt(tau) / self.ls

    def uniform_dims(self, d):
        return d + 1  # d normals and the mixture's Gamma variable

    def frequencies_from_uniform(self, U, d):
        from scipy.stats import gamma

        tau = gamma.ppf(U[:, d:d + 1], self.alpha, scale=1.0 / self.alpha)
        return ndtri(U[:, :d]) * np.sqrt(tau) / self.ls

    def sigma_p2(self, d):
        return d / self.ls**2

    def k_of_delta(self, delta):
        r2 = np.sum(np.asarray(delta, dtype=np.float64) ** 2, axis=-1)
        with np.errstate(over="ignore"):
            return np.exp(-self.alpha * np.log1p(r2 / (2.0 * self.alpha * self.ls**2)))

    def _gram_into(self, X, Y, out):
        """Squared distances by the compiled Gram code (profile: none), then the power in
        place: no profile code of the tiles has a second parameter, so the kernel takes
        this hook instead of a tile spec (its products go tile by tile through it)."""
        sqdist_gram(X, Y, out, TileSpec(nbk.TILE_SQDIST, profile=nbk.PROFILE_NONE))
        np.maximum(out, 0.0, out=out)  # a GEMM's cancellation can leave -1e-16
        out *= 1.0 / (2.0 * self.alpha * self.ls**2)
        # exp(-alpha log1p(s)): 1 + s rounded would carry an error alpha * eps into k
        np.log1p(out, out=out)
        out *= -float(self.alpha)
        np.exp(out, out=out)


class Sech(Kernel):
    """k(delta) = prod_j sech(delta_j / l), the hyperbolic secant kernel.

    Its spectral density is a hyperbolic secant too: each coordinate of omega has density
    (l / 2) sech(pi l w / 2) (the Fourier pair sech(t) <-> pi sech(pi w / 2)), whose tails
    fall exponentially: between the Gaussian kernel's (faster) and the Laplacian's (Cauchy,
    no second moment). So sigma_p^2 = d / l^2 is finite while the kernel itself, like the
    Laplacian, decays exponentially, analytic at 0 where the Laplacian has a cusp: a smooth
    kernel with a heavier-tailed spectrum than the Gaussian, for the bounds and maps that need
    sigma_p^2. Sampled by the inverse CDF, omega = (2 / (pi l)) log tan(pi u / 2).
    """

    name = "sech"

    def sample_frequencies(self, n, d, rng):
        return self.frequencies_from_uniform(rng.random((n, d)), d)

    def frequencies_from_uniform(self, U, d):
        U = np.clip(np.asarray(U, dtype=np.float64), 1e-300, 1.0 - 2.0**-53)
        return 2.0 / (np.pi * self.ls) * np.log(np.tan(0.5 * np.pi * U))

    def sigma_p2(self, d):
        return d / self.ls**2  # the standard hyperbolic secant law has variance 1

    def k_of_delta(self, delta):
        t = np.abs(np.asarray(delta, dtype=np.float64)) / self.ls
        with np.errstate(over="ignore"):
            return np.prod(2.0 * np.exp(-t) / (1.0 + np.exp(-2.0 * t)), axis=-1)

    def tile_spec(self):
        return TileSpec(nbk.TILE_COORD, nbk.SECH, nbk.PROFILE_NONE, 1.0 / self.ls)


#: the kernels this module registers (rffbench.kernels collects them)
KERNELS = (Gaussian, Laplacian, Cauchy, Matern, RationalQuadratic, Sech)
