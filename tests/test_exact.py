"""Exact KRR without the Gram: the blocked kernel operator against the dense Gram
for every kernel, the Nystrom preconditioner against its definition, conjugate
gradients against the Cholesky solve, non-convergence and bad input."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from rffbench import exact
from rffbench.errors import ConfigError
from rffbench.kernels import KERNELS, make_kernel


def _data(rng, n=301, d=4):
    # non-negative, so the chi2 kernels take it too; n is not a multiple of the tile
    return rng.uniform(0.05, 1.0, size=(n, d))


@pytest.mark.parametrize("name", list(KERNELS))
def test_operator_equals_dense_gram_for_every_kernel(rng, name):
    X = _data(rng)
    k = make_kernel(name, lengthscale=0.8).fit(X)
    K = k.gram(X)
    op = exact.KernelOperator(k, X, tile=64)
    V = rng.standard_normal((X.shape[0], 3))
    got = op.matvec(V)
    np.testing.assert_allclose(got, K @ V, rtol=0, atol=1e-12 * np.abs(K).sum(1).max())
    idx = np.array([0, 5, 77, 300])
    np.testing.assert_allclose(op.columns(idx), K[:, idx], rtol=0, atol=1e-13 * np.abs(K).max())


@pytest.mark.parametrize("name,params,d", [
    ("linear", {}, 1), ("linear", {}, 6), ("polynomial", {"degree": 1}, 3),
    ("polynomial", {}, 1), ("polynomial", {}, 5), ("polynomial", {"degree": 3, "coef0": 0.0}, 4),
    ("polynomial", {"degree": 4, "coef0": 2.5}, 3)])
def test_explicit_features_reproduce_the_gram(rng, name, params, d):
    """phi(X) phi(Y)^T = K(X, Y) to rounding for the kernels with a finite feature map, with
    feature_dimension(d) columns (the monomials of degree p of (x / l, sqrt(c)): C(d + p, p),
    C(d + p - 1, p) when c = 0)."""
    import math

    X, Y = rng.standard_normal((40, d)), rng.standard_normal((25, d))
    k = make_kernel(name, lengthscale=0.9, **params).fit(X)
    P, Q = k.explicit_features(k.inputs(X)), k.explicit_features(k.inputs(Y))
    p = params.get("degree", 2) if name == "polynomial" else 1
    extra = 1 if name == "polynomial" and params.get("coef0", 1.0) > 0 else 0
    assert P.shape == (40, k.feature_dimension(d)) == (40, math.comb(d + extra + p - 1, p))
    K = k.gram(X, Y)
    np.testing.assert_allclose(P @ Q.T, K, rtol=0, atol=1e-13 * np.abs(K).max())


def test_kernels_without_a_finite_feature_map_say_so():
    k = make_kernel("gaussian").fit(np.eye(3))
    assert k.feature_dimension(3) is None
    with pytest.raises(NotImplementedError, match="no explicit feature map"):
        k.explicit_features(np.eye(3))


@pytest.mark.parametrize("name,params,n,features", [
    ("linear", {}, 301, 4), ("polynomial", {}, 301, 15), ("polynomial", {}, 100, None),
    ("polynomial", {"degree": 4}, 301, None), ("gaussian", {}, 301, None)])
def test_operator_goes_through_few_explicit_features(rng, name, params, n, features):
    """The operator takes products, columns and the diagonal through the kernel's explicit
    features when they are few (n >= FEATURE_ROWS M, M <= FEATURES_PER_COORD (d + 1)),
    equal to the Gram's to rounding, and through the tiles otherwise (polynomial degree 2
    at n = 100: 8 x 15 > 100; degree 4 at d = 4: 70 features, 8 x 70 > 301)."""
    X = _data(rng, n=n)
    k = make_kernel(name, lengthscale=0.8, **params).fit(X)
    op = exact.KernelOperator(k, X)
    assert op.n_features == features and (op.phi is None) == (features is None)
    K = k.gram(X)
    V = rng.standard_normal((n, 2))
    np.testing.assert_allclose(op.matvec(V), K @ V, rtol=0, atol=1e-13 * np.abs(K).sum(1).max())
    np.testing.assert_allclose(op.diagonal(), np.diag(K), rtol=0, atol=1e-13 * np.abs(K).max())
    idx = np.array([0, 7, n - 1])
    np.testing.assert_allclose(op.columns(idx), K[:, idx], rtol=0, atol=1e-13 * np.abs(K).max())
    assert op.products == 1
    assert exact.KernelOperator(k, X, fused=False).n_features is None  # the Python tiles


def test_intersection_products_go_through_sorted_coordinates(rng):
    """The intersection kernel's products go through its sorted coordinates (float64 whatever
    the precision; ties from zeros), equal to the Gram's product to rounding; the Python
    tiles stay the Python tiles."""
    X = _data(rng)
    X[::3, 1] = 0.0
    k = make_kernel("intersection", lengthscale=0.8).fit(X)
    K = k.gram(X)
    V = rng.standard_normal((X.shape[0], 2))
    for precision in ("float64", "mixed"):
        op = exact.KernelOperator(k, X, precision=precision)
        assert op.route == "sorted coordinates" and op.n_features is None
        np.testing.assert_allclose(op.matvec(V), K @ V, rtol=0,
                                   atol=1e-13 * np.abs(K).sum(1).max())
    assert exact.KernelOperator(k, X, fused=False).route == "python tiles"
    assert exact.KernelOperator(make_kernel("gaussian").fit(X), X).route == "tiles"


def test_operator_is_exactly_symmetric(rng):
    X = _data(rng)
    op = exact.KernelOperator(make_kernel("gaussian", lengthscale=0.5).fit(X), X, tile=50)
    E = np.eye(X.shape[0])
    K = op.matvec(E)  # column j is K e_j
    assert np.array_equal(K, K.T)


def test_nystrom_preconditioner_is_the_nystrom_approximation(rng):
    """F F^T = K[:, S] K[S, S]^+ K[S, :] on the pivots S (the Nystrom approximation),
    K - F F^T is PSD with the recorded trace, and solve() is lam (F F^T + lam I)^-1."""
    X = _data(rng, n=200)
    k = make_kernel("gaussian", lengthscale=0.6).fit(X)
    K = k.gram(X)
    op = exact.KernelOperator(k, X, tile=64)
    pc = exact.NystromPreconditioner(op, 40, np.random.default_rng(3), block=10)
    S = pc.landmarks
    assert pc.rank == 40 and len(np.unique(S)) == 40
    C = K[:, S]
    want = C @ np.linalg.pinv(K[np.ix_(S, S)], rcond=1e-12, hermitian=True) @ C.T
    F = pc.F
    np.testing.assert_allclose(F @ F.T, want, atol=1e-8 * np.abs(want).max())
    E = K - F @ F.T
    assert np.linalg.eigvalsh(E).min() > -1e-10
    assert pc.residual_trace == pytest.approx(np.trace(E), rel=1e-8, abs=1e-10)
    lam = 1e-2
    R = rng.standard_normal((200, 2))
    np.testing.assert_allclose(pc.solve(R, lam),
                               lam * np.linalg.solve(F @ F.T + lam * np.eye(200), R),
                               rtol=1e-8, atol=1e-10)


def test_preconditioner_survives_duplicate_points(rng):
    X = np.repeat(_data(rng, n=30), 5, axis=0)  # 30 distinct points, each 5 times
    op = exact.KernelOperator(make_kernel("gaussian", lengthscale=0.5).fit(X), X)
    pc = exact.NystromPreconditioner(op, 100, np.random.default_rng(0))
    assert pc.rank <= 30 and np.all(np.isfinite(pc.F))
    assert pc.residual_trace < 1e-8 * pc.initial_trace


def test_full_rank_preconditioner_converges_at_once(rng):
    """With every point a landmark P = K + lam I: one iteration solves the system."""
    X = _data(rng, n=150)
    k = make_kernel("laplacian", lengthscale=0.7).fit(X)
    op = exact.KernelOperator(k, X, tile=64)
    pc = exact.NystromPreconditioner(op, 150, np.random.default_rng(0))
    Y = rng.standard_normal((150, 1))
    _, info = exact.pcg(op, Y, 1e-2, pc, tol=1e-9, max_iter=50)
    assert info["converged"] and info["iterations"] <= 2


@pytest.mark.parametrize("name,lam", [("gaussian", 1e-3), ("matern", 1e-2), ("arccos1", 1e-2),
                                      ("polynomial", 1e-2), ("linear", 1e-2)])
def test_cg_agrees_with_cholesky_to_the_tolerance(rng, name, lam):
    """y - (K + lam I) a = r gives K (a_cg - a_chol) = -K (K + lam I)^-1 r, whose norm is
    at most ||r|| <= tol ||y||: the fitted values agree to the tolerance per column."""
    X = rng.standard_normal((900, 5))
    Y = np.column_stack([np.sin(X[:, 0]) + 0.1 * rng.standard_normal(900),
                         np.zeros(900), X[:, 1] ** 2])
    tol = 1e-6
    k = make_kernel(name, lengthscale=2.0).fit(X)
    chol = exact.ExactKRR(k, lam, center=False, solver="cholesky").fit(X, Y)
    cg = exact.ExactKRR(k, lam, center=False, solver="cg", tol=tol, precond_rank=100,
                        random_state=0).fit(X, Y)
    info = cg.solver_info_
    assert info["solver"] == "cg" and info["converged"] and info["residual"] <= tol
    # polynomial (degree 2) and linear at d = 5: products through 21 and 5 explicit features
    assert info["features"] == {"polynomial": 21, "linear": 5}.get(name)
    K = k.gram(X)
    true_res = Y - (K @ cg.dual_coef_ + lam * cg.dual_coef_)
    norms = np.linalg.norm(Y, axis=0)
    assert np.all(np.linalg.norm(true_res, axis=0) <= tol * norms + 1e-12)
    diff = np.linalg.norm(K @ (cg.dual_coef_ - chol.dual_coef_), axis=0)
    assert np.all(diff <= tol * norms * (1 + 1e-6) + 1e-9)
    assert np.all(cg.dual_coef_[:, 1] == 0)  # a zero column needs no iteration


@pytest.mark.parametrize("name", ["gaussian", "laplacian", "arccos1"])
def test_mixed_precision_residual_is_the_float32_operators(rng, name):
    """precision=mixed solves (K32 + lam I) a = y with K32 the float32 tiles' kernel: the
    float64 residual is r32 + (K32 - K) a exactly, so it is at most tol ||y|| +
    ||(K32 - K) a||.  The test computes K32 densely from the same tile code; the operator
    uses the transpose of each upper tile for the lower one, whose float32 rounding can
    differ from the dense tile's by as much as K32 from K: hence the factor 2."""
    from rffbench.exact.tiles import TiledRows, tiled_gram

    X = rng.standard_normal((700, 5))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(700)
    tol, lam = 1e-6, 1e-3
    k = make_kernel(name, lengthscale=2.0).fit(X)
    m = exact.ExactKRR(k, lam, center=False, solver="cg", tol=tol, precond_rank=100,
                       random_state=0, precision="mixed").fit(X, y)
    info = m.solver_info_
    assert info["converged"] and info["precision"] == "mixed"
    a = m.dual_coef_[:, 0]
    spec = k.tile_spec()
    K = k.gram(X)
    K32 = tiled_gram(spec, TiledRows(spec, k.inputs(X).astype(np.float32)),
                     TiledRows(spec, k.inputs(X).astype(np.float32)))
    assert 0 < np.abs(K32 - K).max() <= 1e-6 * np.abs(K).max()  # float32 values, not float64
    r64 = np.linalg.norm(y - (K @ a + lam * a))
    assert r64 <= tol * np.linalg.norm(y) + 2 * np.linalg.norm((K32 - K) @ a) + 1e-12


def test_preconditioner_cuts_iterations(rng):
    X = rng.standard_normal((1200, 6))
    y = np.sin(X[:, 0])[:, None]
    k = make_kernel("gaussian", lengthscale=3.0).fit(X)
    op = exact.KernelOperator(k, X)
    _, plain = exact.pcg(op, y, 1e-3, None, tol=1e-6, max_iter=1000)
    pc = exact.NystromPreconditioner(op, 200, np.random.default_rng(0))
    _, pre = exact.pcg(op, y, 1e-3, pc, tol=1e-6, max_iter=1000)
    assert plain["converged"] and pre["converged"]
    assert pre["iterations"] * 5 < plain["iterations"]


def test_not_converged_warns_and_says_so(rng):
    X = rng.standard_normal((400, 3))
    y = np.sin(X[:, 0])
    m = exact.ExactKRR(lam=1e-8, solver="cg", max_iter=3, precond_rank=5, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"cg not converged: relative residual .* > "
                                               r"model.cg_tol=1e-06 after 3 iterations"):
        m.fit(X, y)
    assert not m.solver_info_["converged"] and m.solver_info_["residual"] > 1e-6
    assert m.solver_info_["iterations"] == 3


def test_auto_solver_switches_at_the_documented_size():
    assert exact.choose_solver("auto", exact.CHOLESKY_AUTO_MAX_N) == "cholesky"
    assert exact.choose_solver("auto", exact.CHOLESKY_AUTO_MAX_N + 1) == "cg"
    assert exact.choose_solver("cg", 10) == "cg"


def test_select_lambda_cg_equals_cholesky(rng):
    X = rng.standard_normal((500, 3))
    Y = (np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(500))[:, None]
    k = make_kernel("gaussian", lengthscale=1.0).fit(X)
    grid = [1e-2, 1e-1, 1.0]
    a = exact.select_lambda(k, X[:400], Y[:400], X[400:], grid)
    b = exact.select_lambda(k, X[:400], Y[:400], X[400:], grid, solver="cg", tol=1e-10,
                            precond_rank=100, random_state=0)
    for pa, pb in zip(a, b):
        np.testing.assert_allclose(pb, pa, atol=1e-6)
    c = exact.select_lambda(k, X[:400], Y[:400], X[400:], [1e-9], solver="cg", max_iter=2,
                            precond_rank=3, random_state=0)
    assert isinstance(c[0], str) and c[0].startswith("cg not converged")


@pytest.mark.parametrize("kw,msg", [
    (dict(solver="lu"), "model.exact_solver='lu' is not allowed: use one of auto, cholesky, cg"),
    (dict(tol=0.0), "model.cg_tol=0.0 is not allowed: use a number in [1e-14, 1)"),
    (dict(max_iter=0), "model.cg_max_iter=0 is not allowed: use an integer >= 1"),
    (dict(precond_rank=0), "model.precond_rank=0 is not allowed: use an integer >= 1"),
])
def test_bad_solver_parameters(rng, kw, msg):
    X = rng.standard_normal((20, 2))
    with pytest.raises(ConfigError) as e:
        exact.ExactKRR(**kw).fit(X, X[:, 0])
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_check_estimator_with_cg():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(exact.ExactKRR(solver="cg", lam=1e-2, random_state=0))


@pytest.mark.parametrize("name", list(KERNELS.builtins()))
@pytest.mark.parametrize("precision", ["float64", "mixed"])
def test_the_solve_records_the_route_and_precision_its_products_took(rng, name, precision):
    """What a record says is what ran: the cg fit's info and the records' note name the
    operator's own route and the precision of its products ("mixed" only on the fused
    tiles; the kernels whose products go through explicit features, sorted coordinates or
    tiles from Python say float64, and that the precision asked does not apply)."""
    from rffbench.measure.learning import products_note

    X = _data(rng, n=40, d=3)
    k = make_kernel(name, lengthscale=1.3).fit(X)
    m = exact.ExactKRR(k, 1e-2, solver="cg", precision=precision, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m.fit(X, rng.standard_normal(40))
    info = m.solver_info_
    op = exact.KernelOperator(k, X, precision=precision)
    assert info["route"] == op.route and info["precision"] == op.precision_used
    assert info["precision_asked"] == precision
    assert op.precision_used == (precision if op.route == "tiles" else "float64")
    note = products_note(info)
    assert ("float32 tiles" in note) == (op.precision_used == "mixed"), note
    assert ("does not apply" in note) == (op.precision_used != precision), note
    assert {"tiles": "fused kernel products", "python tiles": "tile by tile through the "
            "kernel's Gram", "sorted coordinates": "sorted coordinates",
            "explicit features": "explicit features"}[op.route] in note, note
