"""``nystrom``: the Nystrom method (Williams & Seeger, NIPS 2001), any kernel, with a
choice of landmark rule.

fit picks D landmarks L by ``landmarks`` and eigendecomposes K_LL = U diag(s) U^T; the map
is phi(x) = k(x, L) U diag(s)^{-1/2}, so phi(x).phi(y) = k(x, L) K_LL^+ k(L, y).
Directions with s <= ``EIG_RTOL`` * max(s) are dropped (their columns are zero): the
pseudo-inverse of a numerically singular K_LL.  The map is data-dependent and no published
random-feature bound covers it.

The landmark rules (``features.params.landmarks``), all seeded:

* ``uniform``: D training rows drawn uniformly without replacement (Williams & Seeger);
* ``kmeans``: the D centres of k-means on the training rows (Zhang, Tsang & Kwok, ICML
  2008; scikit-learn's KMeans, one k-means++ start): landmarks need not be rows;
* ``leverage``: D rows drawn without replacement with probabilities proportional to
  approximate lambda-ridge leverage scores (Alaoui & Mahoney, NIPS 2015), computed as one
  step of Musco & Musco's recursive scheme (NIPS 2017): from a uniform pilot S of D rows,
  l_i = (k_ii - k_iS (K_SS + n lam I)^-1 k_Si) / (n lam), lam = ``landmark_lam``;
* ``rpcholesky``: randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber, CPAM 2024):
  each pivot drawn with probability proportional to the diagonal of the residual
  K - F F^T, which is then updated by the pivot's column;
* ``greedy``: the same with the largest residual diagonal as the pivot (pivoted
  Cholesky; deterministic but for ties).

For the two Cholesky rules the Nystrom approximation on their pivots is the rank-D
factor F F^T they build (a pivot whose residual is 0 adds nothing and stops the rule early:
fewer than D landmarks, all of them said in ``n_components_``).  Both take their kernel
columns by rounds of GEMMs (:func:`pivoted_cholesky`), not one pass over the data per pivot.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from scipy.linalg.blas import dgemm

from .. import _numba as nbk
from ..checks import OneOf, Real
from ..errors import ConfigError
from .base import DenseRows, FeatureMap

EIG_RTOL = 1e-12
#: features.params.landmarks: how the D landmarks are chosen
LANDMARK_RULES = ("uniform", "kmeans", "leverage", "rpcholesky", "greedy")
#: features.params.landmark_lam: the ridge of the leverage scores (landmarks=leverage only)
LANDMARK_LAM = 1e-3
#: rows per block when the kernel's diagonal is computed (a block's Gram is evaluated whole:
#: DIAG_BLOCK evaluations per diagonal entry)
DIAG_BLOCK = 32
#: the pivoted Cholesky rules' candidate columns per round: the first round's, the most
#: (each round's is twice the pivots the last one took, within these)
PIVOT_BLOCK = (32, 64)


def kernel_diagonal(kernel, X, prepared=False):
    """k(x_i, x_i) for every row (``prepared``: X already made by ``kernel.inputs``): k(0)
    for a shift-invariant kernel, exactly (its Gram through a GEMM gives 1 - 1e-16 at the
    Gaussian's diagonal); otherwise a block of Gram at a time.  The shortcut took the
    Gaussian's diagonal of 4,000 x 784 rows from 0.13 s to nothing, a fifth of
    RPCholesky's 512 pivots."""
    Xw = X if prepared else kernel.inputs(X)
    if kernel.shift_invariant:
        k0 = float(kernel.k_of_delta(np.zeros((1, Xw.shape[1])))[0])
        return np.full(Xw.shape[0], k0)
    out = np.empty(Xw.shape[0])
    G = np.empty((DIAG_BLOCK, DIAG_BLOCK), dtype=Xw.dtype)
    for s in range(0, Xw.shape[0], DIAG_BLOCK):
        B = Xw[s:s + DIAG_BLOCK]  # the last block's Gram its own array: C-contiguous, the
        g = G if len(B) == DIAG_BLOCK else np.empty((len(B), len(B)), dtype=Xw.dtype)
        kernel._gram_into(B, B, g)  # layout every compiled Gram function takes
        out[s:s + len(B)] = np.diag(g)
    return out


def pivoted_cholesky(kernel, X, k, rng, rule):
    """(pivots, F): k pivots of a pivoted Cholesky of K(X, X) and its factor (n x k) with
    K ~ F F^T; ``rule`` "rpcholesky" draws each pivot by the residual diagonal, "greedy"
    takes its largest.  Stops early when the residual diagonal is (numerically) 0.

    By rounds, so that the kernel's columns come from GEMMs, not one matrix-vector pass
    over X per pivot: a round evaluates the residual columns of b candidates at once,
    G = K[:, C] - F F[C]^T, then takes its pivots one at a time, each updating the
    residual diagonal; a pivot's column is its candidate's less the round's earlier
    pivots' (the other candidates' columns are not updated: n x t per pivot, not n x b).
    greedy: the candidates are the b largest residuals; a pivot is the argmax of the whole
    residual diagonal, as one pivot at a time, and the round ends when that argmax is not a
    candidate.  rpcholesky: the candidates are b draws by the residual diagonal r0 at the
    round's start, each accepted with probability r / r0 (its residual now over the one it
    was drawn by): Epperly, Tropp & Webber's accelerated RPCholesky (2024), whose pivots
    have the distribution of one draw at a time.  b: twice the last round's pivots, within
    PIVOT_BLOCK.  A candidate's residual column is kept when it is not taken, for the next
    rounds that name it again (:class:`_HeldColumns`): greedy's next candidates are mostly
    the last round's."""
    Xw = kernel.inputs(X, dtype=np.float64)
    n = Xw.shape[0]
    diag = kernel_diagonal(kernel, Xw, prepared=True)
    held = _HeldColumns(kernel.against(Xw), Xw)
    resid = diag.copy()
    F = np.zeros((n, k), order="F")  # columns contiguous: a pivot writes one
    pivots = np.zeros(k, dtype=np.int64)
    n_piv = 0
    floor = EIG_RTOL * max(float(diag.max()), 0.0)
    b = PIVOT_BLOCK[0]
    greedy = rule != "rpcholesky"
    while n_piv < k:
        r0 = np.clip(resid, 0, None)
        total = float(r0.sum())
        if total <= floor:
            break
        m = min(b, k - n_piv)
        if greedy:  # the m largest, ties by index: the first is the argmax's pivot
            C = np.argsort(-resid, kind="stable")[:m]
            u = r0[:0]
        else:
            C = rng.choice(n, m, p=r0 / total)
            u = rng.random(m)
        C = C.astype(np.int64)
        G = held.residual_columns(C, F, n_piv)
        before = n_piv
        n_piv, stop = nbk.pivot_round(G, C, u, r0, resid, F, pivots, n_piv, floor, greedy)
        if stop:
            break
        held.keep(G, C, pivots[before:n_piv], before)
        b = int(np.clip(2 * max(n_piv - before, 1), *PIVOT_BLOCK))
    return pivots[:n_piv], F[:, :n_piv]


class _HeldColumns:
    """The residual columns K[:, c] - F F[c]^T of the candidates a round did not take
    (``rows``), as of ``at`` pivots: a later round naming c again subtracts only the
    pivots taken since, instead of evaluating its kernel column again.  greedy's rounds
    end at the first largest residual that is not a candidate, after ~12 of 32-64 (4,000
    Gaussian rows, d = 784): without them it evaluated 1,257 kernel columns for 512
    pivots."""

    def __init__(self, rows_against, Xw):
        self.rows_against, self.Xw = rows_against, Xw
        self.rows = np.empty(0, dtype=np.int64)
        self.cols = np.empty((Xw.shape[0], 0), order="F")
        self.at = 0

    def residual_columns(self, C, F, n_piv):
        """G (n x len(C), column-major): the candidates' residual columns as of ``n_piv``
        pivots."""
        G = np.empty((self.Xw.shape[0], len(C)), order="F")
        where = {int(r): j for j, r in enumerate(self.rows)}
        known = np.array([int(c) in where for c in C], dtype=bool)
        old, new = np.flatnonzero(known), np.flatnonzero(~known)
        if len(new):
            Gn = G if not len(old) else np.empty((len(G), len(new)), order="F")
            self.rows_against(np.ascontiguousarray(self.Xw[C[new]]), Gn.T)  # K symmetric
            _subtract(Gn, F, C[new], 0, n_piv)
            if Gn is not G:
                G[:, new] = Gn
        if len(old):
            Go = np.asfortranarray(self.cols[:, [where[int(c)] for c in C[old]]])
            _subtract(Go, F, C[old], self.at, n_piv)
            G[:, old] = Go
        return G

    def keep(self, G, C, taken, at):
        """Keep the columns of G (as of ``at`` pivots) whose candidates were not taken."""
        rows, first = np.unique(C, return_index=True)
        mask = ~np.isin(rows, taken)
        self.rows, self.cols, self.at = rows[mask], G[:, first[mask]], at


def _subtract(G, F, rows, p0, p1):
    """G -= F[:, p0:p1] F[rows, p0:p1]^T in place, G and F column-major: one GEMM into G
    with the n rows as BLAS's long side (numpy's product of the same, or the row-major
    G^T -= F[rows] F^T, ran 2-4x slower at these skinny shapes)."""
    if p1 <= p0:
        return
    out = dgemm(-1.0, F[:, p0:p1], F[rows, p0:p1], beta=1.0, c=G, trans_b=True,
                overwrite_c=True)
    if not np.shares_memory(out, G):  # not column-major after all: BLAS wrote a copy
        G[...] = out


def leverage_residuals(kernel, X, m, lam, rng):
    """k_ii - k_iS (K_SS + n lam I)^+ k_Si for every row, from a uniform pilot S of m rows
    (module docs), clipped at 0: the lam-ridge leverage scores times n lam.  The inverse is
    a pseudo-inverse (eigenvalues below the matrix's rounding dropped), so a pilot with
    repeated rows and a lam too small to lift K_SS's zero eigenvalues (1e-300) is the limit
    lam -> 0, a projection, not a singular solve."""
    n = X.shape[0]
    S = np.sort(rng.choice(n, min(m, n), replace=False))
    K_nS = kernel.gram(X, X[S]).astype(np.float64)
    K_SS = kernel.gram(X[S]).astype(np.float64)
    w, V = np.linalg.eigh(K_SS + n * lam * np.eye(len(S)))
    keep = w > max(w[-1], 0.0) * len(S) * np.finfo(np.float64).eps
    B = K_nS @ V[:, keep]
    quad = np.einsum("ij,ij->i", B / w[keep], B)
    return np.maximum(kernel_diagonal(kernel, X) - quad, 0.0)


def ridge_leverage(kernel, X, m, lam, rng):
    """Approximate lam-ridge leverage scores of every row from a uniform pilot of m rows
    (module docs), clipped at 0 (:func:`leverage_residuals` / (n lam))."""
    return leverage_residuals(kernel, X, m, lam, rng) / (X.shape[0] * lam)


class Nystrom(FeatureMap):
    """The Nystrom method (Williams & Seeger 2001): D landmarks chosen from the training
    rows by a rule (uniform, k-means centres, ridge leverage, randomly pivoted or greedy
    Cholesky).

    Attributes: ``landmarks_`` (D, d), ``normalization_`` (D, D), ``rank_``, ``n_freq_``,
    ``n_components_`` (the output dimension: min(D, n_samples), fewer where a Cholesky
    rule's residual ran out), ``landmark_index_`` (the rows picked; -1 for k-means
    centres)."""

    name = "nystrom"
    SHIFT_INVARIANT_ONLY = False  # the kernel's Gram only: any kernel
    tags = {
        "data_dependent": True,
        "bias": ("a projection onto the span of the landmarks, k(x, L) K_LL^+ k(L, y) <= k "
                 "on the diagonal: not an unbiased estimate"),
        "variance": None,
    }
    constraints = {"landmarks": OneOf(LANDMARK_RULES),
                   "landmark_lam": Real(gt=0, text="use a number > 0 (the ridge of the "
                                                   "leverage scores, landmarks=leverage)")}

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, landmarks="uniform",
                 landmark_lam=LANDMARK_LAM):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.landmarks = landmarks
        self.landmark_lam = landmark_lam

    def map_params(self):
        return dict(landmarks=self.landmarks, landmark_lam=self.landmark_lam)

    def get_tags(self):
        """The class's tags; with ``landmarks="greedy"`` deterministic (the pivots are the
        largest residuals: no draw; the same features for every random_state), with
        ``"kmeans"`` an unstable fit (Lloyd's iterations end in a local optimum that
        float32 rows, or another summation order of the distances, can change)."""
        tags = type(self).tags
        if self.landmarks == "greedy":
            return dataclasses.replace(tags, deterministic=True)
        if self.landmarks == "kmeans":
            return dataclasses.replace(tags, unstable_fit=(
                "k-means centres are a local optimum of Lloyd's iterations, not continuous "
                "in the rows: float32 rows or another thread count can end in another one"))
        return tags

    @classmethod
    def check_params(cls, n_components, kernel=None, **params):
        super().check_params(n_components, kernel, **params)
        lam, rule = params.get("landmark_lam", LANDMARK_LAM), params.get("landmarks", "uniform")
        if lam != LANDMARK_LAM and rule != "leverage":
            raise ConfigError(f"features.params.landmark_lam={lam!r} is not allowed: it has no "
                              f"effect here (landmarks={rule} does not use it; "
                              f"landmarks=leverage does); leave it at its default "
                              f"{LANDMARK_LAM!r}")

    @classmethod
    def check_data(cls, n_components, n_samples, d=None, **params):
        if n_components > n_samples:
            raise ConfigError.not_allowed("D", int(n_components),
                                          " for features=nystrom: it draws D "
                              f"landmarks from the {n_samples} training rows; use D <= "
                              f"{n_samples}")

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Landmarks, K_LL and its eigendecomposition (about 4 D x D), k(x, L) and the
        output; the rules' work on the training rows (a Cholesky factor or k(X, S): n x D,
        k-means' distances: n x D)."""
        D = n_components
        rule = params.get("landmarks", "uniform")
        fit = 0.0 if rule == "uniform" else 2.0 * 8.0 * float(train_rows) * D
        return 8.0 * (D * d + 4 * D * D) + float(n_rows) * D * (8 + itemsize) + fit

    def _choose(self, X, D, rng):
        """(landmarks, their row indices or -1) by the rule."""
        n = X.shape[0]
        rule = self.landmarks
        if rule == "uniform":
            idx = np.sort(rng.choice(n, D, replace=False))
            return X[idx], idx  # X[rows] of sparse input (DenseRows) is dense
        # the other rules read every row: sparse input is made dense here
        X = np.asarray(X[np.arange(n)] if isinstance(X, DenseRows) else X, dtype=np.float64)
        if rule == "leverage":
            # proportional to the scores, without their 1 / (n lam) (1e300 at lam = 1e-300)
            lev = leverage_residuals(self.kernel_, X, D, self.landmark_lam, rng)
            p = lev / lev.sum() if lev.sum() > 0 else np.full(n, 1.0 / n)
            nz = int(np.count_nonzero(p))
            if nz < D:  # fewer rows with weight than landmarks: the rest uniformly
                p = 0.5 * p + 0.5 / n
            idx = np.sort(rng.choice(n, D, replace=False, p=p))
        elif rule in ("rpcholesky", "greedy"):
            idx, _ = pivoted_cholesky(self.kernel_, X, D, rng, rule)
        else:  # kmeans
            from sklearn.cluster import KMeans

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # fewer distinct points than clusters
                km = KMeans(n_clusters=D, n_init=1, random_state=int(rng.integers(2**31 - 1)))
                km.fit(X)
            return km.cluster_centers_, np.full(D, -1, dtype=np.int64)
        return X[idx], idx

    def _fit(self, X, rng):
        n, D = X.shape[0], self.n_components
        if D > n:  # as scikit-learn's Nystroem (a run refuses it beforehand: check_data)
            warnings.warn(f"n_components={D} > n_samples={n}: nystrom uses all {n} rows as "
                          f"landmarks and outputs {n} features", UserWarning, stacklevel=3)
            D = n
        L, idx = self._choose(X, D, rng)
        D = L.shape[0]
        self.n_components_ = D
        self.landmark_index_ = np.asarray(idx, dtype=np.int64)
        self.landmarks_ = np.ascontiguousarray(L, dtype=self._dtype)
        s, U = np.linalg.eigh(self.kernel_.gram(self.landmarks_.astype(np.float64)))
        keep = s > EIG_RTOL * s.max()
        T = np.zeros((D, D))
        T[:, keep] = U[:, keep] / np.sqrt(s[keep])
        self.normalization_ = T.astype(self._dtype)
        self.rank_ = int(keep.sum())
        self.n_freq_ = D

    @property
    def _n_features_out(self):
        return self.n_components_

    def _transform_into(self, X, out):
        Kx = self.kernel_.gram(X, self._as("landmarks_", X.dtype))
        nbk.matmul(Kx, self._as("normalization_", X.dtype), out=out)


#: the maps this module registers (rffbench.features collects them)
MAPS = (Nystrom,)
