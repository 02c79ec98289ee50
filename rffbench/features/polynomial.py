"""Maps for the polynomial kernel k(x, y) = (g x.y + c)^p, g = 1/l^2 (not shift-invariant).

* ``maclaurin``: Random Maclaurin features (Kar & Karnick, AISTATS 2012).  k = sum_N a_N
  (x.y)^N with a_N = C(p, N) c^(p-N) g^N.  Feature f draws a degree N_f ~ q (q(N) proportional
  to 2^-(N+1) on 0..p: Kar & Karnick's geometric measure restricted to the degrees the kernel
  has) and N_f Rademacher vectors r_1..r_N; z_f(x) = sqrt(a_N / (q(N) D)) prod_j r_j.x.  Since
  E[(r.x)(r.y)] = x.y, E z(x).z(y) = sum_N q(N) a_N / q(N) (x.y)^N = k: unbiased.  The
  projections of all features are one GEMM (X times the stacked r's), the products a numba
  pass.
* ``tensorsketch`` (Pham & Pagh, KDD 2013): x' = (sqrt(g) x, sqrt(c)) so that k = (x'.y')^p;
  p independent count sketches C_t(x') in R^D (hash h_t: coordinates -> buckets, signs
  s_t), TS(x) = IFFT(prod_t FFT(C_t(x'))), the count sketch of the tensor power x'^(p):
  E TS(x).TS(y) = (x'.y')^p, unbiased.  Count sketches by numba, FFTs by scipy.fft (pocketfft, threaded: ``workers``).
* ``sklearn_polysketch``: scikit-learn's PolynomialCountSketch (the same TensorSketch), the
  peer.
"""
from __future__ import annotations

import math

import numba
import numpy as np
import scipy.fft
import scipy.sparse as sp

from .. import _numba as nbk
from .fourier import FeatureMap

POLY_REASON = "it represents the polynomial kernel (x.y / l^2 + coef0)^degree only"


class _PolynomialMap(FeatureMap):
    KERNELS = ("polynomial",)
    KERNEL_REASON = POLY_REASON

    def __init__(self, *, kernel="polynomial", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)


class RandomMaclaurin(_PolynomialMap):
    """Random Maclaurin features (Kar & Karnick 2012): products of Rademacher projections.

    Attributes: ``degrees_`` (D,) the degree N of each feature, ``weights_`` (D,),
    ``projections_`` (d, sum N) the stacked Rademacher vectors, ``start_`` (D,)."""

    name = "maclaurin"
    tags = {"sparse_input": True}

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Rademacher vectors (about D x d in expectation) and, per transformed row, the
        projections (about D) and the output."""
        return 8.0 * 2 * d * n_components + float(n_rows) * n_components * (8 + itemsize)

    def _fit(self, X, rng):
        a = self.kernel_.coefficients()
        p = a.size - 1
        q = 0.5 ** np.arange(1, p + 2)
        q /= q.sum()
        D = self.n_components
        N = rng.choice(p + 1, size=D, p=q)
        self.degrees_ = N.astype(np.int64)
        self.weights_ = np.sqrt(a[N] / (q[N] * D)).astype(self._dtype)
        self.start_ = np.concatenate([[0], np.cumsum(N)[:-1]]).astype(np.int64)
        total = int(N.sum())
        R = rng.choice(np.array([-1.0, 1.0]), size=(X.shape[1], max(total, 1)))
        self.projections_ = np.ascontiguousarray(R, dtype=self._dtype)
        self.n_freq_ = total

    def _transform_into(self, X, out):
        R = self._as("projections_", X.dtype)
        P = np.asarray(X @ R) if sp.issparse(X) else X @ R
        nbk.group_products(np.ascontiguousarray(P), self.start_, self.degrees_,
                           self._as("weights_", np.float64), out)


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
        n, D = X.shape[0], self.n_components
        Xp = np.empty((n, X.shape[1] + 1))
        Xp[:, :-1] = X
        Xp[:, :-1] *= 1.0 / k.ls
        Xp[:, -1] = math.sqrt(float(k.coef0))
        C = np.empty((k.degree, n, D))
        nbk.count_sketches(Xp, self.hashes_, self._as("signs_", np.float64), C)
        workers = numba.get_num_threads()  # scipy.fft in parallel (numpy's FFT is serial)
        F = scipy.fft.rfft(C, axis=2, workers=workers)
        prod = F[0]
        for t in range(1, k.degree):
            prod *= F[t]
        out[...] = scipy.fft.irfft(prod, n=D, axis=1, workers=workers)


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


#: the maps this module registers (rffbench.features collects them)
MAPS = (RandomMaclaurin, TensorSketch, SklearnPolynomialCountSketch)
