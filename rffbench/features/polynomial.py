"""Maps for the dot-product kernels k(x, y) = sum_N a_N (x.y)^N: polynomial (g x.y + c)^p,
exponential exp(g x.y) (g = 1/l^2), and for the ANOVA kernel (not shift-invariant).

* ``maclaurin``: Random Maclaurin features (Kar & Karnick, AISTATS 2012), for the
  polynomial (a_N = C(p, N) c^(p-N) g^N) and exponential (a_N = g^N / N!, the series cut
  below float64 resolution: ExponentialDot.maclaurin_coefficients) kernels.  Feature f draws
  a degree N_f ~ q (q(N) proportional to 2^-(N+1) over the degrees with a_N > 0: Kar &
  Karnick's geometric measure) and N_f Rademacher vectors r_1..r_N; z_f(x) = sqrt(a_N /
  (q(N) D)) prod_j r_j.x.  Since E[(r.x)(r.y)] = x.y, E z(x).z(y) = sum_N q(N) a_N / q(N)
  (x.y)^N = k: unbiased.  Its exact variance: with m2 = E[(r.x)^2 (r.y)^2] = |x|^2 |y|^2 +
  2 (x.y)^2 - 2 sum_i x_i^2 y_i^2 (Rademacher), D Var = sum_N a_N^2 m2^N / q(N) - k^2.
  ``h01=True`` (Kar & Karnick's H0/1 heuristic, Section 5): the degree-0 and degree-1
  terms as d + 1 exact features [sqrt(a_0), sqrt(a_1) x] and D - d - 1 random ones over the
  degrees >= 2; its variance is the sum over N >= 2 alone.  The projections of all features
  are one GEMM (X times the stacked r's), the products a numba pass.
* ``tensorsketch`` (Pham & Pagh, KDD 2013): x' = (sqrt(g) x, sqrt(c)) so that k = (x'.y')^p;
  p independent count sketches C_t(x') in R^D (hash h_t: coordinates -> buckets, signs
  s_t), TS(x) = IFFT(prod_t FFT(C_t(x'))), the count sketch of the tensor power x'^(p):
  E TS(x).TS(y) = (x'.y')^p, unbiased.  Count sketches by numba, FFTs by scipy.fft (pocketfft,
  threaded: ``workers``).
* ``sklearn_polysketch``: scikit-learn's PolynomialCountSketch (the same TensorSketch), the
  peer.
* ``compact`` (Compact Random Feature maps, CRAFTMaps: Hamid, Xiao, Gittens & DeCoste, ICML
  2014): an up-projection to E = ``up`` x D random features (``maclaurin`` or
  ``tensorsketch``, polynomial kernel) then a Johnson-Lindenstrauss down-projection to D
  (``down``: ``srht`` or ``gaussian``), both unbiased, so the composition is; fewer outputs
  for the error of E features' estimate plus the projection's.  pyrfm's
  CompactRandomFeature.
* ``anova_rf`` (random features of the ANOVA kernel; pyrfm's RandomKernel): z_f(x) = e_p(r_f
  * x / l) / sqrt(D), r_f Rademacher, e_p the elementary symmetric polynomial (a numba
  recursion, O(D d p) per row); E e_p(r * u) e_p(r * v) = e_p(u * v) since E r_S r_T = [S =
  T] over coordinate sets.  D Var = e_p^(2)(u, v) - k^2 with the second moment sum over sets
  S, T with the symmetric difference's coordinates paired; no closed form is used here.
"""
from __future__ import annotations

import math
import warnings

import numba
import numpy as np
import scipy.fft
import scipy.sparse as sp

from .. import _numba as nbk
from ..checks import BOOL, Int, OneOf
from ..errors import ConfigError
from ..kernels import max_row_norm
from .base import FeatureMap
from .sketch import GaussianRandomProjection, SubsampledHadamard

#: TensorSketch transforms blocks of rows whose p count sketches take about this many bytes
#: (float64): the sketches, their spectra and their product stay in cache between the
#: passes, where whole-input arrays (p N D values each) went to memory and back, fresh
#: pages each call (N = 10,000, d = 8, D = 1,024, p = 2: 65 ms in blocks of 128 rows,
#: 107 ms whole)
SKETCH_BLOCK_BYTES = 2 << 20

POLY_REASON = "it represents the polynomial kernel (x.y / l^2 + coef0)^degree only"


class _PolynomialMap(FeatureMap):
    KERNELS = ("polynomial",)
    KERNEL_REASON = POLY_REASON

    def __init__(self, *, kernel="polynomial", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)


def maclaurin_degrees(a, h01):
    """The degree law q of Random Maclaurin: 2^-(N+1) over the degrees N with a_N > 0
    (N >= 2 with the H0/1 heuristic), normalised."""
    q = 0.5 ** np.arange(1, a.size + 1)
    q[a <= 0] = 0.0
    if h01:
        q[:2] = 0.0
    return q / q.sum() if q.sum() > 0 else q


class RandomMaclaurin(_PolynomialMap):
    """Random Maclaurin features (Kar & Karnick 2012): products of Rademacher projections,
    for the polynomial and exponential dot-product kernels.

    Attributes: ``degrees_`` (D_r,) the degree N of each random feature, ``weights_``
    (D_r,), ``projections_`` (d, sum N) the stacked Rademacher vectors, ``start_`` (D_r,),
    ``coefficients_`` the a_N used; D_r = D, or D - d - 1 with ``h01``.

    Parameters
    ----------
    h01 : bool, default False
        Kar & Karnick's H0/1 heuristic: the degree-0 and degree-1 terms of the series as
        d + 1 exact features, the other D - d - 1 random over the degrees >= 2 (needs
        D > d + 1).
    """

    name = "maclaurin"
    tags = {"sparse_input": True}
    KERNELS = ("polynomial", "exp_dot")
    KERNEL_REASON = ("it samples the Maclaurin series sum_N a_N (x.y)^N of a dot-product "
                     "kernel: polynomial or exp_dot")
    constraints = {"h01": BOOL}
    EXACT_MSE_SOURCE = ("Random Maclaurin: D Var = sum_N a_N^2 m2^N / q(N) - k^2, m2 = "
                        "|x|^2|y|^2 + 2(x.y)^2 - 2 sum x_i^2 y_i^2")

    def __init__(self, *, kernel="polynomial", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, h01=False):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.h01 = h01

    def map_params(self):
        return {"h01": self.h01}

    @staticmethod
    def exact_count(d, h01):
        """The exact features: sqrt(a_0) and sqrt(a_1) x with the H0/1 heuristic, else none;
        the other outputs are random."""
        return d + 1 if h01 else 0

    @classmethod
    def check_data(cls, n_components, n_samples, d=None, **params):
        exact = cls.exact_count(d, params.get("h01")) if d is not None else 0
        if exact and n_components <= exact:
            raise ConfigError.not_allowed("D", int(n_components), f" for features=maclaurin with "
                              f"features.params.h01=true and d={d}: the H0/1 heuristic takes "
                              f"d + 1 = {d + 1} exact features; use D > {d + 1}")

    @classmethod
    def exact_mse(cls, kernel, x, y, D, h01=False, **params):
        """D_r Var = sum_N a_N^2 m2^N / q(N) - k_r^2 over the randomised degrees (module
        docs), D_r the random features (D - d - 1 with h01); a_N of the kernel's series on
        the pair's norms."""
        a = kernel.maclaurin_coefficients(2.0 * max(np.linalg.norm(x), np.linalg.norm(y)))
        q = maclaurin_degrees(a, h01)
        xy = float(x @ y)
        m2 = float(x @ x) * float(y @ y) + 2.0 * xy * xy - 2.0 * float(np.sum(x * x * y * y))
        N = np.nonzero(q)[0]
        second = float(np.sum(a[N] ** 2 * m2 ** N / q[N]))
        k_r = float(np.sum(a[N] * xy ** N))
        return (second - k_r * k_r) / (D - cls.exact_count(x.size, h01))

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Rademacher vectors (about D x d in expectation) and, per transformed row, the
        projections (about D) and the output."""
        return 8.0 * 2 * d * n_components + float(n_rows) * n_components * (8 + itemsize)

    def _fit(self, X, rng):
        d = X.shape[1]
        a = self.kernel_.maclaurin_coefficients(2.0 * max_row_norm(X))
        self.coefficients_ = a.astype(self._dtype)
        q = maclaurin_degrees(a, self.h01)
        exact = self.exact_count(d, self.h01)
        D = self.n_components - exact
        if D < 1:  # a run refuses this beforehand (check_data)
            warnings.warn(f"n_components={self.n_components} with h01=True and d={d}: "
                          f"maclaurin outputs the d + 1 exact features and 1 random one "
                          f"({d + 2} features)", UserWarning, stacklevel=3)
            D = 1
        self.n_components_ = D + exact
        if q.sum() > 0:
            N = rng.choice(a.size, size=D, p=q)
            self.weights_ = np.sqrt(a[N] / (q[N] * D)).astype(self._dtype)
        else:  # h01 on a series of degree <= 1: the exact features are the whole kernel
            N = np.zeros(D, dtype=np.int64)
            self.weights_ = np.zeros(D, dtype=self._dtype)
        self.degrees_ = N.astype(np.int64)
        self.start_ = np.concatenate([[0], np.cumsum(N)[:-1]]).astype(np.int64)
        total = int(N.sum())
        R = rng.choice(np.array([-1.0, 1.0]), size=(d, max(total, 1)))
        self.projections_ = np.ascontiguousarray(R, dtype=self._dtype)
        self.n_freq_ = total

    def _transform_into(self, X, out):
        R = self._as("projections_", X.dtype)
        P = np.asarray(X @ R) if sp.issparse(X) else X @ R
        if self.h01:  # [sqrt(a_0), sqrt(a_1) x, random features]
            d = X.shape[1]
            a = self._as("coefficients_", np.float64)
            out[:, 0] = math.sqrt(a[0])
            out[:, 1:d + 1] = (X.toarray() if sp.issparse(X) else X) * math.sqrt(a[1])
            out = out[:, d + 1:]
        nbk.group_products(np.ascontiguousarray(P), self.start_, self.degrees_,
                           self._as("weights_", np.float64), out)

    @property
    def _n_features_out(self):
        return self.n_components_


class TensorSketch(_PolynomialMap):
    """TensorSketch (Pham & Pagh 2013): the count sketch of x'^(p) through FFTs.

    Attributes: ``hashes_`` (p, d + 1), ``signs_`` (p, d + 1)."""

    name = "tensorsketch"

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Hashes and signs, and per transformed row p sketches and their spectra (about
        4 p D float64 values; p = kernel.degree, taken as up to 4 here) and the output."""
        return 16.0 * 4 * (d + 1) + float(n_rows) * n_components * (8 * 4 * 4 + itemsize)

    def _fit(self, X, rng):
        p, D, d = self.kernel_.degree, self.n_components, X.shape[1]
        self.hashes_ = rng.integers(0, D, size=(p, d + 1)).astype(np.int64)
        self.signs_ = rng.choice(np.array([-1.0, 1.0]), size=(p, d + 1)).astype(self._dtype)
        self.n_freq_ = D

    def _transform_into(self, X, out):
        k = self.kernel_
        n, D, p = X.shape[0], self.n_components, k.degree
        Xp = np.empty((n, X.shape[1] + 1))
        Xp[:, :-1] = X
        Xp[:, :-1] *= 1.0 / k.ls
        Xp[:, -1] = math.sqrt(float(k.coef0))
        rows = max(1, SKETCH_BLOCK_BYTES // (8 * p * D))
        C = np.empty((p, min(rows, n), D))
        signs = self._as("signs_", np.float64)
        workers = numba.get_num_threads()  # scipy.fft in parallel (numpy's FFT is serial)
        for s in range(0, n, rows):
            e = min(n, s + rows)
            Cb = C if e - s == C.shape[1] else np.empty((p, e - s, D))  # contiguous: one
            nbk.count_sketches(Xp[s:e], self.hashes_, signs, Cb)         # compiled version
            F = scipy.fft.rfft(Cb, axis=2, workers=workers)
            prod = F[0]
            for t in range(1, p):
                prod *= F[t]
            out[s:e] = scipy.fft.irfft(prod, n=D, axis=1, workers=workers)


class SklearnPolynomialCountSketch(_PolynomialMap):
    """scikit-learn's PolynomialCountSketch (TensorSketch) wrapped as an rffbench map; with its
    defaults, ``PolynomialCountSketch()``'s gamma = 1 and coef0 = 0 (lengthscale 1)."""

    name = "sklearn_polysketch"
    tags = {"sparse_input": True}
    KERNEL_DEFAULTS = {"gamma": 1.0, "coef0": 0.0}  # PolynomialCountSketch's

    def _fit(self, X, rng):
        from sklearn.kernel_approximation import PolynomialCountSketch

        k = self.kernel_
        self.sampler_ = PolynomialCountSketch(
            gamma=k.gamma_, degree=k.degree, coef0=float(k.coef0),
            n_components=self.n_components, random_state=int(rng.integers(2**31 - 1))).fit(X)
        self.n_freq_ = self.n_components

    def _transform_into(self, X, out):
        out[...] = self.sampler_.transform(X)


UPS = {"maclaurin": RandomMaclaurin, "tensorsketch": TensorSketch}
DOWNS = {"srht": SubsampledHadamard, "gaussian": GaussianRandomProjection}


class CompactRandomFeatures(_PolynomialMap):
    """Compact random features (Hamid et al. 2014): ``up`` x D features of the ``up_map``,
    projected down to D by ``down`` (module docs).

    Attributes: ``up_`` the fitted up-map, ``down_`` the fitted projection (a linear-kernel
    sketch at lengthscale 1).

    Parameters
    ----------
    up_map : {"tensorsketch", "maclaurin"}, default "tensorsketch"
        The random features of the polynomial kernel projected down.
    up : int, default 4
        E / D, the up-map's outputs per output (2 to 64).
    down : {"srht", "gaussian"}, default "srht"
        The Johnson-Lindenstrauss projection from E to D.
    """

    name = "compact"
    tags = {"sparse_input": True}  # the up-map takes (or densifies) sparse rows itself
    constraints = {"up_map": OneOf(tuple(UPS), text="use one of " + ", ".join(UPS)),
                   "up": Int(2, 64),
                   "down": OneOf(tuple(DOWNS), text="use one of " + ", ".join(DOWNS))}

    def __init__(self, *, kernel="polynomial", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, up_map="tensorsketch", up=4,
                 down="srht"):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.up_map, self.up, self.down = up_map, up, down

    def map_params(self):
        return {"up_map": self.up_map, "up": self.up, "down": self.down}

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        E = n_components * params.get("up", 4)
        up = UPS[params.get("up_map", "tensorsketch")]
        rows = min(max(n_rows, 1), max(1, (1 << 22) // E))
        return up.memory_bytes(rows, d, E, 8) + DOWNS[params.get("down", "srht")] \
            .memory_bytes(rows, E, n_components, 8) + float(n_rows) * n_components * itemsize

    def _fit(self, X, rng):
        E = self.up * self.n_components
        seeds = rng.integers(2**63, size=2)
        self.up_ = UPS[self.up_map](kernel=self.kernel_, n_components=E,
                                    random_state=int(seeds[0])).fit(X)
        self.down_ = DOWNS[self.down](kernel="linear", n_components=self.n_components,
                                      lengthscale=1.0, random_state=int(seeds[1]))
        self.down_.fit(np.zeros((1, E), dtype=self._dtype))

    def _transform_into(self, X, out):
        self.down_.transform(self.up_.transform(X), out=out)


class AnovaFeatures(FeatureMap):
    """Random features of the ANOVA kernel: e_p(r_f * x / l) / sqrt(D), r_f Rademacher.

    Attributes: ``signs_`` (D, d)."""

    name = "anova_rf"
    tags = {"sparse_input": False}
    KERNELS = ("anova",)
    KERNEL_REASON = "elementary symmetric polynomials of signed inputs represent the ANOVA kernel"

    def __init__(self, *, kernel="anova", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        return 8.0 * n_components * d + float(n_rows) * n_components * itemsize

    def _fit(self, X, rng):
        self.signs_ = rng.choice(np.array([-1.0, 1.0]),
                                 size=(self.n_components, X.shape[1])).astype(self._dtype)

    def _transform_into(self, X, out):
        p = int(self.kernel_.degree)
        scale = self.kernel_.ls ** (-p) / math.sqrt(self.n_components)
        nbk.elementary_symmetric(X, self._as("signs_", np.float64), p, scale, out)


#: the maps this module registers (rffbench.features collects them)
MAPS = (RandomMaclaurin, TensorSketch, SklearnPolynomialCountSketch, CompactRandomFeatures,
        AnovaFeatures)
