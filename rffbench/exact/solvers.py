"""The solvers of exact kernel ridge: the direct one (``solve_regularised``: LAPACK's Cholesky
on the Gram, in place) and preconditioned conjugate gradients (``pcg`` with a
``NystromPreconditioner``, pivots by randomly pivoted Cholesky), the intercept's bordered
system (``with_intercept``), the solver choice and the cg settings' constraints."""
from __future__ import annotations

import contextlib
import time

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lapack
from threadpoolctl import threadpool_limits

from ..checks import Int, Real, check_constraints
from ..errors import ConfigError, RffbenchError
from ..progress import Progress
from .operator import PRECISION, DeviceKernelOperator, KernelOperator

#: the cg solver's settings at their defaults (model.<key>, ExactKRR's tol, max_iter,
#: precond_rank, precision): set to anything else with the Cholesky solver, they have no
#: effect and are refused (:func:`check_cg_unused`)
CG_DEFAULTS = {"cg_tol": 1e-6, "cg_max_iter": 200, "precond_rank": None,
               "exact_precision": "float64"}


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


def cg_parts(kernel, X, precond_rank=None, random_state=None, backend=None,
             precision="float64", device="cpu"):
    """The kernel operator of X (here, the backend's, or with ``device="cuda"`` the GPU's)
    and its Nystrom preconditioner: what every cg solve on X needs, built once (it does
    not depend on lambda)."""
    if device == "cuda":
        op = DeviceKernelOperator(kernel, X, precision=precision)
    elif backend is None:
        op = KernelOperator(kernel, X, precision=precision)
    else:
        op = backend.kernel_operator(kernel, X, precision=precision)
    return op, NystromPreconditioner(op, precond_rank or default_rank(op.n),
                                     _generator(random_state))


def _generator(random_state):
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**32))
    return np.random.default_rng(random_state)


#: the conjugate-gradient solver's parameters (model.cg_tol, model.cg_max_iter,
#: model.precond_rank), declared once for the config and for ExactKRR
#: the smallest model.cg_tol (ExactKRR's tol)
CG_MIN_TOL = 1e-14
CG_CONSTRAINTS = {
    "exact_precision": PRECISION,
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


#: solver=auto uses Cholesky up to this many training rows, conjugate gradients above
#: (measured on 2 cores, docs/large-scale.md, "Exact KRR past the Gram": the dense solve's n^3 / 3
#: flops overtake tens of n^2 kernel evaluations near n = 10^4)
CHOLESKY_AUTO_MAX_N = 10000
SOLVERS = ("auto", "cholesky", "cg")


def check_device(device):
    """ConfigError (one line) unless ``device`` is one exact KRR runs on and, for cuda, CUDA
    kernels can run here (the command line's words, before any work)."""
    from ..features.base import DEVICES

    if device not in DEVICES:
        raise ConfigError(f"device={device!r} is not allowed: use one of {', '.join(DEVICES)}")
    if device != "cpu":
        from ..cuda import require

        require(device)


def choose_solver(solver, n, cholesky_fits=True, device="cpu"):
    """'cholesky' or 'cg' for ``solver`` in SOLVERS and n training rows: auto is
    cholesky up to CHOLESKY_AUTO_MAX_N rows when its n x n matrices fit, else cg; on the
    GPU (``device="cuda"``) always cg, whose products are the GPU's (a Cholesky there is
    refused)."""
    if solver not in SOLVERS:
        raise ConfigError(f"model.exact_solver={solver!r} is not allowed: use one of "
                          f"{', '.join(SOLVERS)}")
    if device == "cuda":
        if solver == "cholesky":
            raise ConfigError("model.exact_solver='cholesky' is not allowed with device=cuda: "
                              "on the GPU exact KRR is solved by cg, whose kernel products "
                              "run there (use auto or cg)")
        return "cg"
    if solver == "auto":
        return "cholesky" if n <= CHOLESKY_AUTO_MAX_N and cholesky_fits else "cg"
    return solver


def default_rank(n):
    """Nystrom preconditioner rank when model.precond_rank is null: min(n, 2000).

    Measured (docs/large-scale.md, "Exact KRR past the Gram"): at n_train = 40000, d = 16, lam =
    1e-2
    rank 2000 needs 12 iterations and rank 4000 8, but its build costs 3x more."""
    return min(n, 2000)


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
