"""Kernels for non-negative data (histograms, counts, pixels): additive chi2, skewed chi2
(Li, Ionescu & Sminchisescu 2010) and the intersection (min) kernel (Maji & Berg 2009)."""
from __future__ import annotations

import numpy as np

from .. import _numba as nbk
from ..checks import Real
from .base import MEDIAN_SUBSAMPLE, Kernel, TileSpec
from .dot_product import NotShiftInvariant


class AdditiveKernel(NotShiftInvariant):
    """Base of the additive kernels of non-negative data, k(x, y) = sum_i f(x_i / l, y_i / l),
    evaluated by the coordinate loop of kind ``KIND`` (a = 1 / l: f is homogeneous of degree
    1)."""

    input_floor_inclusive = True
    KIND = None

    def input_floor(self):
        return 0.0

    def tile_spec(self):
        return TileSpec(nbk.TILE_COORD, self.KIND, nbk.PROFILE_NONE, 1.0 / self.ls)


class AdditiveChi2(AdditiveKernel):
    """Additive chi-squared kernel k(x, y) = sum_i 2 x_i y_i / (x_i + y_i) of x / l, y / l, for
    non-negative data; the kernel scikit-learn's AdditiveChi2Sampler approximates."""

    name = "additive_chi2"
    KIND = nbk.ADDITIVE_CHI2


class Intersection(AdditiveKernel):
    """Intersection (histogram, min) kernel k(x, y) = sum_i min(x_i, y_i) of x / l, y / l,
    for non-negative data (Swain & Ballard 1991; Maji & Berg 2009's additive classifiers)."""

    name = "intersection"
    KIND = nbk.INTERSECTION


class SkewedChi2(Kernel):
    """Skewed chi-squared kernel (Li, Ionescu & Sminchisescu 2010) k(x, y) = prod_i
    sech((log(x_i + c) - log(y_i + c)) / (2 l)); at l = 1 it is scikit-learn's
    prod_i 2 sqrt((x_i + c)(y_i + c)) / (x_i + y_i + 2c), data above -c.

    Shift-invariant in u = log(x + c) (``warp``), with spectral density l sech(pi l w) per
    coordinate: the Fourier maps (rff, rff_pairs, qmc) work on the warped data, the
    variance formulas and bounds hold in u (sigma_p^2 = d / (4 l^2)).

    Parameters
    ----------
    skewedness : float, default 1.0
        c of log(x + c) (scikit-learn's skewedness); the data must be above -c.
    """

    name = "skewed_chi2"
    warps = True

    constraints = {"skewedness": Real(gt=0)}

    def __init__(self, lengthscale="median", skewedness=1.0, gamma=None,
                 median_subsample=MEDIAN_SUBSAMPLE,
                 random_state=0):
        super().__init__(lengthscale=lengthscale, gamma=gamma, median_subsample=median_subsample,
                         random_state=random_state)
        self.skewedness = skewedness

    def describe(self):
        return f"skewed_chi2(skewedness={self.skewedness:g})"

    def input_floor(self):
        return -float(self.skewedness)

    def warp(self, X):
        return np.log(np.asarray(X, dtype=np.float64) + self.skewedness).astype(
            np.asarray(X).dtype, copy=False)

    def sample_frequencies(self, n, d, rng):
        return self.frequencies_from_uniform(rng.random((n, d)), d)

    def frequencies_from_uniform(self, U, d):
        U = np.clip(U[:, :d], 2.0**-53, 1.0 - 2.0**-53)
        return np.log(np.tan(0.5 * np.pi * U)) / (np.pi * self.ls)

    def sigma_p2(self, d):
        return d / (4.0 * self.ls**2)

    def k_of_delta(self, delta):
        """k of a difference of warped coordinates u - v."""
        t = np.asarray(delta, dtype=np.float64) / (2.0 * self.ls)
        with np.errstate(over="ignore"):
            return np.prod(1.0 / np.cosh(t), axis=-1)

    def tile_spec(self):
        return TileSpec(nbk.TILE_COORD, nbk.SECH, nbk.PROFILE_NONE, 0.5 / self.ls)


#: the kernels this module registers (rffbench.kernels collects them)
KERNELS = (AdditiveChi2, SkewedChi2, Intersection)
