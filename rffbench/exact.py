"""Exact kernel ridge regression: alpha = (K + lam I)^{-1} Y (seed 000, eq. 7).

Two solvers give the same alpha:

* ``cholesky``: the Gram matrix is computed by the kernel's numba code, lam is
  added to its diagonal in place and LAPACK's Cholesky (``potrf``) factors it
  in place, so training holds one n x n float64 matrix: O(n^2) memory, O(n^3)
  time.
* ``cg``: preconditioned conjugate gradients that never store K.  Each product
  K V is computed tile by tile (:class:`KernelOperator`: the kernel's numba
  Gram on a T x T tile, used twice by symmetry, then a GEMM), and the
  preconditioner is (F F^T + lam I)^{-1}, F F^T a rank-m Nystrom approximation
  of K (:class:`NystromPreconditioner`: pivots by randomly pivoted Cholesky,
  Chen et al. 2023; the Nystrom-preconditioned KRR idea of Falkon, Rudi et
  al. 2017, applied to the full system): memory O(n (d + m)), time
  O(iterations n^2 d + n m^2).  It stops at a relative residual
  ||Y - (K + lam I) alpha|| / ||Y|| <= ``tol`` per target column (recomputed
  from scratch at the end, not the recurrence's estimate) or after
  ``max_iter`` iterations; a solve that did not converge says so
  (``solver_info_``), it is never a silent answer.

Prediction computes K(test, train) in tiles (:func:`kernel_times`).  Targets
are a matrix (one column per output: one-hot classes for classification); with
``center`` the model has an unpenalised intercept b: the bordered system
(K + lam I) alpha + 1 b = Y, 1^T alpha = 0, solved with one more right-hand side
(:func:`with_intercept`; the dual of ridge on features with an unpenalised
intercept, scikit-learn's ``Ridge(fit_intercept=True)``).  Because 1^T alpha = 0,
adding a constant c to the kernel changes nothing: c 1 1^T alpha = 0.
:class:`ExactKRR`
(regressor) and :class:`ExactKRRClassifier` are scikit-learn estimators, the
exact baseline of the Python API.
"""
from __future__ import annotations

import contextlib
import math
import numbers
import time
import warnings

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lapack
from threadpoolctl import threadpool_limits
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .checks import Int, OneOf, Real, check_constraints
from .errors import ConfigError, RffbenchError
from .kernels import Kernel, kernel_with
from .progress import Progress
from .tiles import TiledRows, product_route, route_precision, tiled_gram, tiled_times

#: the cg solver's settings at their defaults (model.<key>, ExactKRR's tol, max_iter,
#: precond_rank, precision): set to anything else with the Cholesky solver, they have no
#: effect and are refused (:func:`check_cg_unused`)
CG_DEFAULTS = {"cg_tol": 1e-6, "cg_max_iter": 200, "precond_rank": None,
               "exact_precision": "float64"}


#: rows x columns of one block of K(test, train) in predict (16 MiB float64)
PREDICT_BLOCK_ROWS = 512
PREDICT_BLOCK_COLS = 4096


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
                 precond_rank=None, random_state=None, backend=None, precision="float64"):
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
        check_cg_params(self.tol, self.max_iter, self.precond_rank, self.precision)
        solver = choose_solver(self.solver, X.shape[0])
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
                              self.backend, self.precision)
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
        return kernel_times(self.kernel_, X, self.X_fit_, self.dual_coef_) + self.offset_

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


def select_lambda(kernel, X_fit, Y_fit, X_val, grid, center=True, solver="cholesky", tol=1e-6,
                  max_iter=200, precond_rank=None, random_state=None, backend=None,
                  precision="float64"):
    """Validation predictions, one matrix per lambda of ``grid``; where there is no
    solution a one-line reason instead (a str: K + lam I not positive definite in
    floating point, or cg not converged).

    cholesky: K on X_fit and K(X_val, X_fit) computed once, one Cholesky per lambda
    (memory: 2 n^2 + n_val n).  cg: one kernel operator and one preconditioner (it
    does not depend on lambda), one solve per lambda, and one pass over K(X_val, X_fit)
    for all lambdas at once."""
    if choose_solver(solver, X_fit.shape[0]) == "cg":
        check_cg_params(tol, max_iter, precond_rank, precision)
        op, pc = cg_parts(kernel, X_fit, precond_rank, random_state, backend, precision)
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
        scores = kernel_times(kernel, X_val, X_fit, np.hstack(alphas))
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


def with_intercept(solve, Y, center=True):
    """(alpha, b) of kernel ridge with an unpenalised intercept: (K + lam I) alpha + 1 b^T
    = Y, 1^T alpha = 0, from ``solve(B)`` = (K + lam I)^{-1} B (called once, on [Y, 1]).

    With A = K + lam I: b = 1^T A^{-1} Y / 1^T A^{-1} 1 and alpha = A^{-1} (Y - 1 b^T).
    ``center`` False: alpha = A^{-1} Y, b = 0."""
    Y = np.asarray(Y, dtype=np.float64)
    if not center:
        return solve(Y), np.zeros(Y.shape[1])
    S = solve(np.column_stack([Y, np.ones(Y.shape[0])]))
    U, u = S[:, :-1], S[:, -1]
    b = U.sum(axis=0) / u.sum()  # 1^T A^{-1} 1 > 0: A is positive definite
    return U - np.outer(u, b), b


def kernel_times(kernel, X, X_fit, A):
    """K(X, X_fit) A, tile by tile into one reused buffer (memory: one tile of
    PREDICT_BLOCK_ROWS x PREDICT_BLOCK_COLS, never the n x n_fit matrix)."""
    if not X.shape[0] or not X_fit.shape[0]:
        return np.zeros((X.shape[0], A.shape[1]))
    Xp = kernel.inputs(X)
    return prepared_times(kernel, Xp, kernel.inputs(X_fit, "X_fit", Xp.dtype), A)


#: kernel evaluations from which a product K(X, F) A takes the fused tile product
#: (:func:`tiled_times`, compiled for it: about 1.5 s on a fresh install); below, the
#: blocks of the kernel's own Gram code, which fitting has compiled already, are as fast
#: (a prediction of the default run: 449 x 1348)
FUSED_MIN_EVALS = 1 << 24


def fused_product(n_rows, n_fit):
    """Whether K(X, F) A with ``n_rows`` x ``n_fit`` kernel evaluations takes the fused
    tile product (what a warm-up on a few rows must compile for the full-size call)."""
    return n_rows * n_fit >= FUSED_MIN_EVALS


def prepared_times(kernel, X, F, A, fused=None):
    """K(X, F) A for rows already prepared by ``kernel.inputs`` (same dtype): the fused
    numba product (:func:`tiled_times`) when the kernel has a tile spec and the product
    has FUSED_MIN_EVALS kernel evaluations or more (``fused``: True / False to choose),
    else tiles of PREDICT_BLOCK_ROWS x PREDICT_BLOCK_COLS through one reused buffer."""
    spec = kernel.tile_spec()
    if fused is None:
        fused = fused_product(X.shape[0], F.shape[0])
    if spec is not None and fused:
        return tiled_times(spec, TiledRows(spec, X), TiledRows(spec, F), A)
    out = np.zeros((X.shape[0], A.shape[1]))
    buf = np.empty(min(PREDICT_BLOCK_ROWS, X.shape[0]) * min(PREDICT_BLOCK_COLS, F.shape[0]),
                   dtype=X.dtype)
    for i0 in range(0, X.shape[0], PREDICT_BLOCK_ROWS):
        i1 = min(i0 + PREDICT_BLOCK_ROWS, X.shape[0])
        for j0 in range(0, F.shape[0], PREDICT_BLOCK_COLS):
            j1 = min(j0 + PREDICT_BLOCK_COLS, F.shape[0])
            Kb = buf[:(i1 - i0) * (j1 - j0)].reshape(i1 - i0, j1 - j0)
            kernel._gram_into(X[i0:i1], F[j0:j1], Kb)
            out[i0:i1] += Kb @ A[j0:j1]
    return out


def cg_parts(kernel, X, precond_rank=None, random_state=None, backend=None,
             precision="float64"):
    """The kernel operator of X (here, or the backend's) and its Nystrom preconditioner:
    what every cg solve on X needs, built once (it does not depend on lambda)."""
    op = KernelOperator(kernel, X, precision=precision) if backend is None else \
        backend.kernel_operator(kernel, X, precision=precision)
    return op, NystromPreconditioner(op, precond_rank or default_rank(op.n),
                                     _generator(random_state))


def _generator(random_state):
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**32))
    return np.random.default_rng(random_state)


#: model.exact_precision: the kernel products' tiles in float64, or in float32 with
#: float64 accumulation and cg recurrences (mixed, as FALKON)
PRECISIONS = ("float64", "mixed")


#: the conjugate-gradient solver's parameters (model.cg_tol, model.cg_max_iter,
#: model.precond_rank), declared once for the config and for ExactKRR
#: the smallest model.cg_tol (ExactKRR's tol)
CG_MIN_TOL = 1e-14
CG_CONSTRAINTS = {
    "exact_precision": OneOf(PRECISIONS),
    # a relative residual below ~100 float64 ulps is rounding: cg_tol=1e-300 ran every
    # iteration of every lambda before saying it had not converged
    "cg_tol": Real(ge=CG_MIN_TOL, lt=1, text=f"use a number in [{CG_MIN_TOL:g}, 1) (a relative "
                                             "residual below that is float64's rounding)"),
    "cg_max_iter": Int(1),
    "precond_rank": Int(1, none=True, text="use an integer >= 1 or null (min(n_train, 2000))"),
}


def check_cg_unused(why, **values):
    """ConfigError naming the first cg setting (``values``: model key -> value) that is
    not at its default although exact KRR is solved by Cholesky (``why`` says so)."""
    for key, v in values.items():
        if v != CG_DEFAULTS[key]:
            raise ConfigError(f"model.{key}={v!r} is not allowed: it has no effect here "
                              f"({why}: only the cg solver uses it); leave it at its default "
                              f"{CG_DEFAULTS[key]!r}")


def check_cg_params(tol, max_iter, precond_rank, precision="float64"):
    """One-line ConfigError for a bad model.cg_tol, model.cg_max_iter, model.precond_rank or
    model.exact_precision."""
    check_constraints(dict(cg_tol=tol, cg_max_iter=max_iter, precond_rank=precond_rank,
                           exact_precision=precision), "model", CG_CONSTRAINTS)


def not_converged_text(info, tol, max_iter):
    return (f"cg not converged: relative residual {info['residual']:.3g} > "
            f"model.cg_tol={tol:g} after {info['iterations']} iterations "
            f"(model.cg_max_iter={max_iter}); raise model.cg_max_iter or model.precond_rank, "
            "or use a larger lam")


#: above this order potrf runs on one BLAS thread (see solve_regularised); measured on
#: 2 cores: threaded potrf works at n = 15000 and crashes at 16000 with ulimit -s 8192
POTRF_THREADED_MAX_N = 12000


def solve_regularised(K, Y, lam):
    """(K + lam I)^{-1} Y by Cholesky, factoring K in place (it is destroyed).

    Returns (solution, factor seconds, solve seconds)."""
    t0 = time.perf_counter()
    K.flat[::K.shape[0] + 1] += lam
    # K is symmetric: its C-order buffer is its own Fortran-order transpose.  OpenBLAS's
    # threaded potrf overflows an 8 MiB stack (the usual ulimit -s) from n ~ 16000 on
    # (a segfault, OpenBLAS issue #1645); single-threaded it does not
    limit = threadpool_limits(1, user_api="blas") if K.shape[0] > POTRF_THREADED_MAX_N \
        else contextlib.nullcontext()
    with limit:
        c, info = lapack.dpotrf(K.T, lower=False, overwrite_a=True, clean=False)
    if info != 0:
        raise RffbenchError(f"model.lam={lam!r}: K + lam I is not positive definite to working "
                            f"precision (Cholesky failed at column {info}); use a larger lam")
    t1 = time.perf_counter()
    sol = cho_solve((c, False), Y, check_finite=False)
    return sol, t1 - t0, time.perf_counter() - t1


# ---------------------------------------------------------------------------
# the iterative solver: K never stored

#: rows (and columns) of one tile of K in the kernel-matrix products; a tile is
#: TILE x TILE float64 (2 MiB: it stays in cache for its two GEMMs), reused for every
#: tile (512 was fastest of 256..4096 on 2 cores, n = 20000, d = 16)
TILE = 512
#: solver=auto uses Cholesky up to this many training rows, conjugate gradients above
#: (measured on 2 cores, docs/large-scale.md, "Exact KRR past the Gram": the dense solve's n^3 / 3
#: flops overtake tens of n^2 kernel evaluations near n = 10^4)
CHOLESKY_AUTO_MAX_N = 10000
SOLVERS = ("auto", "cholesky", "cg")


def choose_solver(solver, n, cholesky_fits=True):
    """'cholesky' or 'cg' for ``solver`` in SOLVERS and n training rows: auto is
    cholesky up to CHOLESKY_AUTO_MAX_N rows when its n x n matrices fit, else cg."""
    if solver not in SOLVERS:
        raise ConfigError(f"model.exact_solver={solver!r} is not allowed: use one of "
                          f"{', '.join(SOLVERS)}")
    if solver == "auto":
        return "cholesky" if n <= CHOLESKY_AUTO_MAX_N and cholesky_fits else "cg"
    return solver


def default_rank(n):
    """Nystrom preconditioner rank when model.precond_rank is null: min(n, 2000).

    Measured (docs/large-scale.md, "Exact KRR past the Gram"): at n_train = 40000, d = 16, lam = 1e-2
    rank 2000 needs 12 iterations and rank 4000 8, but its build costs 3x more."""
    return min(n, 2000)


#: a kernel with an explicit feature map of M features (linear, polynomial: its
#: ``feature_dimension``) takes its products as phi (phi^T V) when n >= FEATURE_ROWS M (the
#: product then costs 4 n M flops per column against the tiles' n^2 / 2 pairs) and
#: M <= FEATURES_PER_COORD (d + 1) (phi holds at most that many times the rows' memory:
#: the polynomial kernel of degree 2 up to d = 30, of degree 3 up to d = 7)
FEATURE_ROWS = 8
FEATURES_PER_COORD = 16


def explicit_feature_count(kernel, n, d):
    """M when :class:`KernelOperator` takes ``kernel``'s products on n rows of d coordinates
    through its explicit features (FEATURE_ROWS), else None."""
    M = kernel.feature_dimension(d)
    return M if M is not None and FEATURE_ROWS * M <= n and \
        M <= FEATURES_PER_COORD * (d + 1) else None


class KernelOperator:
    """V -> K V for the training Gram K = k(X, X), computed tile by tile, never stored.

    Each tile K[I, J] (I <= J) is computed once and used twice: out[I] += K[I, J] V[J]
    and out[J] += K[I, J]^T V[I].  So a product costs n^2 / 2 kernel evaluations (plus
    the diagonal tiles' other half) and 2 n^2 c flops of GEMM, in memory n d plus a tile
    and an n x c output per chunk.  With a kernel's tile spec (every built-in kernel) this
    is the fused numba product (:func:`tiled_times`: each thread's tile stays in its
    cache; ``precision="mixed"``: float32 tiles, float64 sums); ``fused=False`` or a
    kernel with only ``_gram_into`` (a plug-in): TILE x TILE tiles from Python through
    the kernel's Gram and two numpy GEMVs.  ``columns(idx)`` gives K[:, idx] (n x m),
    from the same tiles.  A kernel with a small explicit feature map (FEATURE_ROWS:
    the linear kernel, low-degree polynomials in few dimensions) takes its products,
    columns and diagonal through it instead (``n_features`` is then its size, else
    None): phi (phi^T V) in float64, whatever ``precision``, equal to the tiles' product
    to rounding, and no pair is evaluated.  The intersection kernel's products go through
    its sorted coordinates (:func:`rffbench.tiles.sorted_minima_times`, float64 whatever
    ``precision``), also without evaluating a pair.  ``route`` names the way: "explicit
    features", "sorted coordinates", "tiles" (fused) or "python tiles";
    ``precision_used`` the precision the products are made in ("mixed" on the fused tiles
    only: every other route is float64 whatever ``precision`` asks)."""

    def __init__(self, kernel, X, tile=TILE, precision="float64", fused=True):
        check_constraints(dict(exact_precision=precision), "model",
                          {"exact_precision": CG_CONSTRAINTS["exact_precision"]})
        self.kernel = kernel
        self.Xw = kernel.inputs(X, dtype=np.float64)
        self.n = self.Xw.shape[0]
        self.tile = int(tile)
        self.precision = precision
        self.products = 0
        self._buf = np.empty(min(self.tile, self.n) ** 2)  # the Python tiles (and diagonal)
        self.n_features = explicit_feature_count(kernel, self.n, self.Xw.shape[1]) \
            if fused else None
        self.phi = None if self.n_features is None else kernel.explicit_features(self.Xw)
        self.spec = kernel.tile_spec() if fused else None
        if self.spec is None:  # a kernel with only _gram_into: tiles from Python
            return
        self.rows = TiledRows(self.spec, self.Xw)
        self.tile_rows = self.rows if precision == "float64" or self.spec.sorted_minima \
            else TiledRows(self.spec, self.Xw.astype(np.float32))

    @property
    def route(self):
        return "explicit features" if self.phi is not None else product_route(self.spec)

    @property
    def precision_used(self):
        return route_precision(self.route, self.precision)

    def _block(self, i0, i1, j0, j1):
        out = self._buf[:(i1 - i0) * (j1 - j0)].reshape(i1 - i0, j1 - j0)
        self.kernel._gram_into(self.Xw[i0:i1], self.Xw[j0:j1], out)
        return out

    def matvec(self, V):
        """K V for V of shape (n, c)."""
        if self.phi is not None:
            self.products += 1
            return self.phi @ (self.phi.T @ np.asarray(V, dtype=np.float64))
        if self.spec is not None:
            self.products += 1
            return tiled_times(self.spec, self.tile_rows, self.tile_rows, V, symmetric=True)
        V = np.ascontiguousarray(V, dtype=np.float64)
        out = np.zeros_like(V)
        n, T = self.n, self.tile
        for i0 in range(0, n, T):
            i1 = min(i0 + T, n)
            for j0 in range(i0, n, T):
                j1 = min(j0 + T, n)
                Kt = self._block(i0, i1, j0, j1)
                out[i0:i1] += Kt @ V[j0:j1]
                if j0 != i0:
                    out[j0:j1] += Kt.T @ V[i0:i1]
        self.products += 1
        return out

    def diagonal(self):
        """The diagonal k(x_i, x_i) of K, from the diagonal tiles (n T evaluations)."""
        if self.phi is not None:
            return np.einsum("ij,ij->i", self.phi, self.phi)
        out = np.empty(self.n)
        for i0 in range(0, self.n, self.tile):
            i1 = min(i0 + self.tile, self.n)
            out[i0:i1] = np.diagonal(self._block(i0, i1, i0, i1))
        return out

    def columns(self, idx):
        """K[:, idx] (n x len(idx)), computed in row tiles (float64)."""
        if self.phi is not None:
            return self.phi @ self.phi[idx].T
        Y = np.ascontiguousarray(self.Xw[idx])
        if self.spec is not None:
            return tiled_gram(self.spec, self.rows, TiledRows(self.spec, Y))
        out = np.empty((self.n, len(idx)))
        for i0 in range(0, self.n, self.tile):
            i1 = min(i0 + self.tile, self.n)
            self.kernel._gram_into(self.Xw[i0:i1], Y, out[i0:i1])
        return out


class NystromPreconditioner:
    """Inverse of P = F F^T + lam I, F F^T a rank-r Nystrom approximation of K.

    F comes from block randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber,
    "Randomly pivoted Cholesky", 2023): each round samples ``block`` pivots with
    probability proportional to the diagonal of the residual K - F F^T, computes
    those columns of K (n x b kernel evaluations), removes what F already
    explains and appends the pivot block's Cholesky factor (a pseudo-inverse
    square root: eigenvalues below 1e-12 of the block's largest or of K's diagonal
    are dropped, so duplicate points cannot break it).  Cost O(n r^2) flops and n r kernel
    evaluations, memory n r: no n x n matrix.

    Since K - F F^T is positive semi-definite, the preconditioned system's
    eigenvalues lie in [1, 1 + ||K - F F^T|| / lam] and ``residual_trace`` =
    tr(K - F F^T) bounds that norm: kappa <= 1 + residual_trace / lam.  P^{-1} R =
    (R - F (lam I + F^T F)^{-1} F^T R) / lam by Woodbury (one r x r Cholesky per
    lambda, 4 n r c flops per application); its scale does not matter to CG."""

    #: eigenvalues of a pivot block below this fraction of its largest, or of K's largest
    #: diagonal entry, are dropped; the residual is done below this fraction of tr K
    BLOCK_RTOL = 1e-12

    def __init__(self, op, rank, rng, block=None):
        t0 = time.perf_counter()
        n, rank = op.n, min(int(rank), op.n)
        block = block or max(1, min(100, rank))
        F = np.empty((n, rank))
        diag = op.diagonal()
        self.initial_trace = float(diag.sum())
        floor = self.BLOCK_RTOL * float(diag.max(initial=0.0))  # rounding level of K
        r = 0
        pivots = []
        progress = Progress("exact KRR: Nystrom preconditioner", rank, "columns")
        while r < rank:
            total = diag.sum()
            if not total > self.BLOCK_RTOL * self.initial_trace:  # K is reproduced
                break
            S = np.unique(rng.choice(n, size=min(block, rank - r), p=diag / total))
            G = op.columns(S)
            if r:
                G -= F[:, :r] @ F[S, :r].T
            w, Q = np.linalg.eigh((G[S] + G[S].T) / 2)
            keep = w > max(self.BLOCK_RTOL * w[-1], floor)
            if not keep.any():
                diag[S] = 0.0
                continue
            k = int(keep.sum())
            F[:, r:r + k] = G @ (Q[:, keep] / np.sqrt(w[keep]))
            diag -= np.einsum("ij,ij->i", F[:, r:r + k], F[:, r:r + k])
            np.maximum(diag, 0.0, out=diag)
            diag[S] = 0.0
            pivots.append(S)
            r += k
            progress.step(k)
        self.F = F[:, :r] if r < rank else F
        self.rank = r
        self.landmarks = np.concatenate(pivots) if pivots else np.empty(0, dtype=np.int64)
        self.residual_trace = float(diag.sum())
        self._gram = self.F.T @ self.F
        self._factors = {}
        self.build_time_s = time.perf_counter() - t0

    def _factor(self, lam):
        if lam not in self._factors:
            A = self._gram.copy()
            A.flat[::A.shape[0] + 1] += lam
            self._factors[lam] = cho_factor(A, check_finite=False)
        return self._factors[lam]

    def solve(self, Rm, lam):
        """lam P^{-1} Rm for the ridge lam (Rm: n x c)."""
        if not self.rank:
            return Rm.copy()
        return Rm - self.F @ cho_solve(self._factor(lam), self.F.T @ Rm, check_finite=False)


def _iterations_left(first, it, res, tol, max_iter):
    """Iterations cg still needs at the residual's geometric rate since ``first`` =
    (iteration, residual), capped by max_iter (for the progress line's estimate)."""
    i0, r0 = first
    if it <= i0 or not 0 < res < r0:
        return max_iter - it
    rate = (res / r0) ** (1.0 / (it - i0))
    return min(max_iter - it, int(np.ceil(np.log(tol / res) / np.log(rate))))


def pcg(op, Y, lam, precond=None, tol=1e-6, max_iter=200):
    """Solve (K + lam I) A = Y column by column with preconditioned conjugate gradients.

    ``op.matvec`` gives K V; ``precond.solve(R, lam)`` applies P^{-1} (None: no
    preconditioner).  All columns share one kernel product per iteration; a column
    stops updating once its relative residual ||y - (K + lam I) a|| / ||y|| is <= tol.
    When every column has stopped, the residual is recomputed from scratch (one more
    product); a column that the recurrence's rounding let through restarts from its
    true residual.  So the reported residual is the solution's, not the recurrence's.

    Returns (A, info) with info = dict(iterations, residual (the largest relative
    residual over the columns), converged (residual <= tol), products (kernel
    products), time_s)."""
    t0 = time.perf_counter()
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    norms = np.linalg.norm(Y, axis=0)
    safe = np.where(norms > 0, norms, 1.0)
    apply_p = (lambda X: precond.solve(X, lam)) if precond is not None else (lambda X: X.copy())
    A = np.zeros_like(Y)
    R = Y.copy()
    it = products = 0
    progress = Progress("exact KRR (cg)", None, f"iterations (of at most {max_iter})")
    first = None
    while True:
        res = np.linalg.norm(R, axis=0) / safe
        active = res > tol
        if not active.any() or it >= max_iter:
            break
        Z = apply_p(R)
        P = Z.copy()
        rz = np.einsum("ij,ij->j", R, Z)
        while it < max_iter:  # CG from the current residual R
            it += 1
            products += 1
            Q = op.matvec(P) + lam * P
            pq = np.einsum("ij,ij->j", P, Q)
            ok = active & (pq > 0) & np.isfinite(pq)
            alpha = np.where(ok, rz / np.where(ok, pq, 1.0), 0.0)
            A += alpha * P
            R -= alpha * Q
            now = np.linalg.norm(R, axis=0) / safe
            active &= ok & (now > tol)
            if not active.any():
                break
            worst = float(np.max(now[active]))
            first = first or (it, worst)
            progress.step(left=_iterations_left(first, it, worst, tol, max_iter),
                          note=f"relative residual {worst:.2e} (tol {tol:g})")
            Z = apply_p(R)
            rz_new = np.einsum("ij,ij->j", R, Z)
            beta = np.where(active, rz_new / np.where(rz != 0, rz, 1.0), 0.0)
            P = Z + beta * P
            rz = rz_new
        products += 1
        R = Y - (op.matvec(A) + lam * A)  # the true residual: restart from it if needed
        if not np.all(np.isfinite(R)):
            break
    residual = float(np.max(np.linalg.norm(R, axis=0) / safe))
    return A, dict(iterations=it, residual=residual, converged=bool(residual <= tol),
                   products=products, time_s=time.perf_counter() - t0)
