"""The pivoted Cholesky rules' inner loop (the Nystrom map's ``rpcholesky`` and ``greedy``
landmarks): the pivots of one round, taken one at a time from the round's candidate
columns.

One round's columns come from a GEMM (``rffbench.features.nystrom.pivoted_cholesky``);
what is left per pivot is O(n t) work (t: the round's pivots so far) and O(n) scans of the
residual diagonal, which as numpy calls cost more than the GEMM itself (0.05 s of
RPCholesky's 0.17 s at 4,000 rows and 512 pivots, in ~550 pivots' worth of small calls).
Not parallel: each pivot's work is a few microseconds.
"""
from __future__ import annotations

import math

import numba as nb


@nb.njit(nogil=True, cache=True, error_model="numpy")
def _scan(r):
    """(sum of max(r, 0), the first index of r's largest value)."""
    total = 0.0
    best = 0
    for i in range(r.shape[0]):
        v = r[i]
        if v > 0.0:
            total += v
        if v > r[best]:
            best = i
    return total, best


@nb.njit(nogil=True, cache=True, error_model="numpy")
def _subtract_pivots(f, F, s, q0, q1):
    """f -= F[:, q0:q1] F[s, q0:q1], four columns per pass over f."""
    n = f.shape[0]
    q = q0
    while q + 4 <= q1:
        w0, w1, w2, w3 = F[s, q], F[s, q + 1], F[s, q + 2], F[s, q + 3]
        a0, a1, a2, a3 = F[:, q], F[:, q + 1], F[:, q + 2], F[:, q + 3]
        for i in range(n):
            f[i] -= a0[i] * w0 + a1[i] * w1 + a2[i] * w2 + a3[i] * w3
        q += 4
    while q < q1:
        w0 = F[s, q]
        a0 = F[:, q]
        for i in range(n):
            f[i] -= a0[i] * w0
        q += 1


@nb.njit(nogil=True, cache=True, error_model="numpy")
def pivot_round(G, C, u, r0, resid, F, piv, n_piv, floor, greedy):
    """The pivots of one round, in place: G (n x m) holds the residual columns of the
    m candidate rows C at the round's start; each pivot s (rpcholesky: candidate j in
    order, kept when u[j] r0[s] < resid[s]; greedy: the argmax of ``resid``, the round
    ending when it is not a candidate) gets g = G[:, j] less the round's earlier pivots'
    part (F[:, t0:n_piv] F[s, t0:n_piv]), f = g / sqrt(g[s]) written to F[:, n_piv] (F is
    n x k, column-major; G too, for its columns' reads), resid -= f^2, resid[s] = 0, s
    appended to ``piv``.  Stops the
    rule (second value True) when the clipped residual sum or a pivot's g[s] is <= floor.
    Returns (pivots taken in total, stop)."""
    n, m = G.shape
    k = F.shape[1]
    t0 = n_piv
    total, best = _scan(resid)
    for j in range(m):
        if n_piv >= k:
            break
        if total <= floor:
            return n_piv, True
        if greedy:
            s = best
            col = -1
            for q in range(m):
                if C[q] == s:
                    col = q
                    break
            if col < 0:  # the largest residual is not a candidate: a new round
                break
        else:
            s = C[j]
            col = j
            if u[j] * r0[s] >= resid[s]:  # rejected: its residual fell since its draw
                continue
        f = F[:, n_piv]
        for i in range(n):
            f[i] = G[i, col]
        _subtract_pivots(f, F, s, t0, n_piv)
        gs = f[s]
        if gs <= floor:
            for i in range(n):
                f[i] = 0.0
            return n_piv, True
        root = math.sqrt(gs)
        for i in range(n):
            f[i] /= root
            resid[i] -= f[i] * f[i]
        resid[s] = 0.0
        piv[n_piv] = s
        n_piv += 1
        total, best = _scan(resid)
    return n_piv, False
