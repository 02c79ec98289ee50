"""Kernels that are not shift-invariant and depend on x.y, |x| and |y|: the arc-cosine
kernels (Cho & Saul 2009), the linear, polynomial and exponential dot-product kernels; and
the ANOVA kernel (a sum over coordinate subsets of products)."""
from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import ndtri

from .. import _numba as nbk
from ..checks import Int, Real
from ..errors import ConfigError, RangeError
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


class GaussianDirectionKernel(DotProductKernel):
    """A dot-product kernel that is a Gaussian integral, k(x, y) = c E[g(w.x) g(w.y)] with
    w ~ N(0, I / l^2): the maps that draw Gaussian (or orthogonal, structured) directions
    represent it by sqrt(c / D) g(W x), ``activation`` g (rffbench._numba.ACT_*) and
    ``activation_weight`` c."""

    activation = nbk.ACT_IDENTITY
    activation_weight = 1.0

    def sample_frequencies(self, n, d, rng):
        """Gaussian directions N(0, I / l^2)."""
        return rng.standard_normal((n, d)) / self.ls

    def frequencies_from_uniform(self, U, d):
        return ndtri(U[:, :d]) / self.ls


class Linear(GaussianDirectionKernel):
    """Linear kernel k(x, y) = x.y / l^2 (scikit-learn's linear_kernel at l = 1).  As
    E[(w.x)(w.y)] with w ~ N(0, I / l^2), the Gaussian and structured maps (orf, sorf,
    fastfood, qmc) represent it as random projections (Johnson-Lindenstrauss), and so do
    the sketches (srht, countsketch, gaussian_rp)."""

    name = "linear"
    PROFILE = nbk.DOT_POLY

    def _profile_args(self):
        return 1.0 / self.ls**2, 0.0, 1.0

    def feature_dimension(self, d):
        return d

    def explicit_features(self, X):
        """x / l: x.y / l^2 is their dot product."""
        return np.asarray(X, dtype=np.float64) / self.ls


class ArcCosine0(GaussianDirectionKernel):
    """Arc-cosine kernel of order 0 (Cho & Saul 2009): k(x, y) = 1 - theta / pi, theta the angle
    between x and y; k = 2 E[step(w.x) step(w.y)], w ~ N(0, I / l^2)."""

    name = "arccos0"
    order = 0
    activation = nbk.ACT_STEP
    activation_weight = 2.0
    PROFILE = nbk.DOT_ARCCOS0


class ArcCosine1(ArcCosine0):
    """Arc-cosine kernel of order 1 (Cho & Saul 2009): k(x, y) = |x||y| (sin theta + (pi - theta)
    cos theta) / pi of x / l, y / l; features relu(w.x), w ~ N(0, I / l^2)."""

    name = "arccos1"
    order = 1
    activation = nbk.ACT_RELU
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

    def maclaurin_coefficients(self, radius=None):
        """a_N of k = sum_N a_N (x.y)^N, N = 0..degree (binomial expansion)."""
        p, c, g = self.degree, float(self.coef0), 1.0 / self.ls**2
        return np.array([math.comb(p, N) * c ** (p - N) * g**N for N in range(p + 1)])

    def _profile_args(self):
        return 1.0 / self.ls**2, float(self.coef0), float(self.degree)

    def feature_dimension(self, d):
        """The monomials of degree p of x' = (x / l, sqrt(c)): C(d + p, p) (c = 0: of x / l
        alone, C(d + p - 1, p))."""
        return math.comb(d + (1 if self.coef0 > 0 else 0) + self.degree - 1, self.degree)

    def explicit_features(self, X):
        """(x'.y')^p = sum over multisets A of p coordinates of (p! / prod_i A_i!) x'^A y'^A
        (the multinomial theorem), x' = (x / l, sqrt(c)): one feature sqrt(p! / prod A_i!) x'^A
        per multiset A."""
        X = np.asarray(X, dtype=np.float64) / self.ls
        if self.coef0 > 0:
            X = np.hstack([X, np.full((X.shape[0], 1), math.sqrt(float(self.coef0)))])
        p = int(self.degree)
        sets = np.array(list(itertools.combinations_with_replacement(range(X.shape[1]), p)),
                        dtype=np.intp).reshape(-1, p)
        weights = np.array([math.sqrt(math.factorial(p) / math.prod(
            math.factorial(c) for c in np.unique(A, return_counts=True)[1])) for A in sets])
        out = X[:, sets[:, 0]] * weights
        for t in range(1, p):
            out *= X[:, sets[:, t]]
        return out

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
            fix = self.lengthscale_advice(radius / math.sqrt(room - c) * 1.001)
        else:  # coef0 alone is too large: half the room for it, half for R^2 / l^2
            ls_min = radius / math.sqrt(room / 2) * 1.001
            fix = f"kernel.coef0 <= {room / 2:.4g}" + (
                f" with {self.lengthscale_advice(ls_min)}" if ls < ls_min else "")
        raise RangeError(f"kernel=polynomial(degree={p}, coef0={c:g}, {self.scale_text()}): its "
                        f"values on {what} (norms up to {radius:.3g}) reach 1e{log_top:.0f}, "
                        f"beyond {MAX_KERNEL_VALUE:g} where the errors' squares and variances "
                        f"overflow; use {fix} or a lower kernel.degree")


class ExponentialDot(DotProductKernel):
    """Exponential dot-product kernel k(x, y) = exp(x.y / l^2), gamma = 1 / l^2: the kernel
    Random Maclaurin features were made for (Kar & Karnick 2012), a_N = gamma^N / N!; the
    Gaussian kernel is exp(-|x|^2 / 2l^2) exp(-|y|^2 / 2l^2) times it."""

    name = "exp_dot"
    PROFILE = nbk.DOT_EXP
    GAMMA = (1.0, 2)
    #: the Maclaurin series is cut where its tail is below this fraction of exp(gamma R^2)
    SERIES_TAIL = 1e-16

    def _profile_args(self):
        return 1.0 / self.ls**2, 0.0, 0.0

    def maclaurin_coefficients(self, radius):
        """a_N = gamma^N / N! for N = 0..P, P the first degree whose tail sum_(N > P)
        (gamma R^2)^N / N! is below SERIES_TAIL exp(gamma R^2) for |x|, |y| <= R = radius:
        the series cut below float64's resolution of the largest kernel value."""
        g = 1.0 / self.ls**2
        lam = g * float(radius) ** 2
        log_lam = math.log(lam) if lam > 0 else -math.inf
        N = 1
        # the tail after N is below 2 lam^(N+1) / (N+1)! once N + 2 > 2 lam (a geometric
        # series of ratio <= 1/2); in logs, so that no large lam overflows
        while N < 1000 and not (N + 2 > 2 * lam and math.log(2.0) + (N + 1) * log_lam
                                - math.lgamma(N + 2) <= math.log(self.SERIES_TAIL) + lam):
            N += 1
        n = np.arange(N + 1)
        with np.errstate(over="ignore", divide="ignore"):
            return np.exp(n * math.log(g) - np.array([math.lgamma(k + 1) for k in n]))

    def check_values(self, radius, what="the data"):
        """exp(x.y / l^2) <= exp(R^2 / l^2): refused beyond MAX_KERNEL_VALUE (overflow of
        the errors' squares and variances), naming the lengthscale that fits."""
        ls = self.ls
        top = radius * radius / ls**2
        if top <= math.log(MAX_KERNEL_VALUE):
            return
        fix = radius / math.sqrt(math.log(MAX_KERNEL_VALUE)) * 1.001
        raise RangeError(f"kernel=exp_dot({self.scale_text()}): its values on {what} (norms "
                        f"up to {radius:.3g}) reach exp({top:.3g}), beyond "
                        f"{MAX_KERNEL_VALUE:g} where the errors' squares and variances "
                        f"overflow; use {self.lengthscale_advice(fix)}")


class Anova(NotShiftInvariant):
    """ANOVA kernel of degree p: k(x, y) = sum over the coordinate sets k_1 < ... < k_p of
    prod_t x_kt y_kt / l^2, the elementary symmetric polynomial e_p of the products x_k y_k
    (Blondel et al. 2016's factorization machines' kernel; random features: pyrfm's
    RandomKernel, E e_p(r * x) e_p(r * y) = k for Rademacher r).  Exact Gram by the
    recursion over the coordinates, O(n m d p).

    Parameters
    ----------
    degree : int, default 2
        p, the size of the coordinate sets (at most d).
    """

    name = "anova"
    constraints = {"degree": Polynomial.constraints["degree"]}  # one key: kernel.degree

    def __init__(self, lengthscale="median", degree=2, gamma=None,
                 median_subsample=MEDIAN_SUBSAMPLE, random_state=0):
        super().__init__(lengthscale=lengthscale, gamma=gamma, median_subsample=median_subsample,
                         random_state=random_state)
        self.degree = degree

    def describe(self):
        return f"anova(degree={self.degree})"

    def check_domain(self, X, what="the data"):
        """Also refuses a degree above the data's dimension (no coordinate set: k = 0)."""
        super().check_domain(X, what)
        d = None if X is None else X.shape[1]
        if d is not None and int(self.degree) > d:
            raise ConfigError(f"kernel.degree={int(self.degree)} is not allowed for kernel=anova "
                              f"on {what} with d={d} ({d} feature(s)): use a degree in [1, {d}] "
                              "(a degree above d sums over no coordinate set: k = 0 everywhere)")

    def _gram_into(self, X, Y, out):
        nbk.anova_gram(X, np.ascontiguousarray(Y.T), int(self.degree),
                       float(self.ls) ** (-2 * int(self.degree)), out)

    def check_values(self, radius, what="the data"):
        """|k| <= e_p(|x| * |y|) / l^(2p) <= (R^2 / l^2)^p / p! (Maclaurin's inequality):
        refused beyond MAX_KERNEL_VALUE."""
        p, ls = int(self.degree), self.ls
        if radius <= 0:
            return
        log_top = p * math.log10(radius * radius / ls**2) - math.lgamma(p + 1) / math.log(10)
        if log_top <= math.log10(MAX_KERNEL_VALUE):
            return
        fix = radius / math.sqrt((MAX_KERNEL_VALUE * math.factorial(p)) ** (1.0 / p)) * 1.001
        raise RangeError(f"kernel=anova(degree={p}, {self.scale_text()}): its values on {what} "
                        f"(norms up to {radius:.3g}) reach 1e{log_top:.0f}, beyond "
                        f"{MAX_KERNEL_VALUE:g}; use {self.lengthscale_advice(fix)}")


#: the kernels this module registers (rffbench.kernels collects them)
KERNELS = (Linear, ArcCosine0, ArcCosine1, Polynomial, ExponentialDot, Anova)
