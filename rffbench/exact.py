"""Exact kernel ridge regression: alpha = (K + lam I)^{-1} Y (seed 000, eq. 7).

The Gram matrix is computed by the kernel's numba code, lam is added to its
diagonal in place and LAPACK's Cholesky (``potrf``) factors it in place, so
training holds one n x n float64 matrix.  Prediction computes K(test, train)
in row blocks.  Targets are a matrix (one column per output: one-hot classes
for classification); with ``center`` the training mean is removed first and
added back to the predictions (an unpenalised intercept).  :class:`ExactKRR`
(regressor) and :class:`ExactKRRClassifier` are scikit-learn estimators, the
exact baseline of the Python API.
"""
from __future__ import annotations

import math
import numbers
import time

import numpy as np
from scipy.linalg import cho_solve, lapack
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .errors import ConfigError, RffbenchError
from .kernels import Kernel, kernel_with

#: test rows per block of K(test, train) in predict
PREDICT_BLOCK_ROWS = 2048


class ExactKRR(RegressorMixin, BaseEstimator):
    """Kernel ridge regression with the exact Gram matrix (a scikit-learn regressor).

    Parameters
    ----------
    kernel : str or Kernel, default "gaussian"
        A registered kernel name or a Kernel instance.  A Kernel whose lengthscale is
        already resolved (fitted) is used as it is; otherwise a copy is fitted on X
        (the median heuristic by default, as the feature maps and the command line).
    lam : float, default 1e-3
        Ridge parameter: alpha = (K + lam I)^{-1} (y - mean).  scikit-learn's
        KernelRidge calls it alpha; ``model.lam`` on the command line.
    center : bool, default True
        The targets' training mean as an unpenalised intercept.
    lengthscale, gamma : as for the feature maps (None: the kernel's own).

    After :meth:`fit`: ``kernel_``, ``dual_coef_`` (n_train, n_outputs), ``offset_``,
    ``times_`` = dict gram_time_s, factor_time_s, solve_time_s.
    """

    def __init__(self, kernel="gaussian", lam=1e-3, center=True, lengthscale=None, gamma=None):
        self.kernel = kernel
        self.lam = lam
        self.center = center
        self.lengthscale = lengthscale
        self.gamma = gamma

    def _fitted_kernel(self, X):
        k = self.kernel
        if isinstance(k, Kernel) and hasattr(k, "lengthscale_") and self.lengthscale is None \
                and self.gamma is None:
            return k
        return kernel_with(k, self.lengthscale, self.gamma).fit(X)

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             multi_output=True, y_numeric=True)
        return self._fit(X, y)

    def _fit(self, X, Y):
        if not (isinstance(self.lam, numbers.Real) and math.isfinite(self.lam) and self.lam > 0):
            raise ConfigError(f"model.lam={self.lam!r} is not allowed: use a number > 0")
        self.kernel_ = self._fitted_kernel(X)
        Y = np.asarray(Y, dtype=np.float64)
        self._1d = Y.ndim == 1
        Y = Y[:, None] if Y.ndim == 1 else Y
        self.offset_ = Y.mean(axis=0) if self.center else np.zeros(Y.shape[1])
        t0 = time.perf_counter()
        K = np.asarray(self.kernel_.gram(X), dtype=np.float64)
        t1 = time.perf_counter()
        self.dual_coef_, factor_s, solve_s = solve_regularised(K, Y - self.offset_, self.lam)
        self.X_fit_ = X
        self.times_ = dict(gram_time_s=t1 - t0, factor_time_s=factor_s, solve_time_s=solve_s)
        return self

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        out = np.empty((X.shape[0], self.dual_coef_.shape[1]))
        for s in range(0, X.shape[0], PREDICT_BLOCK_ROWS):
            Kb = self.kernel_.gram(X[s:s + PREDICT_BLOCK_ROWS], self.X_fit_)
            out[s:s + PREDICT_BLOCK_ROWS] = Kb @ self.dual_coef_
        return out + self.offset_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X):
        """Predictions, 1-d for a 1-d training target."""
        out = self._scores(X)
        return out[:, 0] if self._1d else out


class ExactKRRClassifier(ClassifierMixin, ExactKRR):
    """Exact kernel ridge as a classifier: least squares on one-hot targets, argmax
    (Rahimi & Recht's "+ LS" and rffbench's ``learning`` measurement).  Parameters as
    :class:`ExactKRR`; also ``classes_``."""

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32])
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"ExactKRRClassifier needs at least 2 classes, got 1 class "
                             f"({self.classes_[0]!r})")
        Y = np.zeros((y.shape[0], self.classes_.size))
        Y[np.arange(y.shape[0]), codes] = 1.0
        return self._fit(X, Y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = False
        return tags

    def decision_function(self, X):
        """Scores per class (n, n_classes); for 2 classes the positive class's margin."""
        scores = self._scores(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def predict(self, X):
        check_is_fitted(self)
        return self.classes_[self._scores(X).argmax(axis=1)]


def select_lambda(kernel, X_fit, Y_fit, X_val, grid, center=True):
    """Validation predictions (one matrix per lambda; None where K + lam I is not
    positive definite in floating point): K on X_fit and K(X_val, X_fit) computed once,
    one Cholesky per lambda (memory: 2 n^2 + n_val n)."""
    offset = Y_fit.mean(axis=0) if center else np.zeros(Y_fit.shape[1])
    K = np.asarray(kernel.gram(X_fit), dtype=np.float64)
    K_val = np.asarray(kernel.gram(X_val, X_fit), dtype=np.float64)
    work = np.empty_like(K)
    preds = []
    for lam in grid:
        np.copyto(work, K)
        try:
            alpha, _, _ = solve_regularised(work, Y_fit - offset, lam)
        except RffbenchError:  # K + lam I not positive definite in floating point
            preds.append(None)
            continue
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
