"""Kernels that are not shift-invariant and depend on x.y, |x| and |y|: the arc-cosine
kernels (Cho & Saul 2009) and the polynomial kernel."""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from .. import _numba as nbk
from ..checks import Int, Real
from ..errors import ConfigError, DataError
from .base import MAX_KERNEL_VALUE, MEDIAN_SUBSAMPLE, Kernel, TileSpec


class NotShiftInvariant(Kernel):
    """Base of kernels that are not shift-invariant (``shift_invariant = False``): no
    k(delta), no spectral density, so no shift-invariant map, variance formula or bound
    applies to them.  The lengthscale scales the inputs (x / l), median by default as for
    every kernel."""

    shift_invariant = False

    def sigma_p2(self, d):
        return math.nan

    def k_of_delta(self, delta):
        raise TypeError(f"kernel={self.name} is not shift-invariant: it has no k(delta)")

    def sample_frequencies(self, n, d, rng):
        raise ConfigError(f"kernel={self.name} is not shift-invariant: it has no spectral "
                          "density to sample")

    def frequencies_from_uniform(self, U, d):
        self.sample_frequencies(0, d, None)


class DotProductKernel(NotShiftInvariant):
    """Base of kernels of x.y, |x|, |y|: the exact Gram is a GEMM and a numba profile
    pass."""

    PROFILE = None

    def _profile_args(self):
        """(a, b, p) of the numba profile (arc-cosine: a = 1 / l^2)."""
        return 1.0 / self.ls**2, 0.0, 0.0

    def tile_spec(self):
        return TileSpec(nbk.TILE_DOT, 0, self.PROFILE, *self._profile_args())


class ArcCosine0(DotProductKernel):
    """Arc-cosine kernel of order 0 (Cho & Saul 2009): k(x, y) = 1 - theta / pi, theta the angle
    between x and y; features step(w.x), w ~ N(0, I)."""

    name = "arccos0"
    order = 0
    PROFILE = nbk.DOT_ARCCOS0

    def sample_frequencies(self, n, d, rng):
        """Gaussian directions N(0, I / l^2): k(x, y) = 2 E[step(w.x) step(w.y)] (order 0),
        2 E[relu(w.x) relu(w.y)] (order 1)."""
        return rng.standard_normal((n, d)) / self.ls

    def frequencies_from_uniform(self, U, d):
        return ndtri(U[:, :d]) / self.ls


class ArcCosine1(ArcCosine0):
    """Arc-cosine kernel of order 1 (Cho & Saul 2009): k(x, y) = |x||y| (sin theta + (pi - theta)
    cos theta) / pi of x / l, y / l; features relu(w.x), w ~ N(0, I / l^2)."""

    name = "arccos1"
    order = 1
    PROFILE = nbk.DOT_ARCCOS1


class Polynomial(DotProductKernel):
    """Polynomial kernel k(x, y) = (x.y / l^2 + c)^p; scikit-learn's polynomial_kernel with
    gamma = 1/l^2, coef0 = c, degree = p.

    Parameters
    ----------
    degree : int, default 2
        The power p of (x.y / l^2 + coef0)^p.
    coef0 : float, default 1.0
        The constant c of (x.y / l^2 + c)^degree.
    """

    name = "polynomial"
    PROFILE = nbk.DOT_POLY
    constraints = {"degree": Int(1, 20), "coef0": Real(ge=0)}
    GAMMA = (1.0, 2)  # polynomial_kernel, PolynomialCountSketch

    def __init__(self, lengthscale="median", degree=2, coef0=1.0, gamma=None,
                 median_subsample=MEDIAN_SUBSAMPLE, random_state=0):
        super().__init__(lengthscale=lengthscale, gamma=gamma, median_subsample=median_subsample,
                         random_state=random_state)
        self.degree = degree
        self.coef0 = coef0

    def describe(self):
        return f"polynomial(degree={self.degree}, coef0={self.coef0:g})"

    def coefficients(self):
        """a_N of k = sum_N a_N (x.y)^N, N = 0..degree (binomial expansion)."""
        p, c, g = self.degree, float(self.coef0), 1.0 / self.ls**2
        return np.array([math.comb(p, N) * c ** (p - N) * g**N for N in range(p + 1)])

    def _profile_args(self):
        return 1.0 / self.ls**2, float(self.coef0), float(self.degree)

    def check_values(self, radius, what="the data"):
        """|k(x, y)| <= (R^2 / l^2 + c)^p for |x|, |y| <= R (Cauchy-Schwarz): a badly scaled
        run (a small lengthscale, a large coef0, a high degree) would otherwise overflow to
        inf and NaN in the errors and variances without a word."""
        p, c, ls = self.degree, float(self.coef0), self.ls
        log_top = p * math.log10(radius * radius / ls**2 + c) if radius > 0 or c > 0 \
            else -math.inf
        if log_top <= math.log10(MAX_KERNEL_VALUE):
            return
        room = MAX_KERNEL_VALUE ** (1.0 / p)  # the largest R^2 / l^2 + c allowed
        if room > c:
            fix = f"kernel.lengthscale >= {radius / math.sqrt(room - c) * 1.001:.4g}"
        else:  # coef0 alone is too large: half the room for it, half for R^2 / l^2
            ls_min = radius / math.sqrt(room / 2) * 1.001
            fix = f"kernel.coef0 <= {room / 2:.4g}" + (
                f" with kernel.lengthscale >= {ls_min:.4g}" if ls < ls_min else "")
        raise DataError(f"kernel=polynomial(degree={p}, coef0={c:g}, lengthscale={ls:.3g}): its "
                        f"values on {what} (norms up to {radius:.3g}) reach 1e{log_top:.0f}, "
                        f"beyond {MAX_KERNEL_VALUE:g} where the errors' squares and variances "
                        f"overflow; use {fix} or a lower kernel.degree")


#: the kernels this module registers (rffbench.kernels collects them)
KERNELS = (ArcCosine0, ArcCosine1, Polynomial)
