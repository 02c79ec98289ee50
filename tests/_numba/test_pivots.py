"""rffbench/_numba/pivots.py: one round of the pivoted Cholesky rules against the plain-numpy
round it replaced, over generated sizes (n, candidates, pivots before the round from 0 or
1), both rules, and the stops (a zero residual, a pivot whose own residual is 0)."""
import numpy as np
import pytest

from rffbench import _numba as nbk


def _round_reference(G, C, u, r0, resid, F, piv, n_piv, floor, greedy):
    """The numpy round (pivoted_cholesky's before the compiled one), same contract."""
    where = {int(c): j for j, c in enumerate(C)}
    t0, k = n_piv, F.shape[1]
    for j in range(len(C)):
        if n_piv >= k:
            break
        if float(np.clip(resid, 0, None).sum()) <= floor:
            return n_piv, True
        if greedy:
            s = int(np.argmax(resid))
            if s not in where:
                break
            col = where[s]
        else:
            s, col = int(C[j]), j
            if u[j] * r0[s] >= resid[s]:
                continue
        g = G[:, col] - F[:, t0:n_piv] @ F[s, t0:n_piv]
        if g[s] <= floor:
            return n_piv, True
        f = g / np.sqrt(g[s])
        F[:, n_piv] = f
        resid -= f ** 2
        resid[s] = 0.0
        piv[n_piv] = s
        n_piv += 1
    return n_piv, False


def _case(rng, n, m, k, before, greedy, rank=None):
    """A round's inputs from a PSD matrix K (rank ``rank``) with ``before`` pivots taken."""
    A = rng.normal(size=(n, rank or n))
    K = A @ A.T / A.shape[1]
    F = np.zeros((n, k), order="F")
    piv = np.zeros(k, dtype=np.int64)
    resid = np.diag(K).copy()
    for t in range(before):  # plain pivoted Cholesky, largest residual first
        s = int(np.argmax(resid))
        g = K[:, s] - F[:, :t] @ F[s, :t]
        F[:, t] = g / np.sqrt(g[s])
        resid -= F[:, t] ** 2
        resid[s], piv[t] = 0.0, s
    r0 = np.clip(resid, 0, None)
    C = np.argsort(-resid, kind="stable")[:m] if greedy else \
        rng.choice(n, m, p=r0 / r0.sum())
    u = r0[:0] if greedy else rng.random(m)
    G = K[:, C] - F[:, :before] @ F[C, :before].T
    return G, C.astype(np.int64), u, r0, resid, F, piv, before


SIZES = [(1, 1, 1, 0), (2, 1, 2, 0), (5, 3, 4, 1), (7, 7, 7, 0), (40, 9, 12, 2),
         (64, 32, 20, 3), (300, 64, 80, 16)]


@pytest.mark.parametrize("greedy", [True, False], ids=["greedy", "rpcholesky"])
@pytest.mark.parametrize("n,m,k,before", SIZES, ids=["-".join(map(str, s)) for s in SIZES])
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_round_is_the_numpy_round(greedy, n, m, k, before, order, rng):
    args = list(_case(rng, n, m, k, before, greedy))
    args[0] = np.asarray(args[0], order=order)
    floor = 1e-12 * float(args[4].max())
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_n, got_stop = nbk.pivot_round(*args, floor, greedy)
    ref_n, ref_stop = _round_reference(*want, floor, greedy)
    assert (got_n, got_stop) == (ref_n, ref_stop) and got_n > before
    np.testing.assert_array_equal(args[6][:got_n], want[6][:ref_n])  # the pivots
    np.testing.assert_allclose(args[5][:, :got_n], want[5][:, :ref_n], rtol=0, atol=1e-12)
    np.testing.assert_allclose(args[4], want[4], rtol=0, atol=1e-12)  # the residuals


@pytest.mark.parametrize("greedy", [True, False], ids=["greedy", "rpcholesky"])
def test_a_round_stops_where_the_residual_is_spent(greedy, rng):
    """Rank 3: the round stops after at most 3 pivots, with the stop flag, as numpy's."""
    args = _case(rng, 30, 12, 12, 0, greedy, rank=3)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    floor = 1e-12 * float(args[4].max())
    got = nbk.pivot_round(*args, floor, greedy)
    assert got == _round_reference(*want, floor, greedy)
    assert got[0] <= 3 and (got[1] or greedy)
