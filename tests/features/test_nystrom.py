"""nystrom's landmark rules, each against a plain-numpy reference of its source."""
import numpy as np
import pytest

from rffbench.features import FEATURE_MAPS
from rffbench.features.nystrom import (
    LANDMARK_RULES,
    kernel_diagonal,
    pivoted_cholesky,
    ridge_leverage,
)
from rffbench.kernels import KERNELS
from rffbench.testing import check_feature_map
from tests.references import reference_gram

NYSTROM = FEATURE_MAPS["nystrom"]


def _data(rng, n=120, d=3):
    return rng.normal(size=(n, d))


def _kernel(name="gaussian", ls=1.5):
    return KERNELS[name](lengthscale=ls).fit(None)


def _nystrom_ref(K_nL, K_LL):
    """k(x, L) K_LL^+ k(L, y), the pseudo-inverse by numpy."""
    return K_nL @ np.linalg.pinv(K_LL, rcond=1e-12, hermitian=True) @ K_nL.T


@pytest.mark.parametrize("rule", LANDMARK_RULES)
def test_every_rule_is_the_nystrom_formula_on_its_landmarks(rule, rng):
    """Whatever the rule, phi(x).phi(y) = k(x, L) K_LL^+ k(L, y) on the landmarks it chose
    (numpy's pseudo-inverse), at float64 and float32, C and Fortran order; rows it picked
    are training rows (k-means' centres are not: index -1)."""
    X = _data(rng)
    kern = _kernel()
    m = NYSTROM(kernel="gaussian", n_components=20, lengthscale=1.5, random_state=3,
                landmarks=rule).fit(X)
    L = m.landmarks_.astype(np.float64)
    ref = _nystrom_ref(kern.gram(X, L), kern.gram(L))
    for Xv in (X, np.asfortranarray(X), X.astype(np.float32)):
        Z = m.transform(Xv).astype(np.float64)
        tol = 1e-8 if Xv.dtype == np.float64 else 2e-3
        np.testing.assert_allclose(Z @ Z.T, ref, atol=tol)
    if rule == "kmeans":
        assert (m.landmark_index_ == -1).all()
    else:
        np.testing.assert_array_equal(X[m.landmark_index_], m.landmarks_)
        assert len(set(m.landmark_index_.tolist())) == m.n_components_


def test_greedy_pivots_are_the_largest_residual_diagonal(rng):
    """greedy = pivoted Cholesky: each pivot is the argmax of diag(K - K_:P K_PP^-1 K_P:)
    (the Schur complement on the pivots so far, by numpy on the full Gram), and the
    Nystrom approximation on the pivots is the factor F F^T."""
    X = _data(rng, n=80)
    kern = _kernel("polynomial", 1.0)  # a diagonal that varies: the pivots are not uniform
    K = kern.gram(X)
    piv, F = pivoted_cholesky(kern, X, 10, np.random.default_rng(0), "greedy")
    for i in range(10):
        P = list(piv[:i])
        S = K - (K[:, P] @ np.linalg.solve(K[np.ix_(P, P)], K[P, :]) if P else 0)
        assert piv[i] == int(np.argmax(np.diag(S)))
    np.testing.assert_allclose(F @ F.T, _nystrom_ref(K[:, piv], K[np.ix_(piv, piv)]),
                               atol=1e-8)


@pytest.mark.parametrize("rule", ["greedy", "rpcholesky"])
def test_the_rounds_give_the_factor_of_one_pivot_at_a_time(rule, rng):
    """Over many rounds (150 pivots of 400 rows: candidates kept from round to round,
    rank updates by BLAS): F is the Cholesky factor on its pivots (F F^T = K_:P K_PP^-1
    K_P:, F[p_j, i] = 0 for i > j, to rounding), and greedy's pivots are those of plain pivoted
    Cholesky one pivot at a time (numpy, the largest residual each time)."""
    X = _data(rng, n=400, d=8)
    kern = _kernel("exp_dot", 2.0)  # full rank, a diagonal that varies
    K = kern.gram(X)
    piv, F = pivoted_cholesky(kern, X, 150, np.random.default_rng(3), rule)
    assert len(piv) == 150 == len(set(piv.tolist()))
    np.testing.assert_allclose(F @ F.T, _nystrom_ref(K[:, piv], K[np.ix_(piv, piv)]),
                               atol=1e-8 * np.abs(K).max())
    assert np.abs(np.triu(F[piv], 1)).max() <= 1e-8 * np.sqrt(np.abs(K).max())
    if rule == "greedy":
        resid, G, want = np.diag(K).copy(), np.zeros((400, 150)), []
        for t in range(150):
            s = int(np.argmax(resid))
            g = K[:, s] - G[:, :t] @ G[s, :t]
            G[:, t] = g / np.sqrt(g[s])
            resid -= G[:, t] ** 2
            resid[s] = 0.0
            want.append(s)
        np.testing.assert_array_equal(piv, want)


def test_rpcholesky_draws_its_first_pivot_by_the_diagonal():
    """RPCholesky's first pivot is drawn with probability k(x_i, x_i) / tr K: over 4000
    seeded draws the counts pass a chi-square test (p > 1e-4) on a kernel whose diagonal
    varies 1..82-fold."""
    from scipy.stats import chisquare

    X = np.linspace(0.1, 3.0, 8)[:, None] * np.ones((1, 2))
    kern = _kernel("polynomial", 1.0)
    diag = np.diag(kern.gram(X))
    counts = np.zeros(8)
    for s in range(4000):
        piv, _ = pivoted_cholesky(kern, X, 1, np.random.default_rng(s), "rpcholesky")
        counts[piv[0]] += 1
    assert chisquare(counts, 4000 * diag / diag.sum()).pvalue > 1e-4


def _rpcholesky_pair_probabilities(K):
    """P(first pivot i, second pivot j) of RPCholesky one pivot at a time, exactly: i by
    diag(K), then j by the diagonal of the Schur complement on i."""
    d = np.diag(K)
    P = np.zeros_like(K)
    for i in range(len(d)):
        r = np.clip(d - K[:, i] ** 2 / K[i, i], 0, None)
        r[i] = 0.0
        P[i] = d[i] / d.sum() * r / r.sum()
    return P


def test_rpcholesky_by_rounds_draws_its_pivots_as_one_at_a_time():
    """The rounds' candidates, accepted with probability r / r0 (accelerated RPCholesky), give
    the pivots the distribution of one draw at a time: the first two pivots' 30 ordered
    pairs over 3000 seeded runs pass a chi-square test against the exact probabilities
    (p > 1e-4; cells expecting fewer than 5 pooled).  Accepting every candidate (no
    rejection) fails it (p ~ 1e-180 here): the second pivot would follow diag(K), not the
    residual."""
    from scipy.stats import chisquare

    X = np.linspace(0.2, 1.6, 6)[:, None] * np.array([[1.0, 0.5]])
    kern = _kernel("gaussian", 0.6)
    K = kern.gram(X)
    P = _rpcholesky_pair_probabilities(K)
    counts = np.zeros_like(P)
    runs = 3000
    for s in range(runs):
        piv, _ = pivoted_cholesky(kern, X, 2, np.random.default_rng(s), "rpcholesky")
        counts[piv[0], piv[1]] += 1
    off = ~np.eye(6, dtype=bool)
    exp, got = runs * P[off], counts[off]
    small = exp < 5
    if small.any():
        exp = np.append(exp[~small], exp[small].sum())
        got = np.append(got[~small], got[small].sum())
    assert counts[~off].sum() == 0  # a pivot is never drawn twice
    assert chisquare(got, exp).pvalue > 1e-4


def test_ridge_leverage_with_every_row_as_pilot_is_the_exact_score(rng):
    """With the pilot = all n rows, the scores are exactly diag(K (K + n lam I)^-1), the
    lam-ridge leverage scores (Alaoui & Mahoney 2015), by numpy."""
    X = _data(rng, n=60)
    kern = _kernel()
    K = kern.gram(X)
    lam = 1e-2
    exact = np.diag(K @ np.linalg.inv(K + 60 * lam * np.eye(60)))
    got = ridge_leverage(kern, X, 60, lam, np.random.default_rng(0))
    np.testing.assert_allclose(got, exact, rtol=1e-7, atol=1e-10)


def test_kmeans_landmarks_are_a_fixed_point_of_lloyd(rng):
    """k-means centres: each landmark is the mean of the training rows nearest to it."""
    X = np.vstack([rng.normal(c, 0.2, size=(40, 2)) for c in (-3, 0, 3)])
    m = NYSTROM(kernel="gaussian", n_components=3, lengthscale=1.0, random_state=0,
                landmarks="kmeans").fit(X)
    L = m.landmarks_
    near = np.argmin(((X[:, None, :] - L[None]) ** 2).sum(-1), axis=1)
    for j in range(3):
        np.testing.assert_allclose(L[j], X[near == j].mean(0), atol=1e-6)


@pytest.mark.parametrize("rule", [r for r in LANDMARK_RULES if r != "uniform"])
def test_each_rule_passes_the_conformance_checks(rule):
    """The conformance checks a data-dependent map can pass (uniform is the contract
    suite's default).  greedy is deterministic: other seeds give the same map, so the check
    that they differ does not apply.  k-means is not continuous in its input: float32 rows
    (40 points, 32 centres) converge to another local optimum than float64 ones, so only the
    gap of the two estimates differs, which the map declares (tags.unstable_fit): the check
    reports it and still checks every output's dtype."""
    checks = ["construct", "output", "dtype", "reproducible"]  # greedy: declared deterministic
    report = check_feature_map("nystrom", "gaussian", params={"landmarks": rule},
                               n_redraws=40, checks=checks, raise_on_fail=False)
    assert not report.failed, str(report)
    if rule == "kmeans":
        assert "not compared: k-means centres are a local optimum" in str(report), str(report)


def test_a_bad_rule_or_lambda_is_refused_naming_the_key():
    from rffbench.errors import ConfigError

    with pytest.raises(ConfigError, match=r"features.params.landmarks='random' is not allowed"
                                          r".*uniform, kmeans, leverage, rpcholesky, greedy"):
        NYSTROM.check_params(8, "gaussian", landmarks="random")
    with pytest.raises(ConfigError, match=r"features.params.landmark_lam=0 is not allowed"):
        NYSTROM.check_params(8, "gaussian", landmark_lam=0, landmarks="leverage")
    for rule in set(LANDMARK_RULES) - {"leverage"}:  # the ridge of the leverage scores only
        with pytest.raises(ConfigError, match=rf"^features.params.landmark_lam=0.5 is not "
                                              rf"allowed: it has no effect here \(landmarks="
                                              rf"{rule} does not use it; landmarks=leverage "
                                              rf"does\); leave it at its default 0.001$"):
            NYSTROM.check_params(8, "gaussian", landmark_lam=0.5, landmarks=rule)
    NYSTROM.check_params(8, "gaussian", landmark_lam=0.5, landmarks="leverage")


def test_leverage_scores_of_repeated_rows_with_a_vanishing_ridge_are_the_limit(rng):
    """lam = 1e-300 on a pilot with repeated rows (K_SS singular): finite, non-negative
    residuals, the lam -> 0 limit: 0 on the pilot's rows (they are in its span) and the
    exact projection residual elsewhere."""
    from rffbench.features.nystrom import leverage_residuals

    X = _data(rng, n=30)
    X = np.vstack([X, X])
    kern = _kernel()
    r = leverage_residuals(kern, X, 60, 1e-300, np.random.default_rng(0))
    assert np.isfinite(r).all() and (r >= 0).all()
    np.testing.assert_allclose(r, 0.0, atol=1e-8)  # every row is a pilot row (all 60)
    half = leverage_residuals(kern, X[:30], 10, 1e-300, np.random.default_rng(1))
    K = kern.gram(X[:30])
    S = np.sort(np.random.default_rng(1).choice(30, 10, replace=False))
    exact = np.diag(K) - np.einsum("ij,ji->i", K[:, S], np.linalg.pinv(K[np.ix_(S, S)],
                                                                        rcond=1e-13) @ K[S])
    np.testing.assert_allclose(half, np.maximum(exact, 0), atol=1e-8)


@pytest.mark.parametrize("rule", LANDMARK_RULES)
def test_sparse_input_gives_the_dense_rows_landmarks(rule, rng):
    import scipy.sparse as sp

    X = rng.random((50, 4))
    X[X < 0.5] = 0.0
    kw = dict(kernel="gaussian", n_components=8, lengthscale=1.0, random_state=1,
              landmarks=rule)
    a = NYSTROM(**kw).fit(sp.csr_matrix(X)).transform(sp.csr_matrix(X))
    b = NYSTROM(**kw).fit(X).transform(X)
    np.testing.assert_allclose(a @ a.T, b @ b.T, atol=1e-12)


@pytest.mark.parametrize("name", sorted(KERNELS.builtins()))
def test_the_diagonal_is_the_reference_grams(name, rng):
    """kernel_diagonal, k(0) for a shift-invariant kernel and blocks of Gram otherwise, is
    the diagonal of the kernel's independent reference Gram, over more rows than a block;
    a shift-invariant kernel's is k(0) exactly."""
    X = np.abs(rng.normal(size=(70, 3))) + 0.1  # in every kernel's domain (chi2: x >= 0)
    k = KERNELS[name](lengthscale=1.7).fit(X)
    want = np.diag(reference_gram(name, X, X, 1.7))
    got = kernel_diagonal(k, X)
    # arccos0: theta = arccos(x.y / |x||y|) at x = y is arccos(1 - ~1e-16) ~ 1.5e-8 in both
    # (arccos' condition at 1), so k(x, x) = 1 - theta / pi is 1 to ~1e-8 only
    tol = 2e-8 if name == "arccos0" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=1e-14)
    if k.shift_invariant:
        assert (got == got[0]).all() and got[0] == float(k.k_of_delta(np.zeros((1, 3)))[0])
