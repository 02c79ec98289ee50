"""The base of every kernel: :class:`Kernel` (parameters, lengthscale rules, the exact
Gram by tiles), :class:`TileSpec` (how the compiled Gram code evaluates a kernel) and the
lengthscale helpers.  The kernels themselves are in the modules beside this one."""
from __future__ import annotations

import functools
import hashlib
import math
import numbers
from collections import OrderedDict
from typing import NamedTuple

import numba
import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import pdist
from sklearn.base import BaseEstimator

from .. import _numba as nbk
from ..checks import Int, ParamNamesOnce, check_constraints, declared
from ..errors import ConfigError, DataError

#: d at or below which the squared Euclidean distance is computed directly
#: (exact, vectorised over the output row) instead of through a BLAS GEMM.
DIRECT_SQDIST_MAX_D = 16
#: rows of X per block of the GEMM path (bounds the cache footprint).
GRAM_BLOCK_ROWS = 1024
#: a symmetric Gram K(X, X) of at least this many rows goes through the fused tiles
#: (:func:`symmetric_tile_gram`: each pair once, half the whole product's GEMM and profile
#: values); a smaller one through the blocks (Gaussian, d = 64, 2 threads: the tiles 0.84x
#: the blocks' speed at 512 rows, level at 1,024-1,536 (0.96-1.22x), 1.2-1.55x from 2,048;
#: below 2,048 the blocks' compiled code serves, not another per kernel and dtype); one of
#: a kernel with its own ``_gram_into`` is made whole, then its upper triangle mirrored
#: (``nbk.mirror_upper``): exactly symmetric from this size whatever the BLAS
SYMMETRIC_TILES_MIN_N = 2048
#: chunks of tile pairs per thread of a symmetric tile Gram (the next free thread takes the
#: next chunk: the diagonal's half tiles and the threads' uneven speeds even out)
TILE_CHUNKS_PER_THREAD = 4


def _as_float_2d(X, name="X"):
    """X as a 2-d float array (float32 kept, other real dtypes as float64), C-contiguous and
    writeable (``rffbench._numba.as_compiled_input``);
    DataError for what a kernel cannot take: complex values (numpy would drop the
    imaginary part with only a warning), non-numbers, NaN or infinite values."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d (n_samples, n_features), got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise DataError(f"{name} has dtype {X.dtype}: a kernel takes real numbers (float, int or "
                        "bool)" + ("; give the real part (X.real) or the modulus (np.abs(X)) "
                               "explicitly" if X.dtype.kind == "c" else ""))
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    finite = np.isfinite(X).all(axis=1)
    if not finite.all():
        raise DataError(f"{name} has NaN or infinite values (row {int(np.argmin(finite))}): a "
                        "kernel's value there is not a number; drop or impute them first")
    return nbk.as_compiled_input(X)


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


def max_row_norm(X):
    """The largest Euclidean norm of X's rows (dense, scipy.sparse, or anything whose row
    slices are: the radius a kernel's values are checked at), 65536 rows at a time."""
    top = 0.0
    for s in range(0, X.shape[0], 65536):
        B = X[s:s + 65536]
        sq = np.asarray(B.multiply(B).sum(axis=1)).ravel() if sp.issparse(B) \
            else np.einsum("ij,ij->i", B, B, dtype=np.float64)
        top = max(top, float(sq.max()) if sq.size else 0.0)
    return math.sqrt(top)


class Kernel(ParamNamesOnce, BaseEstimator):
    """Base class.  Subclasses set ``name``, ``metric`` and implement the
    spectral pieces.  Estimator-style so that feature maps can hold a kernel
    as a parameter and be cloned.

    A subclass's own constructor parameters are its config keys (``kernel.NAME``, from the
    declarations of the built-in kernels; ``kernel.params.NAME`` for a plug-in's): each
    with its constraint in ``constraints`` and its description in the class's numpydoc
    ``Parameters`` section, from which ``--help`` and the configuration reference are
    written.

    Parameters
    ----------
    lengthscale : float or str, default "median"
        A number > 0, "median" (median pairwise distance of training points) or "knn<k>"
        (mean distance to the k-th nearest neighbour, e.g. knn50).
    gamma : float, default None
        scikit-learn's gamma instead of the lengthscale (gaussian 1/(2 l^2), laplacian 1/l).
    median_subsample : int, default 1000
        Training points used by the median and knn rules (seeded subsample).
    random_state : int, default 0
        Seed of that subsample.
    """

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

    def __init__(self, lengthscale="median", gamma=None, median_subsample=MEDIAN_SUBSAMPLE,
                 random_state=0):
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

    #: how the user gave the scale when it is not this instance's own gamma: "gamma" for a
    #: run's kernel resolved from kernel.gamma to a lengthscale (messages name that key)
    scale_given = None

    def _gamma_given(self):
        return self.GAMMA is not None and (self.gamma is not None or self.scale_given == "gamma")

    def scale_text(self):
        """The kernel's scale as the user set it: ``gamma=G (lengthscale L)`` when gamma was
        given, else ``lengthscale=L`` (for messages)."""
        if self._gamma_given():
            return f"gamma={self.gamma_of(self.ls):.4g} (lengthscale {self.ls:.3g})"
        return f"lengthscale={self.ls:.3g}"

    def lengthscale_advice(self, ls_min):
        """How to get a lengthscale of at least ``ls_min``, in the key the user set:
        ``kernel.gamma <= G`` when gamma was given, else ``kernel.lengthscale >= L``."""
        if self._gamma_given():
            return f"kernel.gamma <= {self.gamma_of(ls_min):.4g}"
        return f"kernel.lengthscale >= {ls_min:.4g}"

    def fit(self, X, y=None):
        """Check the parameters (:meth:`all_constraints`) and resolve the lengthscale: a
        number, scikit-learn's ``gamma``, or the median pairwise distance of ``X`` (dense
        or scipy.sparse).

        Parameters
        ----------
        X : array or scipy.sparse matrix of shape (n_samples, n_features) or None
            Training rows for a data rule ("median", "knn50"); None with a numeric lengthscale.
        y : None
            Ignored.

        Returns
        -------
        self
        """
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
            value = data_rule_value(self.warp(X).astype(np.float64), rule,
                                    "cityblock" if self.metric == "l1" else "euclidean")
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
        """scikit-learn's gamma: the one given, else that of the resolved lengthscale (None
        where scikit-learn has none)."""
        return self.gamma if self.gamma is not None else self.gamma_of(self.ls)

    def __call__(self, X, Y=None):
        """The Gram matrix k(X, Y), for estimators that take a kernel callable."""
        return self.gram(X, Y)

    def describe(self):
        """Short identifying string, e.g. 'matern(nu=1.5)'."""
        return self.name

    # -- spectral side -----------------------------------------------------
    def sample_frequencies(self, n, d, rng):
        """n frequencies omega ~ p, shape (n, d), drawn with a numpy Generator.

        Parameters
        ----------
        n : int
            Number of frequencies.
        d : int
            Input dimension.
        rng : numpy.random.Generator
            The random stream (never a compiled RNG: its streams depend on the thread count).

        Returns
        -------
        ndarray of shape (n, d)
        """
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
        """E|omega|^2 of the spectral density in dimension d (may be inf).

        Parameters
        ----------
        d : int
            Input dimension.

        Returns
        -------
        float
            math.inf for a density without a second moment (Laplacian, Cauchy-like).
        """
        raise NotImplementedError

    # -- exact side --------------------------------------------------------
    def k_of_delta(self, delta):
        """Reference k(delta) in numpy; delta has shape (..., d).

        Parameters
        ----------
        delta : array of shape (..., d)
            Differences x - y.

        Returns
        -------
        ndarray of shape (...,), float64
        """
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

    def gram(self, X, Y=None, out=None):
        """Exact Gram matrix K[i, j] = k(X[i], Y[j]) by numba (parallel, blocked).

        Output dtype is float32 when X is float32, else float64.

        Parameters
        ----------
        X : array of shape (n_X, d)
            Rows x.
        Y : array of shape (n_Y, d) or None, default None
            Rows y (None: X, the symmetric Gram).
        out : ndarray of shape (n_X, n_Y) or None, default None
            Where to write it (C-contiguous, writeable, the output's dtype), e.g. to time
            the Gram without a fresh output's allocation and first touch.

        Returns
        -------
        ndarray of shape (n_X, n_Y)
            ``out`` when given.
        """
        return self._gram(X, Y, 1.0, out)

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
        self.check_values_on(X)
        return np.ascontiguousarray(self.warp(X))

    def check_values_on(self, *arrays, what="the data"):
        """:meth:`check_values` at the largest row norm of ``arrays`` (dense or sparse; None
        skipped): the rule a run applies to its data, applied by every entry point that
        evaluates the kernel or fits a map of it.  Nothing is computed for a kernel that
        leaves check_values to this class (bounded by 1)."""
        if type(self).check_values is Kernel.check_values:
            return
        radius = max([max_row_norm(A) for A in arrays if A is not None] or [0.0])
        self.check_values(radius, what)

    def _gram(self, X, Y, factor, out=None):
        X = _as_float_2d(X)
        Ya = None if Y is None else _as_float_2d(Y, "Y")
        if Ya is not None and X.shape[1] != Ya.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features but Y has {Ya.shape[1]}")
        X = self.inputs(X)
        Y = X if Ya is None else self.inputs(Ya, "Y", X.dtype)
        shape = (X.shape[0], Y.shape[0])
        if out is None:
            out = np.empty(shape, dtype=X.dtype)
        elif not (isinstance(out, np.ndarray) and out.shape == shape and out.dtype == X.dtype
                  and out.flags.c_contiguous and out.flags.writeable):
            got = (f"{type(out).__name__} {getattr(out, 'shape', '')} "
                   f"{getattr(out, 'dtype', '')}").strip()
            raise ValueError(f"out: a writeable C-contiguous {X.dtype} array of shape {shape} "
                             f"is allowed, got {got}")
        if out.size:
            if factor != 1.0:
                X, Y = factor * X, factor * Y
            spec = self._own_tile_spec()
            if Ya is None and spec is not None and X.shape[0] >= SYMMETRIC_TILES_MIN_N:
                symmetric_tile_gram(X, out, spec)
            else:
                self._gram_into(X, Y, out)
                if Ya is None and X.shape[0] >= SYMMETRIC_TILES_MIN_N:
                    nbk.mirror_upper(out)  # exactly symmetric by every route and BLAS
        return out

    def feature_dimension(self, d):
        """M when k(x, y) = phi(x).phi(y) for an explicit map phi of M features of the
        ``inputs`` rows (the linear and polynomial kernels), else None: exact kernel
        products can then go through phi (:class:`rffbench.exact.KernelOperator`)."""
        return None

    def explicit_features(self, X):
        """phi(X) (n x M, float64) for rows prepared by ``inputs``: phi(X) phi(Y)^T = K(X, Y)
        to rounding; only for kernels whose ``feature_dimension`` is not None."""
        raise NotImplementedError(f"{type(self).__name__} has no explicit feature map")

    def tile_spec(self):
        """How the numba code evaluates this kernel (a :class:`TileSpec`), or None: a
        kernel without one (a plug-in) implements ``_gram_into`` and its products go
        tile by tile through it."""
        return None

    def _own_tile_spec(self):
        """The tile spec that ``_gram_into`` evaluates, or None for a kernel with its own
        ``_gram_into`` (or no spec): the Gram's other routes must give its values."""
        return self.tile_spec() if type(self)._gram_into is Kernel._gram_into else None

    def _gram_into(self, X, Y, out):
        """out <- K(X, Y) for rows prepared by ``inputs``, from the kernel's tile spec."""
        spec = self.tile_spec()
        if spec is None:
            raise NotImplementedError(f"{type(self).__name__} has neither tile_spec nor "
                                      "_gram_into")
        _tile_gram(X, out, spec, _right_operand(Y, spec))

    def against(self, Y):
        """``rows(X, out)``: out <- K(X, Y) (C-contiguous), as ``_gram_into(X, Y, out)``
        gives it (bit for bit), for rows Y prepared by ``inputs`` that many calls take
        kernel rows against (the pivoted Cholesky rules' rounds): Y's transpose and
        per-row numbers (squared norms; the dot-product kernels' scaled rows and norms) are
        made once here, not once per call (0.021 s of RPCholesky's 0.17 s at 4,000 x 784
        rows, 10 rounds, and as many 25 MB transposes).  A kernel with its own
        ``_gram_into`` (no tile spec) gets ``_gram_into`` itself."""
        spec = self._own_tile_spec()
        if spec is None:
            return lambda X, out: self._gram_into(X, Y, out)
        right = _right_operand(Y, spec)
        return lambda X, out: _tile_gram(X, out, spec, right)


#: data rule values already computed in this process: (rule, metric, shape, digest of the
#: points' bytes) -> value, the most recent DATA_RULE_MEMO of them
_DATA_RULE_MEMO: OrderedDict = OrderedDict()
DATA_RULE_MEMO = 64


def data_rule_value(W, rule, metric):
    """The median pairwise distance (rule ("median",)) or the mean distance to the k-th
    nearest neighbour (("knn", k)) of the float64 points W under ``metric``.  Computed once
    per process for the same points (their bytes' BLAKE2b digest): a sweep's runs of one
    dataset and seed at several D, maps or solvers share it (0.28 s of a 0.35 s run of
    5,000 subsampled points), and the value is the one computed, bit for bit."""
    key = (tuple(rule), metric, W.shape, hashlib.blake2b(np.ascontiguousarray(W),
                                                         digest_size=20).digest())
    if key in _DATA_RULE_MEMO:
        _DATA_RULE_MEMO.move_to_end(key)
        return _DATA_RULE_MEMO[key]
    dist = pdist(W, metric=metric)
    if rule[0] == "median":
        value = float(np.median(dist))
    else:  # the mean over the points of the distance to their k-th nearest neighbour
        from scipy.spatial.distance import squareform

        sq = squareform(dist)
        value = float(np.mean(np.partition(sq, rule[1], axis=1)[:, rule[1]]))
    _DATA_RULE_MEMO[key] = value
    while len(_DATA_RULE_MEMO) > DATA_RULE_MEMO:
        _DATA_RULE_MEMO.popitem(last=False)
    return value


class TileSpec(NamedTuple):
    """A kernel as the numba Gram and kernel-product code evaluates it: ``tile`` is
    TILE_SQDIST (f(|x - y|^2) from a GEMM: profile, a), TILE_DOT (f(x.y, |x|, |y|) from a
    GEMM: profile DOT_*, a, b, p) or TILE_COORD (the exact coordinate loop: kind one of
    ``rffbench._numba.gram.COORDINATE_KINDS``, profile, a)."""

    tile: int
    kind: int = 0
    profile: int = 0
    a: float = 0.0
    b: float = 0.0
    p: float = 0.0

    @property
    def sorted_minima(self):
        """Whether K V goes through sorted coordinates instead of tiles (the intersection
        kernel: a sum of minima and no profile, ``nbk.sorted_minima_times``)."""
        return self.tile == nbk.TILE_COORD and self.kind == nbk.INTERSECTION \
            and self.profile == nbk.PROFILE_NONE

    def aux(self, X, dtype=None):
        """Per-row numbers the tile code takes: squared norms (TILE_SQDIST), norms times
        sqrt(a) (TILE_DOT: |x| / l, ``nbk.row_norms``; |x| for DOT_ARCCOS0, whose value
        reads only whether it is 0: a zero row), coordinate sums (TILE_COORD, L1DIST), else
        zeros; computed in float64, returned in ``dtype`` (default X's precision)."""
        if self.tile == nbk.TILE_COORD:
            return nbk.coordinate_aux(X, self.kind, dtype)
        if self.tile == nbk.TILE_DOT:  # arc-cosine order 0 reads only the zeros: |x|
            sq = nbk.row_norms(X)[0]
            if self.profile != nbk.DOT_ARCCOS0:
                sq *= math.sqrt(self.a)
        else:
            sq = np.einsum("ij,ij->i", X, X, dtype=np.float64)
        return sq.astype(dtype or X.dtype, copy=False)


def _right_operand(Y, spec):
    """Y as the Gram code of ``spec`` takes its right operand, made once: Y.T (C-contiguous)
    for the coordinate loop; (Y.T, squared norms or None where the coordinate loop runs)
    for squared distances; (transposed scaled rows, per-row numbers) for dot products."""
    if spec.tile == nbk.TILE_COORD:
        return np.ascontiguousarray(Y.T)
    if spec.tile == nbk.TILE_SQDIST:
        direct = Y.shape[1] <= DIRECT_SQDIST_MAX_D
        return np.ascontiguousarray(Y.T), None if direct else spec.aux(Y, np.float64)
    return _dot_right(Y, spec)


def pad_rows(A, T):
    """A (C-contiguous) with zero rows appended up to a multiple of T rows."""
    N = -(-A.shape[0] // T) * T
    if N == A.shape[0]:
        return np.ascontiguousarray(A)
    out = np.zeros((N,) + A.shape[1:], dtype=A.dtype)
    out[:A.shape[0]] = A
    return out


def tile_operands(spec, Xw):
    """(left, right, aux, Xt): rows prepared by ``inputs``, padded with zero rows to a
    multiple of KERNEL_TILE, as the fused tiles (``nbk.kernel_tile``) read them in the
    left (the rows i of K[i, j]) and right (the rows j) roles: the squared-distance
    tiles' augmented rows (``nbk.sqdist_gemm_rows``), the dot-product tiles' scaled ones
    (``nbk.dot_gemm_rows``), else the rows themselves; their per-row numbers
    (``TileSpec.aux``); the coordinate loop's transposed copy (else a 1 x 1 placeholder)."""
    X = pad_rows(Xw, nbk.KERNEL_TILE)
    if spec.tile == nbk.TILE_SQDIST:
        left, right = nbk.sqdist_gemm_rows(X, spec.profile, spec.a)
    elif spec.tile == nbk.TILE_DOT:
        left, right = nbk.dot_gemm_rows(X, spec.profile, spec.a)
    else:
        left = right = X
    aux = spec.aux(X) if spec.tile != nbk.TILE_SQDIST else np.zeros(X.shape[0], X.dtype)
    Xt = np.ascontiguousarray(X.T) if spec.tile == nbk.TILE_COORD \
        else np.zeros((1, 1), dtype=X.dtype)
    return left, right, aux, Xt


@functools.lru_cache(maxsize=64)
def tile_schedule(n_i, n_j, symmetric, chunks):
    """(ti, tj, starts): the tile pairs and their chunks' starts.  Symmetric, the pairs
    I <= J split into ``chunks`` runs of equal work (a diagonal tile is half a tile);
    else one chunk per row tile."""
    if not symmetric:
        ti = np.repeat(np.arange(n_i), n_j)
        tj = np.tile(np.arange(n_j), n_i)
        return ti, tj, np.arange(0, n_i * n_j + 1, n_j)
    ti, tj = np.triu_indices(n_i)
    cum = np.concatenate([[0.0], np.cumsum(np.where(ti == tj, 0.5, 1.0))])
    starts = np.searchsorted(cum, np.linspace(0.0, cum[-1], chunks + 1), side="left")
    starts[0], starts[-1] = 0, ti.size
    return ti.astype(np.int64), tj.astype(np.int64), np.maximum.accumulate(starts)


def symmetric_tile_gram(X, out, spec):
    """out <- K(X, X) for rows prepared by ``inputs`` through the fused tiles
    (``nbk.kernel_gram_tiles``): each tile of pairs I <= J made once in one thread's
    cache (its GEMM, then the profile) and written at (I, J) and transposed at (J, I).
    Half the GEMM flops and profile values of the whole product X X^T with its profile
    pass, and one store of the output (and its mirror) where the blocks store the GEMM's
    output, read it and store it again: 1.3x faster at 5,000 x 64 (docs/performance.md).
    The Gram is exactly symmetric.  Up to DIRECT_SQDIST_MAX_D coordinates a
    squared-distance kernel's tiles take the exact coordinate loop, as its blocks do."""
    if spec.tile == nbk.TILE_SQDIST and X.shape[1] <= DIRECT_SQDIST_MAX_D:
        spec = TileSpec(nbk.TILE_COORD, nbk.SQDIST, spec.profile, spec.a)
    left, right, aux, Xt = tile_operands(spec, X)
    tiles = left.shape[0] // nbk.KERNEL_TILE
    chunks = min(tiles * (tiles + 1) // 2, TILE_CHUNKS_PER_THREAD * numba.get_num_threads())
    ti, tj, starts = tile_schedule(tiles, tiles, True, max(1, chunks))
    with nbk.blas_single_thread():
        nbk.kernel_gram_tiles(left, right, Xt, aux, aux, out, ti, tj, starts, True, *spec)


def _tile_gram(X, out, spec, right):
    """out <- K(X, Y) by ``spec``'s Gram code, Y given as ``_right_operand(Y, spec)``."""
    if spec.tile == nbk.TILE_COORD:
        nbk.coordinate_gram(X, right, out, spec.kind, spec.profile, spec.a)
    elif spec.tile == nbk.TILE_SQDIST:
        sqdist_gram(X, None, out, spec, right)
    else:
        _dot_gram(X, None, out, spec, right)


def _dot_gram(X, Y, out, spec, right=None):
    """The profile's argument by a GEMM of the scaled rows (``nbk.dot_gemm_rows``: the
    fused products' tiles take the same), then the profile.  ``right``: Y's transposed
    scaled rows and per-row numbers, if already made (:func:`_right_operand`); Y is then
    not read."""
    L = nbk.dot_gemm_rows(X, spec.profile, spec.a)[0]
    Rt, yaux = right if right is not None else _dot_right(Y, spec)
    for s in range(0, X.shape[0], GRAM_BLOCK_ROWS):
        nbk.matmul(L[s:s + GRAM_BLOCK_ROWS], Rt, out=out[s:s + GRAM_BLOCK_ROWS])
    nbk.dot_profile_inplace(out, spec.aux(X, np.float64), yaux, spec.profile, spec.b, spec.p)


def _dot_right(Y, spec):
    return (np.ascontiguousarray(nbk.dot_gemm_rows(Y, spec.profile, spec.a)[1].T),
            spec.aux(Y, np.float64))


def sqdist_gram(X, Y, out, spec, right=None):
    """Squared Euclidean distances followed by the spec's profile, into ``out``: exact
    (the coordinate loop) up to DIRECT_SQDIST_MAX_D coordinates, else |x|^2 + |y|^2 -
    2 x.y through a GEMM, whose cancellation error (~1e-16 |x|^2) is harmless for
    profiles smooth in s = d^2 (Matern 1/2, which is not, takes the coordinate loop
    through its spec at every d).  ``right``: Y.T (C-contiguous) and Y's squared norms
    (None at the coordinate loop's d), if already made (:func:`_right_operand`); Y is
    then not read."""
    Yt, ysq = _right_operand(Y, spec) if right is None else right
    if X.shape[1] <= DIRECT_SQDIST_MAX_D:
        nbk.coordinate_gram(X, Yt, out, nbk.SQDIST, spec.profile, spec.a)
        return
    xsq = spec.aux(X, np.float64)  # X @ Y.T through GEMM, not SYRK + symmetrisation
    for s in range(0, X.shape[0], GRAM_BLOCK_ROWS):
        e = min(s + GRAM_BLOCK_ROWS, X.shape[0])
        nbk.matmul(X[s:e], Yt, out=out[s:e])
        nbk.sqdist_from_gemm_profile(out[s:e], xsq[s:e], ysq, spec.profile, spec.a)
