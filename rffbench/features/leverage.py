"""``leverage``: leverage-score weighted random Fourier features (Li, Ton, Oglic &
Sejdinovic, "Towards a unified analysis of random Fourier features", ICML 2019; Avron et
al. 2017), for shift-invariant kernels.  Data-dependent: fit needs the training rows.

fit draws M = ``oversample`` x D/2 candidate frequencies w_1..w_M from the kernel's
spectral density, computes their cos/sin features on (at most ``fit_rows``, seeded) training
rows, Z (n x 2M, scale 1/sqrt(M)), and each candidate's ridge leverage: the sum of its two
columns' diagonal entries of Z^T Z (Z^T Z + n lam I)^-1 (``lam`` = ``leverage_lam``).  It then
draws m = D/2 frequencies i_1..i_m with probabilities q_i proportional to the leverages
(with replacement) and weights them by 1/(M q_i):

    z(x) = [cos(w_ij . x), sin(w_ij . x)]_j * sqrt(1 / (m M q_ij)),

so E z(x).z(y) = (1/M) sum_i cos(w_i . (x - y)): the M-candidate estimate, itself unbiased
for k.  Frequencies that matter for a ridge fit on this data are drawn more often.  No
i.i.d. variance formula or published uniform bound applies (``variance = None``).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .. import _numba as nbk
from ..checks import Int, Real
from ..errors import ConfigError
from .base import check_even
from .fourier import FourierMap

#: candidate features per fit row above which the leverage Gram is refused
MAX_CANDIDATES = 8192
#: features.params.fit_rows: training rows (at most, seeded) the leverages are computed on
FIT_ROWS = 2000


class LeverageRFF(FourierMap):
    """Leverage-score weighted random Fourier features (Li et al. 2019): cos/sin pairs of
    frequencies resampled by their ridge leverage on the training data.

    Attributes: ``random_weights_`` (d, D/2), ``feature_weights_`` (D/2,),
    ``leverage_`` (M,) of the candidates, ``picked_`` (D/2,) the candidates drawn,
    ``n_candidates_``, ``fit_rows_``."""

    name = "leverage"
    pairs = True
    constraints = {"oversample": Int(1, text=f"use an integer >= 1 with oversample x D/2 <= "
                                             f"{MAX_CANDIDATES // 2} candidate frequencies"),
                   "leverage_lam": Real(gt=0),
                   "fit_rows": Int(1, text="use an integer >= 1 (training rows the leverages "
                                           "are computed on, at most)")}
    tags = {"data_dependent": True}

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, oversample=4, leverage_lam=1e-3,
                 fit_rows=FIT_ROWS):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.oversample = oversample
        self.leverage_lam = leverage_lam
        self.fit_rows = fit_rows

    @classmethod
    def check_params(cls, n_components, kernel=None, **params):
        super().check_params(n_components, kernel, **params)
        check_even(cls.name, n_components)
        over = params.get("oversample", 4)
        if over * n_components // 2 > MAX_CANDIDATES // 2:  # its range: the constraint
            raise ConfigError(f"features.params.oversample={over!r} is not allowed: use an "
                              f"integer >= 1 with oversample x D/2 <= {MAX_CANDIDATES // 2} "
                              "candidate frequencies")

    def map_params(self):
        return dict(oversample=self.oversample, leverage_lam=self.leverage_lam,
                    fit_rows=self.fit_rows)

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Candidates (M x d), their features on the fit rows (n x 2M) and the 2M x 2M
        leverage system (twice), and the output."""
        M = params.get("oversample", 4) * n_components // 2
        n = min(train_rows or FIT_ROWS, params.get("fit_rows", FIT_ROWS))
        return 8.0 * (M * d + 2 * n * M + 8 * M * M) + float(n_rows) * n_components * itemsize

    def _fit(self, X, rng):
        m = self.n_components // 2
        M = self.oversample * m
        d = X.shape[1]
        W = self.kernel_.sample_frequencies(M, d, rng)  # (M, d) candidates
        n = X.shape[0]
        rows = np.sort(rng.choice(n, min(n, self.fit_rows), replace=False))
        Xs = X[rows]
        Xs = np.asarray(Xs.toarray() if sp.issparse(Xs) else Xs, dtype=np.float64)
        # one BLAS thread: the leverages, and so the frequencies picked, are then the same
        # bits at every thread count (a threaded GEMM / Cholesky sums in another order)
        with nbk.blas_single_thread():
            A = self.kernel_.warp(Xs) @ W.T  # the coordinates the frequencies act on
            Z = np.hstack([np.cos(A), np.sin(A)]) / math.sqrt(M)
            G = Z.T @ Z
            ns = Xs.shape[0]
            # diag(G (G + n lam I)^-1) = 1 - n lam diag((G + n lam I)^-1); Cholesky of the
            # SPD system
            c, low = scipy.linalg.cho_factor(G + ns * self.leverage_lam * np.eye(2 * M))
            inv_diag = np.diag(scipy.linalg.cho_solve((c, low), np.eye(2 * M)))
        lev_cols = 1.0 - ns * self.leverage_lam * inv_diag
        lev = np.maximum(lev_cols[:M] + lev_cols[M:], 0.0)
        q = lev / lev.sum() if lev.sum() > 0 else np.full(M, 1.0 / M)
        pick = rng.choice(M, size=m, p=q)
        self.leverage_ = lev.astype(X.dtype)
        self.picked_ = pick.astype(np.int64)
        self.n_candidates_ = M
        self.fit_rows_ = ns
        self._set_frequencies(W[pick], X.dtype)
        self.feature_weights_ = np.sqrt(1.0 / (m * M * q[pick])).astype(X.dtype)
        self.n_freq_ = m

    def _transform_into(self, X, out):
        """The rff_pairs transform (sqrt(2/D) [cos, sin]), then each pair reweighted."""
        super()._transform_into(X, out)
        w = self._as("feature_weights_", np.float64) / math.sqrt(2.0 / self.n_components)
        nbk.scale_columns_inplace(out, np.concatenate([w, w]))


#: the maps this module registers (rffbench.features collects them)
MAPS = (LeverageRFF,)
