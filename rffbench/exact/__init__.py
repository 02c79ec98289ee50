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

The package: ``estimators.py`` (ExactKRR, ExactKRRClassifier, select_lambda and their memory
model), ``solvers.py`` (Cholesky, cg and its Nystrom preconditioner), ``operator.py``
(KernelOperator and its products tile by tile), ``tiles.py`` (the fused compiled tiles'
schedule and routes).
"""
from .estimators import ExactKRR, ExactKRRClassifier, explicit_features_bound, select_lambda
from .operator import (
                       CUDA_KERNELS,
                       FEATURE_ROWS,
                       FEATURES_PER_COORD,
                       FUSED_MIN_EVALS,
                       PRECISIONS,
                       PREDICT_BLOCK_COLS,
                       PREDICT_BLOCK_ROWS,
                       TILE,
                       DeviceKernelOperator,
                       KernelOperator,
                       cuda_profile,
                       device_gram,
                       explicit_feature_count,
                       fused_product,
                       kernel_times,
                       prepared_times,
)
from .solvers import (
                       CG_CONSTRAINTS,
                       CG_DEFAULTS,
                       CG_MIN_TOL,
                       CHOLESKY_AUTO_MAX_N,
                       POTRF_THREADED_MAX_N,
                       SOLVERS,
                       NystromPreconditioner,
                       cg_parts,
                       check_cg_params,
                       check_cg_unused,
                       choose_solver,
                       default_rank,
                       not_converged_text,
                       pcg,
                       solve_regularised,
                       with_intercept,
)

__all__ = ["CG_CONSTRAINTS", "CG_DEFAULTS", "CG_MIN_TOL", "CHOLESKY_AUTO_MAX_N", "CUDA_KERNELS",
           "DeviceKernelOperator", "FEATURE_ROWS",
           "FEATURES_PER_COORD", "FUSED_MIN_EVALS", "POTRF_THREADED_MAX_N", "PRECISIONS",
           "PREDICT_BLOCK_COLS", "PREDICT_BLOCK_ROWS", "SOLVERS", "TILE", "ExactKRR",
           "ExactKRRClassifier", "KernelOperator", "NystromPreconditioner", "cg_parts",
           "check_cg_params", "check_cg_unused", "choose_solver", "cuda_profile", "default_rank",
           "device_gram",
           "explicit_feature_count", "explicit_features_bound",
           "fused_product", "kernel_times", "not_converged_text",
           "pcg", "prepared_times", "select_lambda", "solve_regularised", "with_intercept"]
