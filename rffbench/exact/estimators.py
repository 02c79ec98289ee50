"""The exact baseline as scikit-learn estimators: ``ExactKRR`` (regressor),
``ExactKRRClassifier`` and ``select_lambda`` (the validation grid), with their memory model
(``ExactKRR.memory_bytes``), beside the allocations it describes."""
from __future__ import annotations

import math
import numbers
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..errors import ConfigError, RffbenchError
from ..kernels import KERNELS, Kernel, kernel_with, make_kernel
from .operator import (
    FEATURES_PER_COORD,
    PREDICT_BLOCK_COLS,
    PREDICT_BLOCK_ROWS,
    TILE,
    explicit_feature_count,
    kernel_times,
)
from .solvers import (
    CG_DEFAULTS,
    cg_parts,
    check_cg_params,
    check_cg_unused,
    check_device,
    choose_solver,
    default_rank,
    not_converged_text,
    pcg,
    solve_regularised,
    with_intercept,
)
from .tiles import SYM_CHUNKS


class ExactKRR(RegressorMixin, BaseEstimator):
    """Kernel ridge regression with the exact Gram matrix (a scikit-learn regressor).

    Parameters
    ----------
    kernel : str or Kernel, default "gaussian"
        A registered kernel name or a Kernel instance.  A Kernel whose lengthscale is
        already resolved (fitted) is used as it is; otherwise a copy is fitted on X
        (the median heuristic by default, as the feature maps and the command line).
    lam : float, default 1e-3
        Ridge parameter: alpha = (K + lam I)^{-1} (y - b).  scikit-learn's
        KernelRidge calls it alpha; ``model.lam`` on the command line.
    center : bool, default True
        An unpenalised intercept b (module docs); False: none.
    lengthscale, gamma : as for the feature maps (None: the kernel's own).
    solver : {"auto", "cholesky", "cg"}, default "auto"
        ``cholesky`` factors the n x n Gram; ``cg`` never stores it (module doc);
        ``auto`` is cholesky up to CHOLESKY_AUTO_MAX_N training rows, cg above.
    tol : float, default 1e-6
        cg: stop at a relative residual ||y - (K + lam I) alpha|| / ||y|| <= tol.
    max_iter : int, default 200
        cg: iteration cap.  A solve that stops there warns (ConvergenceWarning) and
        says so in ``solver_info_``.
    precond_rank : int or None, default None
        cg: rank of the Nystrom preconditioner (None: :func:`default_rank`).
    random_state : int, Generator or None, default None
        cg: seeds the preconditioner's pivots (the solution does not depend on them
        beyond tol).
    backend : None or a rffbench.backends backend, default None
        cg: where the kernel products run (None: this process).
    precision : {"float64", "mixed"}, default "float64"
        cg: the kernel products' tiles in float64, or in float32 with float64 sums and
        cg recurrences (``mixed``, as FALKON; about 1.6x faster, kernel values to ~1e-7
        relative: docs/performance.md).  The final residual is that of the products used.
    device : {"cpu", "cuda"}, default "cpu"
        Where the kernel products (cg's and the predictions') run: "cuda" takes them to the
        GPU (``pip install -e '.[gpu]'``; the Gaussian, Laplacian and Matern 1/2 kernels,
        float64, always by cg: ``solver="cholesky"`` is refused there).

    Notes
    -----
    After :meth:`fit`: ``kernel_``, ``dual_coef_`` (n_train, n_outputs), ``offset_``,
    ``times_`` (cholesky: gram_time_s, factor_time_s, solve_time_s; cg: precond_time_s,
    solve_time_s), ``solver_info_`` = dict(solver, and for cg iterations, residual,
    converged, products, precond_rank, precond_residual_trace, features and route: how
    the products were made, :class:`KernelOperator`) and ``n_iter_`` (cg
    iterations; 1 for the direct solve).
    """

    def __init__(self, kernel="gaussian", lam=1e-3, center=True, lengthscale=None, gamma=None,
                 solver="auto", tol=CG_DEFAULTS["cg_tol"], max_iter=CG_DEFAULTS["cg_max_iter"],
                 precond_rank=None, random_state=None, backend=None, precision="float64",
                 device="cpu"):
        self.kernel = kernel
        self.lam = lam
        self.center = center
        self.lengthscale = lengthscale
        self.gamma = gamma
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.precond_rank = precond_rank
        self.random_state = random_state
        self.backend = backend
        self.precision = precision
        self.device = device

    @classmethod
    def memory_bytes(cls, n_rows, d, n_outputs=1, solver="cholesky", fit_rows=None,
                     n_lams=0, precond_rank=None, kernel="gaussian", kernel_params=None):
        """Bytes a fit (and its test predictions) holds at its peak, before any work.

        Parameters
        ----------
        n_rows : int
            Training rows n (the validation rows included).
        d : int
            Input columns.
        n_outputs : int, default 1
            Target columns c (one-hot classes).
        solver : {"cholesky", "cg"}, default "cholesky"
            The solver (``auto`` resolved: :func:`~rffbench.exact.choose_solver`).
        fit_rows : int or None, default None
            Rows the lambda grid fits on (None: all ``n_rows``).
        n_lams : int, default 0
            Lambdas of a validation grid (0: one fixed lambda).
        precond_rank : int or None, default None
            cg: the Nystrom preconditioner's rank (None: :func:`default_rank`).
        kernel : str, default "gaussian"
            The kernel's registered name (its explicit features change the cg products).
        kernel_params : dict or None, default None
            The kernel's own parameters.

        Returns
        -------
        int
            cholesky: the n x n Gram, or with a grid two fit-row Grams and the validation
            block. cg: X's copies (up to 5 n d: float64, padded, transposed, the sorted
            coordinates), the kernel's explicit features when the products take them
            (n x M), the preconditioner (2 n r at its peak), 6 n x c pcg vectors (one more
            solution per lambda), the products' chunk outputs (SYM_CHUNKS n x c), a tile
            and the test predictions' block.
        """
        n = int(n_rows)
        if solver == "cholesky":
            f = n if fit_rows is None else int(fit_rows)
            return 8 * max(n * n, 2 * f * f + (n - f) * f if n_lams else 0)
        c = max(int(n_outputs), 1)
        r = precond_rank or default_rank(n)
        M = explicit_features_bound(kernel, kernel_params or {}, n, d)
        return 8 * (5 * n * d + n * M + 2 * n * min(r, n) + (6 + n_lams + SYM_CHUNKS) * n * c
                    + TILE * TILE + PREDICT_BLOCK_ROWS * PREDICT_BLOCK_COLS)

    def _fitted_kernel(self, X):
        k = self.kernel
        if isinstance(k, Kernel) and hasattr(k, "lengthscale_") and self.lengthscale is None \
                and self.gamma is None:
            return k
        return kernel_with(k, self.lengthscale, self.gamma).fit(X)

    def fit(self, X, y):
        """Solve for the dual coefficients (module docs).

        Parameters
        ----------
        X : array or scipy.sparse matrix of shape (n_samples, n_features)
            Training rows.
        y : array of shape (n_samples,) or (n_samples, n_outputs)
            Targets.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             multi_output=True, y_numeric=True)
        return self._fit(X, y)

    def _fit(self, X, Y):
        if not (isinstance(self.lam, numbers.Real) and math.isfinite(self.lam) and self.lam > 0):
            raise ConfigError(f"model.lam={self.lam!r} is not allowed: use a number > 0")
        check_cg_params(self.tol, self.max_iter, self.precond_rank, self.precision)
        check_device(self.device)
        solver = choose_solver(self.solver, X.shape[0], device=self.device)
        if solver == "cholesky":
            check_cg_unused("solver='cholesky'" if self.solver == "cholesky" else
                            f"solver='auto' chose cholesky for {X.shape[0]} rows",
                            cg_tol=self.tol, cg_max_iter=self.max_iter,
                            precond_rank=self.precond_rank, exact_precision=self.precision)
            if self.backend is not None:
                raise ConfigError("backend is not allowed with the Cholesky solver: it has no "
                                  "effect (only the cg solver's kernel products run on a "
                                  "backend); use solver='cg' or backend=None")
        self.kernel_ = self._fitted_kernel(X)
        Y = np.asarray(Y, dtype=np.float64)
        self._1d = Y.ndim == 1
        Y = Y[:, None] if Y.ndim == 1 else Y
        if solver == "cholesky":
            t0 = time.perf_counter()
            K = np.asarray(self.kernel_.gram(X), dtype=np.float64)
            t1 = time.perf_counter()
            times = {}

            def solve(B):
                sol, times["factor_time_s"], times["solve_time_s"] = \
                    solve_regularised(K, B, self.lam)
                return sol

            self.dual_coef_, self.offset_ = with_intercept(solve, Y, self.center)
            self.times_ = dict(gram_time_s=t1 - t0, **times)
            self.solver_info_ = dict(solver="cholesky")
            self.n_iter_ = 1
        else:
            op, pc = cg_parts(self.kernel_, X, self.precond_rank, self.random_state,
                              self.backend, self.precision, self.device)
            out = {}

            def solve(B):
                sol, out["info"] = pcg(op, B, self.lam, pc, self.tol, self.max_iter)
                return sol

            self.dual_coef_, self.offset_ = with_intercept(solve, Y, self.center)
            info = out["info"]
            self.times_ = dict(precond_time_s=pc.build_time_s, solve_time_s=info["time_s"])
            self.solver_info_ = dict(info, solver="cg", precision=op.precision_used,
                                     precision_asked=self.precision,
                                     features=op.n_features, route=op.route,
                                     precond_rank=pc.rank,
                                     precond_residual_trace=pc.residual_trace)
            self.n_iter_ = max(info["iterations"], 1)
            if not info["converged"]:
                warnings.warn(not_converged_text(info, self.tol, self.max_iter),
                              ConvergenceWarning, stacklevel=3)
        self.X_fit_ = X
        return self

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        return kernel_times(self.kernel_, X, self.X_fit_, self.dual_coef_, self.device) \
            + self.offset_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X):
        """Predictions, 1-d for a 1-d training target.

        Parameters
        ----------
        X : array or scipy.sparse matrix of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
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


def select_lambda(kernel, X_fit, Y_fit, X_val, grid, center=True, solver="cholesky", tol=1e-6,
                  max_iter=200, precond_rank=None, random_state=None, backend=None,
                  precision="float64", device="cpu"):
    """Validation predictions, one matrix per lambda of ``grid``; where there is no
    solution a one-line reason instead (a str: K + lam I not positive definite in
    floating point, or cg not converged).

    cholesky: K on X_fit and K(X_val, X_fit) computed once, one Cholesky per lambda
    (memory: 2 n^2 + n_val n).  cg: one kernel operator and one preconditioner (it
    does not depend on lambda), one solve per lambda, and one pass over K(X_val, X_fit)
    for all lambdas at once.  ``device="cuda"``: cg, its products on the GPU."""
    check_device(device)
    if choose_solver(solver, X_fit.shape[0], device=device) == "cg":
        check_cg_params(tol, max_iter, precond_rank, precision)
        op, pc = cg_parts(kernel, X_fit, precond_rank, random_state, backend, precision,
                          device)
        alphas, offsets, out = [], [], []
        for lam in grid:
            info = {}

            def solve(B, lam=lam, info=info):
                sol, info["info"] = pcg(op, B, lam, pc, tol, max_iter)
                return sol

            alpha, b = with_intercept(solve, Y_fit, center)
            alphas.append(alpha)
            offsets.append(b)
            i = info["info"]
            out.append(None if i["converged"] else not_converged_text(i, tol, max_iter))
        scores = kernel_times(kernel, X_val, X_fit, np.hstack(alphas), device)
        c = Y_fit.shape[1]
        return [o if o is not None else scores[:, i * c:(i + 1) * c] + offsets[i]
                for i, o in enumerate(out)]
    K = np.asarray(kernel.gram(X_fit), dtype=np.float64)
    K_val = np.asarray(kernel.gram(X_val, X_fit), dtype=np.float64)
    work = np.empty_like(K)
    preds = []
    for lam in grid:
        np.copyto(work, K)
        try:
            alpha, b = with_intercept(lambda B, lam=lam: solve_regularised(work, B, lam)[0],
                                      Y_fit, center)
        except RffbenchError:  # K + lam I not positive definite in floating point
            preds.append("not positive definite")
            continue
        preds.append(K_val @ alpha + b)
    return preds


def explicit_features_bound(kernel, kernel_params, n, d):
    """The explicit features' count M the cg products will use (0 if none): a built-in
    kernel's own (unfitted: M depends on its parameters only), a plug-in that declares a
    feature map at most FEATURES_PER_COORD (d + 1) (its code is not run before its checks)."""
    if kernel in KERNELS.builtins():
        return explicit_feature_count(make_kernel(kernel, **kernel_params), n, d) or 0
    declares = KERNELS[kernel].feature_dimension is not Kernel.feature_dimension
    return FEATURES_PER_COORD * (d + 1) if declares else 0
