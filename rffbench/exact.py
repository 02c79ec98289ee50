"""Exact kernel ridge regression: alpha = (K + lam I)^{-1} Y (seed 000, eq. 7).

The Gram matrix is computed by the kernel's numba code, lam is added to its
diagonal in place and LAPACK's Cholesky (``potrf``) factors it in place, so
training holds one n x n float64 matrix.  Prediction computes K(test, train)
in row blocks.  Targets are a matrix (one column per output: one-hot classes
for classification); with ``center`` the training mean is removed first and
added back to the predictions (an unpenalised intercept).
"""
from __future__ import annotations

import time

import numpy as np
from scipy.linalg import cho_solve, lapack

from .errors import RffbenchError

#: test rows per block of K(test, train) in predict
PREDICT_BLOCK_ROWS = 2048


class ExactKRR:
    """Kernel ridge regression with the exact Gram matrix.

    After :meth:`fit`: ``dual_coef_`` (n_train, n_outputs), ``offset_``,
    ``times_`` = dict gram_time_s, factor_time_s, solve_time_s.
    """

    def __init__(self, kernel, lam, center=True):
        self.kernel = kernel
        self.lam = lam
        self.center = center

    def fit(self, X, Y):
        Y = np.asarray(Y, dtype=np.float64)
        Y = Y[:, None] if Y.ndim == 1 else Y
        self.offset_ = Y.mean(axis=0) if self.center else np.zeros(Y.shape[1])
        t0 = time.perf_counter()
        K = np.asarray(self.kernel.gram(X), dtype=np.float64)
        t1 = time.perf_counter()
        self.dual_coef_, factor_s, solve_s = solve_regularised(K, Y - self.offset_, self.lam)
        self.X_fit_ = X
        self.times_ = dict(gram_time_s=t1 - t0, factor_time_s=factor_s, solve_time_s=solve_s)
        return self

    def predict(self, X):
        out = np.empty((X.shape[0], self.dual_coef_.shape[1]))
        for s in range(0, X.shape[0], PREDICT_BLOCK_ROWS):
            Kb = self.kernel.gram(X[s:s + PREDICT_BLOCK_ROWS], self.X_fit_)
            out[s:s + PREDICT_BLOCK_ROWS] = Kb @ self.dual_coef_
        return out + self.offset_


def select_lambda(kernel, X_fit, Y_fit, X_val, grid, center=True):
    """Validation predictions (one matrix per lambda): K on X_fit and K(X_val,
    X_fit) computed once, one Cholesky per lambda (memory: 2 n^2 + n_val n)."""
    offset = Y_fit.mean(axis=0) if center else np.zeros(Y_fit.shape[1])
    K = np.asarray(kernel.gram(X_fit), dtype=np.float64)
    K_val = np.asarray(kernel.gram(X_val, X_fit), dtype=np.float64)
    work = np.empty_like(K)
    preds = []
    for lam in grid:
        np.copyto(work, K)
        alpha, _, _ = solve_regularised(work, Y_fit - offset, lam)
        preds.append(K_val @ alpha + offset)
    return preds


def solve_regularised(K, Y, lam):
    """(K + lam I)^{-1} Y by Cholesky, factoring K in place (it is destroyed).

    Returns (solution, factor seconds, solve seconds)."""
    t0 = time.perf_counter()
    K.flat[::K.shape[0] + 1] += lam
    # K is symmetric: its C-order buffer is its own Fortran-order transpose
    c, info = lapack.dpotrf(K.T, lower=False, overwrite_a=True, clean=False)
    if info != 0:
        raise RffbenchError(f"model.lam={lam!r}: K + lam I is not positive definite to working "
                            f"precision (Cholesky failed at column {info}); use a larger lam")
    t1 = time.perf_counter()
    sol = cho_solve((c, False), Y, check_finite=False)
    return sol, t1 - t0, time.perf_counter() - t1
