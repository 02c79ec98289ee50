"""Shift-invariant kernels: exact Gram, k(delta), spectral sampler, sigma_p^2.

``KERNELS`` maps the config name to the class.  All kernels are normalised,
k(0) = 1, and parametrised by a lengthscale ``l`` (docs/theory.md, section 4):

=============  ====================================  ==============================  =================
name           k(delta)                              frequencies omega               sigma_p^2 = E|w|^2
=============  ====================================  ==============================  =================
gaussian       exp(-|delta|_2^2 / (2 l^2))           N(0, I / l^2)                   d / l^2
laplacian      exp(-|delta|_1 / l)                   each coordinate Cauchy(0, 1/l)  inf
cauchy         prod_j 1 / (1 + delta_j^2 / l^2)      each coordinate Laplace(0, 1/l) 2 d / l^2
matern (nu)    2^(1-nu)/Gamma(nu) (sqrt(2 nu) r/l)^nu  z sqrt(2 nu / g) / l,          d nu / ((nu-1) l^2)
               K_nu(sqrt(2 nu) r / l), r = |delta|_2   z ~ N(0, I), g ~ chi2(2 nu)     (inf for nu <= 1)
=============  ====================================  ==============================  =================

Note the swap: the *Laplacian* kernel has Cauchy frequencies, the *Cauchy*
kernel Laplace frequencies.

``lengthscale`` is a positive number, ``"median"`` (the default, in Python
as on the command line): the median pairwise distance, in the kernel's own
metric (L1 for ``laplacian``, L2 otherwise), of a seeded subsample of at most
``median_subsample`` training points, or ``"knn<k>"`` (e.g. ``knn50``): the mean
distance of those points to their k-th nearest neighbour among them (the bandwidth
rule of Yu et al. 2016's ORF experiments: k = 50 on 1000 points); a rule is
resolved by :meth:`Kernel.fit` into ``lengthscale_``.  ``gamma`` is scikit-learn's parameter, an alternative to the
lengthscale where scikit-learn has the kernel: ``gaussian`` gamma = 1/(2 l^2)
(``rbf_kernel``, ``RBFSampler``), ``laplacian`` gamma = 1/l
(``laplacian_kernel``); giving both gamma and a numeric lengthscale is an error.

Kernels are callables, ``k(X, Y)`` = the Gram matrix, so a fitted kernel can be
given to scikit-learn estimators that take one (``SVC(kernel=k)``).

``KERNELS`` is a :class:`~rffbench.registry.Registry`: plug-ins add kernels
through the entry-point group ``rffbench.kernels`` (subclasses of Kernel).
"""
from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import pdist
from scipy.special import ndtri
from sklearn.base import BaseEstimator, clone

from . import _numba as nbk
from .checks import Int, OneOf, Real, check_constraints, declared
from .errors import ConfigError, DataError
from .registry import Registry, subclass_check

#: d at or below which the squared Euclidean distance is computed directly
#: (exact, vectorised over the output row) instead of through a BLAS GEMM.
DIRECT_SQDIST_MAX_D = 16
#: rows of X per block of the GEMM path (bounds the cache footprint).
GRAM_BLOCK_ROWS = 1024


def _as_float_2d(X, name="X"):
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d (n_samples, n_features), got shape {X.shape}")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return np.ascontiguousarray(X)


#: allowed lengthscales: 1/l^2, l^2, d/l^2 and |x - y|^2 / l^2 (data within
#: rffbench.datasets.MAX_ABS_VALUE) stay inside float64's range
LENGTHSCALE_RANGE = (1e-100, 1e100)


def data_rule(ls):
    """("median", None) or ("knn", k) for a lengthscale resolved from the data, else None."""
    if ls == "median":
        return "median", None
    if isinstance(ls, str) and ls.startswith("knn") and ls[3:].isdigit() and int(ls[3:]) >= 1:
        return "knn", int(ls[3:])
    return None


def check_lengthscale(ls, median_of=None):
    """'median', 'knn<k>' or a float in ``LENGTHSCALE_RANGE`` (numeric strings accepted);
    ConfigError otherwise.  ``median_of`` (a description of the data) marks a
    lengthscale that a data rule resolved.

    The one rule for ``kernel.lengthscale``, used by the config and by Kernel.fit."""
    if isinstance(ls, str) and data_rule(ls) is None:
        try:
            ls = float(ls)
        except ValueError:
            pass
    if data_rule(ls) is not None:
        return ls
    lo, hi = LENGTHSCALE_RANGE
    if not isinstance(ls, numbers.Real) or isinstance(ls, bool) or not math.isfinite(ls) \
            or not lo <= ls <= hi:
        if median_of is not None:
            raise DataError(f"kernel.lengthscale resolved to {ls:.3g} on {median_of}, "
                            f"outside {lo:g}..{hi:g} (where the "
                            "kernel's squares and inverses stay in float64's range); rescale "
                            "the data (e.g. dataset.scale=standardize)")
        raise ConfigError(f"kernel.lengthscale={ls!r} is not allowed: use a number in "
                          f"{lo:g}..{hi:g}, 'median' or 'knn<k>' (e.g. knn50)")
    return float(ls)


#: kernel.median_subsample's default: the training points the median and knn rules sample
MEDIAN_SUBSAMPLE = 1000

#: the largest |k(x, y)| a run accepts (Kernel.check_values): the measurements square
#: kernel values and take fourth powers of estimates' deviations (sample variances)
MAX_KERNEL_VALUE = 1e60


class Kernel(BaseEstimator):
    """Base class.  Subclasses set ``name``, ``metric`` and implement the
    spectral pieces.  Estimator-style so that feature maps can hold a kernel
    as a parameter and be cloned."""

    name = "kernel"
    metric = "euclidean"  # distance used by the median heuristic
    #: k(x, y) = k(x - y) with a spectral density (Bochner): the Fourier maps, the
    #: variance formulas and the published bounds hold only for these
    shift_invariant = True

    #: the values of the kernel's own parameters (rffbench.checks), checked by fit and
    #: by the config (kernel.NAME / kernel.params.NAME); a subclass adds its own
    constraints = {"median_subsample": Int(2)}

    @classmethod
    def all_constraints(cls):
        """The constraints of this class and its bases (:func:`rffbench.checks.declared`)."""
        return declared(cls)

    def __init__(self, lengthscale="median", gamma=None, median_subsample=MEDIAN_SUBSAMPLE, random_state=0):
        self.lengthscale = lengthscale
        self.gamma = gamma
        self.median_subsample = median_subsample
        self.random_state = random_state

    # -- parameters --------------------------------------------------------
    #: scikit-learn's gamma = c / l^p as (c, p); None: scikit-learn has no such
    #: kernel and gamma is refused
    GAMMA = None

    @classmethod
    def gamma_of(cls, lengthscale):
        """scikit-learn's gamma for a lengthscale (None where it has none)."""
        return None if cls.GAMMA is None else cls.GAMMA[0] / lengthscale ** cls.GAMMA[1]

    @classmethod
    def lengthscale_of(cls, gamma):
        """The lengthscale with scikit-learn's ``gamma`` (ConfigError where there is none)."""
        if cls.GAMMA is None:
            raise ConfigError(f"kernel.gamma={gamma!r} is not allowed for kernel={cls.name}: "
                              "scikit-learn has no gamma for it; use kernel.lengthscale")
        if not isinstance(gamma, numbers.Real) or isinstance(gamma, bool) \
                or not math.isfinite(gamma) or gamma <= 0:
            raise ConfigError(f"kernel.gamma={gamma!r} is not allowed: use a number > 0 "
                              "(or null and kernel.lengthscale)")
        c, p = cls.GAMMA
        return math.exp((math.log(c) - math.log(gamma)) / p)  # (c / gamma)^(1/p), no overflow

    def fit(self, X, y=None):
        """Check the parameters (:meth:`all_constraints`) and resolve the lengthscale: a
        number, scikit-learn's ``gamma``, or the median pairwise distance of ``X`` (dense
        or scipy.sparse)."""
        check_constraints(self, "kernel", self.all_constraints())
        ls = check_lengthscale(self.lengthscale)
        if self.gamma is not None:
            if ls != "median":
                raise ConfigError(f"kernel.gamma={self.gamma!r} and kernel.lengthscale={ls!r} "
                                  "are both given: set one of them (the other to null/median)")
            ls = self.lengthscale_of(self.gamma)
            lo, hi = LENGTHSCALE_RANGE
            if not lo <= ls <= hi:
                raise ConfigError(f"kernel.gamma={self.gamma!r} is not allowed: it is a "
                                  f"lengthscale of {ls:.3g}, outside {lo:g}..{hi:g}")
        rule = data_rule(ls) if self.gamma is None else None
        if rule is None and self.median_subsample != MEDIAN_SUBSAMPLE:
            raise ConfigError(f"kernel.median_subsample={self.median_subsample!r} is not "
                              "allowed: it has no effect here (" + (
                                  f"kernel.lengthscale={ls!r} is a number" if self.gamma is None
                                  else "kernel.gamma is set") + ": no median or knn rule "
                              f"samples training points); leave it at its default "
                              f"{MEDIAN_SUBSAMPLE}")
        if rule is not None:
            if X is None:
                raise RuntimeError(f"{self.name} kernel with lengthscale={ls!r} must be fit "
                                   "on data first")
            X = X if sp.issparse(X) else np.asarray(X)
            n = X.shape[0]
            need = 2 if rule[0] == "median" else rule[1] + 1
            if n < need or (rule[0] == "knn" and self.median_subsample < need):
                raise DataError(f"kernel.lengthscale={ls!r} needs at least {need} points, got "
                                f"{min(n, self.median_subsample)} sample(s) (the training "
                                "rows, at most kernel.median_subsample); give a numeric "
                                "lengthscale or gamma" + (" or a smaller k" if rule[0] == "knn"
                                                          else ""))
            rng = np.random.default_rng(self.random_state)
            if n > self.median_subsample:
                X = X[np.sort(rng.choice(n, self.median_subsample, replace=False))]
            X = _as_float_2d(X.toarray() if sp.issparse(X) else X)
            self.check_domain(X, "the training data")
            dist = pdist(self.warp(X).astype(np.float64),
                         metric="cityblock" if self.metric == "l1" else "euclidean")
            if rule[0] == "median":
                value = float(np.median(dist))
            else:  # the mean over the points of the distance to their k-th nearest neighbour
                from scipy.spatial.distance import squareform

                sq = squareform(dist)
                value = float(np.mean(np.partition(sq, rule[1], axis=1)[:, rule[1]]))
            if not value > 0:
                raise DataError(f"kernel.lengthscale={ls!r} is 0: the data has (almost) "
                                "only duplicate points; set kernel.lengthscale to a number")
            self.lengthscale_ = check_lengthscale(
                value, median_of=f"{X.shape[0]} training points ({ls})")
        else:
            self.lengthscale_ = ls
        return self

    @property
    def ls(self):
        """The resolved lengthscale (fit() is implied for numeric lengthscales)."""
        if not hasattr(self, "lengthscale_"):
            self.fit(None)
        return self.lengthscale_

    @property
    def gamma_(self):
        """scikit-learn's gamma of the resolved lengthscale (None where it has none)."""
        return self.gamma_of(self.ls)

    def __call__(self, X, Y=None):
        """The Gram matrix k(X, Y), for estimators that take a kernel callable."""
        return self.gram(X, Y)

    def describe(self):
        """Short identifying string, e.g. 'matern(nu=1.5)'."""
        return self.name

    # -- spectral side -----------------------------------------------------
    def sample_frequencies(self, n, d, rng):
        """n frequencies omega ~ p, shape (n, d), drawn with a numpy Generator."""
        raise NotImplementedError

    def uniform_dims(self, d):
        """Uniform coordinates :meth:`frequencies_from_uniform` needs per frequency."""
        return d

    def frequencies_from_uniform(self, U, d):
        """Frequencies omega ~ p from points U in (0, 1)^uniform_dims(d), by the
        inverse CDF (a measure-preserving map: i.i.d. uniform U gives i.i.d.
        omega; low-discrepancy U gives quasi-Monte Carlo frequencies)."""
        raise NotImplementedError

    def sigma_p2(self, d):
        """E|omega|^2 of the spectral density in dimension d (may be inf)."""
        raise NotImplementedError

    # -- exact side --------------------------------------------------------
    def k_of_delta(self, delta):
        """Reference k(delta) in numpy; delta has shape (..., d)."""
        raise NotImplementedError

    # -- inputs ------------------------------------------------------------
    #: the kernel is shift-invariant in warp(x), not in x (skewed chi2: log(x + c))
    warps = False
    #: smallest allowed input value, exclusive (-inf: any real data)
    def input_floor(self):
        return -math.inf

    def warp(self, X):
        """The coordinates in which the kernel is shift-invariant (identity by default)."""
        return X

    def check_domain(self, X, what="the data"):
        """DataError if X (dense or sparse) has values at or below the kernel's floor."""
        floor = self.input_floor()
        if floor == -math.inf or X is None:
            return
        vals = X.data if sp.issparse(X) else np.asarray(X)
        lo = float(vals.min()) if vals.size else 0.0
        if sp.issparse(X) and X.nnz < np.prod(X.shape):
            lo = min(lo, 0.0)  # the implicit zeros
        if not (lo > floor or (self.input_floor_inclusive and lo >= floor)):
            need = "non-negative data" if floor == 0 and self.input_floor_inclusive else \
                f"data above {floor:g}"
            raise DataError(f"kernel={self.name} needs {need} (histograms, counts, pixel "
                            f"values). Negative values in data: {what} has {lo:.4g}; set "
                            "dataset.scale=none or max (z-scores are negative) or use "
                            "non-negative data")

    #: the floor itself is allowed (additive chi2: x >= 0)
    input_floor_inclusive = False

    def check_values(self, radius, what="the data"):
        """DataError if the kernel's values on data of norm <= ``radius`` leave the range
        where the measurements' squares and fourth powers (sample variances of estimates)
        stay finite (|k| <= MAX_KERNEL_VALUE).  Kernels bounded by 1 (every shift-invariant
        one) have nothing to check; see Polynomial."""

    def gram(self, X, Y=None):
        """Exact Gram matrix K[i, j] = k(X[i], Y[j]) by numba (parallel, blocked).

        Output dtype is float32 when X is float32, else float64.
        """
        return self._gram(X, Y, 1.0)

    def gram_twice(self, X, Y=None):
        """k at twice the (warped) difference, k(2 (u - v)): the variance formulas' k(2 delta)
        (shift-invariant kernels only)."""
        return self._gram(X, Y, 2.0)

    def inputs(self, X, name="X", dtype=None):
        """X as the numba Gram code (``_gram_into``) takes it: dense, 2-d, float (``dtype``
        if given), checked against the kernel's domain, warped, C-contiguous.  Blocked
        callers (rffbench.exact) prepare their rows once with it."""
        X = _as_float_2d(X, name)
        if dtype is not None and X.dtype != dtype:
            X = X.astype(dtype)
        self.check_domain(X)
        return np.ascontiguousarray(self.warp(X))

    def _gram(self, X, Y, factor):
        X = _as_float_2d(X)
        Ya = None if Y is None else _as_float_2d(Y, "Y")
        if Ya is not None and X.shape[1] != Ya.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features but Y has {Ya.shape[1]}")
        X = self.inputs(X)
        Y = X if Ya is None else self.inputs(Ya, "Y", X.dtype)
        out = np.empty((X.shape[0], Y.shape[0]), dtype=X.dtype)
        if out.size:
            if factor != 1.0:
                X, Y = factor * X, factor * Y
            self._gram_into(X, Y, out)
        return out

    def tile_spec(self):
        """How the numba code evaluates this kernel (a :class:`TileSpec`), or None: a
        kernel without one (a plug-in) implements ``_gram_into`` and its products go
        tile by tile through it."""
        return None

    def _gram_into(self, X, Y, out):
        """out <- K(X, Y) for rows prepared by ``inputs``, from the kernel's tile spec."""
        spec = self.tile_spec()
        if spec is None:
            raise NotImplementedError(f"{type(self).__name__} has neither tile_spec nor "
                                      "_gram_into")
        if spec.tile == nbk.TILE_COORD:
            nbk.coordinate_gram(X, np.ascontiguousarray(Y.T), out, spec.kind, spec.profile,
                                spec.a)
        elif spec.tile == nbk.TILE_SQDIST:
            _sqdist_gram(X, Y, out, spec)
        else:
            _dot_gram(X, Y, out, spec)


class TileSpec(NamedTuple):
    """A kernel as the numba Gram and kernel-product code evaluates it: ``tile`` is
    TILE_SQDIST (f(|x - y|^2) from a GEMM: profile, a), TILE_DOT (f(x.y, |x|, |y|) from a
    GEMM: profile DOT_*, a, b, p) or TILE_COORD (the exact coordinate loop: kind SQDIST,
    L1DIST, CAUCHY, ADDITIVE_CHI2 or SECH, profile, a)."""

    tile: int
    kind: int = 0
    profile: int = 0
    a: float = 0.0
    b: float = 0.0
    p: float = 0.0

    def aux(self, X, dtype=None):
        """Per-row numbers the tile code takes: squared norms (TILE_SQDIST), norms times
        sqrt(a) (TILE_DOT: |x| / l), else none; computed in float64, returned in
        ``dtype`` (default X's precision)."""
        if self.tile == nbk.TILE_COORD:
            return np.zeros(X.shape[0], dtype=dtype or X.dtype)
        sq = np.einsum("ij,ij->i", X, X, dtype=np.float64)
        if self.tile == nbk.TILE_DOT:
            sq = np.sqrt(sq) * math.sqrt(self.a)
        return sq.astype(dtype or X.dtype, copy=False)


def _dot_gram(X, Y, out, spec):
    Yt = np.ascontiguousarray(Y.T)
    for s in range(0, X.shape[0], GRAM_BLOCK_ROWS):
        np.matmul(X[s:s + GRAM_BLOCK_ROWS], Yt, out=out[s:s + GRAM_BLOCK_ROWS])
    nbk.dot_profile_inplace(out, spec.aux(X, np.float64), spec.aux(Y, np.float64),
                            spec.profile, spec.a, spec.b, spec.p)


def _sqdist_gram(X, Y, out, spec):
    """Squared Euclidean distances followed by the spec's profile, into ``out``: exact
    (the coordinate loop) up to DIRECT_SQDIST_MAX_D coordinates, else |x|^2 + |y|^2 -
    2 x.y through a GEMM, whose cancellation error (~1e-16 |x|^2) is harmless for
    profiles smooth in s = d^2 (Matern 1/2, which is not, takes the coordinate loop
    through its spec at every d)."""
    if X.shape[1] <= DIRECT_SQDIST_MAX_D:
        nbk.coordinate_gram(X, np.ascontiguousarray(Y.T), out, nbk.SQDIST, spec.profile,
                            spec.a)
        return
    xsq, ysq = spec.aux(X, np.float64), spec.aux(Y, np.float64)
    Yt = np.ascontiguousarray(Y.T)  # X @ Y.T through GEMM, not SYRK + symmetrisation
    for s in range(0, X.shape[0], GRAM_BLOCK_ROWS):
        e = min(s + GRAM_BLOCK_ROWS, X.shape[0])
        np.matmul(X[s:e], Yt, out=out[s:e])
        nbk.sqdist_from_gemm_profile(out[s:e], xsq[s:e], ysq, spec.profile, spec.a)


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
    """Matern kernel, nu in {0.5, 1.5, 2.5} (sklearn/GPML form, Euclidean r)."""

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


# --------------------------------------------------------------------------
# kernels that are not shift-invariant: functions of x.y, |x| and |y|
# --------------------------------------------------------------------------
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
    gamma = 1/l^2, coef0 = c, degree = p."""

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


# --------------------------------------------------------------------------
# chi-squared kernels: non-negative data (histograms, counts, pixels)
# --------------------------------------------------------------------------
class AdditiveChi2(NotShiftInvariant):
    """Additive chi-squared kernel k(x, y) = sum_i 2 x_i y_i / (x_i + y_i) of x / l, y / l, for
    non-negative data; the kernel scikit-learn's AdditiveChi2Sampler approximates."""

    name = "additive_chi2"
    input_floor_inclusive = True

    def input_floor(self):
        return 0.0

    def tile_spec(self):
        return TileSpec(nbk.TILE_COORD, nbk.ADDITIVE_CHI2, nbk.PROFILE_NONE, 1.0 / self.ls)


class SkewedChi2(Kernel):
    """Skewed chi-squared kernel (Li, Ionescu & Sminchisescu 2010) k(x, y) = prod_i
    sech((log(x_i + c) - log(y_i + c)) / (2 l)); at l = 1 it is scikit-learn's
    prod_i 2 sqrt((x_i + c)(y_i + c)) / (x_i + y_i + 2c), data above -c.

    Shift-invariant in u = log(x + c) (``warp``), with spectral density l sech(pi l w) per
    coordinate: the Fourier maps (rff, rff_pairs, qmc) work on the warped data, the
    variance formulas and bounds hold in u (sigma_p^2 = d / (4 l^2))."""

    name = "skewed_chi2"
    warps = True

    constraints = {"skewedness": Real(gt=0)}

    def __init__(self, lengthscale="median", skewedness=1.0, gamma=None, median_subsample=MEDIAN_SUBSAMPLE,
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


KERNELS = Registry("rffbench.kernels", "kernel",
                   {cls.name: cls for cls in (Gaussian, Laplacian, Cauchy, Matern, ArcCosine0,
                                              ArcCosine1, Polynomial, AdditiveChi2, SkewedChi2)},
                   subclass_check(Kernel, "a kernel",
                                  hooks=[("tile_spec", "_gram_into")]))


def kernel_with(kernel, lengthscale=None, gamma=None):
    """An unfitted copy of ``kernel`` (name or Kernel) with ``lengthscale`` / ``gamma`` set
    if given: how maps and exact estimators take the kernel's scale as their own parameter.
    Giving them both here and on a Kernel instance is a ConfigError."""
    k = clone(make_kernel(kernel))
    given = {n: v for n, v in (("lengthscale", lengthscale), ("gamma", gamma)) if v is not None}
    if given:
        if isinstance(kernel, Kernel) and (data_rule(kernel.lengthscale) is None
                                           or kernel.gamma is not None):
            raise ConfigError(f"{', '.join(f'{n}={v!r}' for n, v in given.items())} given to the "
                              f"estimator and lengthscale={kernel.lengthscale!r}, gamma="
                              f"{kernel.gamma!r} to its kernel: set them in one place")
        k.set_params(**given)
    return k


def make_kernel(kernel, **params):
    """A Kernel instance from a Kernel (returned as is) or a registry name.  A parameter
    the class does not take is an error (ConfigError naming it and what the class takes),
    never dropped."""
    if isinstance(kernel, Kernel):
        return kernel
    cls = KERNELS.get_or_raise(kernel)
    names = set(cls._get_param_names())
    unknown = sorted(set(params) - names)
    if unknown:
        raise ConfigError(f"kernel={kernel}: {', '.join(unknown)} is not a parameter of "
                          f"{cls.__name__}: it takes {', '.join(sorted(names))}")
    return cls(**params)
