"""Models: exact KRR vs scikit-learn, chunked ridge vs a direct solve, SGD,
target encoding, lambda selection; the peer maps (sklearn_rbf, nystrom)."""
import numpy as np
import pytest

from rffbench import exact
from rffbench.errors import ConfigError, RffbenchError
from rffbench.exact import with_intercept
from rffbench.features import FEATURE_MAPS, MapTags
from rffbench.kernels import make_kernel
from rffbench.measure.learning import _choose
from rffbench.models import FeatureRidge, FeatureSGD, NormalEquations, decode, encode_targets


@pytest.fixture
def reg_data(rng):
    X = rng.uniform(-1, 1, size=(240, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=240)
    return X, y


@pytest.mark.parametrize("kname,skname,gamma", [("gaussian", "rbf", lambda l: 0.5 / l**2),
                                                ("laplacian", "laplacian", lambda l: 1 / l)])
def test_exact_krr_equals_sklearn_kernel_ridge(reg_data, kname, skname, gamma):
    from sklearn.kernel_ridge import KernelRidge

    X, y = reg_data
    Xtr, Xte, ytr = X[:180], X[180:], y[:180]
    ls, lam = 0.7, 1e-3
    kernel = make_kernel(kname, lengthscale=ls).fit(None)
    ref = KernelRidge(alpha=lam, kernel=skname, gamma=gamma(ls)).fit(Xtr, ytr)
    got = exact.ExactKRR(kernel, lam, center=False).fit(Xtr, ytr[:, None]).predict(Xte)[:, 0]
    np.testing.assert_allclose(got, ref.predict(Xte), rtol=0, atol=1e-8)
    # center: the unpenalised intercept, the bordered system [[K + lam I, 1], [1^T, 0]]
    # [alpha; b] = [y; 0] solved directly
    n = Xtr.shape[0]
    A = np.zeros((n + 1, n + 1))
    A[:n, :n] = kernel.gram(Xtr) + lam * np.eye(n)
    A[:n, n] = A[n, :n] = 1.0
    sol = np.linalg.solve(A, np.append(ytr, 0.0))
    got_c = exact.ExactKRR(kernel, lam, center=True).fit(Xtr, ytr[:, None]).predict(Xte)[:, 0]
    np.testing.assert_allclose(got_c, kernel.gram(Xte, Xtr) @ sol[:n] + sol[n], rtol=0,
                               atol=1e-8)


def test_exact_krr_not_positive_definite_is_a_clear_error():
    K = -np.eye(3)
    with pytest.raises(RffbenchError, match="model.lam=1e-09: K \\+ lam I is not positive"):
        exact.solve_regularised(K, np.ones((3, 1)), 1e-9)


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("rows", [1, 7, 1000])
def test_ridge_equals_direct_solve_whatever_the_chunk(reg_data, center, rows):
    X, y = reg_data
    kernel = make_kernel("gaussian", lengthscale=0.8)
    fmap = FEATURE_MAPS["rff"](kernel=kernel, n_components=64, random_state=3).fit(X)
    Y = np.stack([y, -2 * y + 1], axis=1)  # two outputs
    lam = 1e-2
    model = FeatureRidge(lam, center=center, chunk_rows=rows).fit(fmap, X, Y)
    Z = fmap.transform(X)
    if center:  # an unpenalised intercept: centred features and targets (scikit-learn's Ridge)
        from sklearn.linear_model import Ridge

        ref = Ridge(alpha=lam, fit_intercept=True, solver="cholesky").fit(Z, Y)
        W, off = ref.coef_.T, ref.intercept_
    else:
        W, off = np.linalg.solve(Z.T @ Z + lam * np.eye(64), Z.T @ Y), np.zeros(2)
    np.testing.assert_allclose(model.coef_, W, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.predict(X[:30]), Z[:30] @ W + off, rtol=1e-9, atol=1e-10)
    assert set(model.times_) == {"map_time_s", "accumulate_time_s", "solve_time_s"}


def test_normal_equations_float32_chunks(reg_data):
    X, _ = reg_data
    Z = np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32)
    ne = NormalEquations(8, 1)
    ne.add_chunk(Z[:20], np.ones((20, 1)))
    ne.add_chunk(Z[20:], np.ones((30, 1)))
    Z64 = Z.astype(np.float64)
    np.testing.assert_allclose(np.triu(ne.G), np.triu(Z64.T @ Z64), rtol=1e-12)
    assert ne.n == 50 and ne.ysum[0] == 50


def test_targets_encoding_and_classification_rule():
    y = np.array([2, 0, 1, 2])
    Y = encode_targets(y, "classification", 3)
    np.testing.assert_array_equal(Y, np.eye(3)[y])
    np.testing.assert_array_equal(decode(Y + 0.1, "classification"), y)
    r = encode_targets(np.array([1.5, -2.0]), "regression", 0)
    assert r.shape == (2, 1) and decode(r, "regression").tolist() == [1.5, -2.0]


def test_ridge_select_lambda_equals_separate_fits(reg_data):
    X, y = reg_data
    fmap = FEATURE_MAPS["rff_pairs"](kernel=make_kernel("gaussian", lengthscale=0.8),
                                     n_components=32, random_state=0).fit(X)
    Y = y[:, None]
    grid = [1e-4, 1e-1, 10.0]
    preds = FeatureRidge(None, chunk_rows=50).select_lambda(fmap, X[:200], Y[:200], X[200:], grid)
    for lam, P in zip(grid, preds):
        want = FeatureRidge(lam).fit(fmap, X[:200], Y[:200]).predict(X[200:])
        np.testing.assert_allclose(P, want, rtol=1e-9, atol=1e-12)


def test_exact_select_lambda_equals_separate_fits(reg_data):
    X, y = reg_data
    kernel = make_kernel("cauchy", lengthscale=0.9)
    grid = [1e-3, 1.0]
    preds = exact.select_lambda(kernel, X[:150], y[:150, None], X[150:], grid)
    for lam, P in zip(grid, preds):
        want = exact.ExactKRR(kernel, lam).fit(X[:150], y[:150, None]).predict(X[150:])
        np.testing.assert_allclose(P, want, rtol=1e-9, atol=1e-12)


def test_choose_lambda_smallest_error_ties_to_larger():
    lam, note = _choose([1e-3, 1e-2, 1e-1], [0.2, 0.1, 0.1])
    assert lam == 1e-1 and "0.01: 0.1" in note


def test_sgd_learns_and_selects(rng):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = (X - X.mean(0)) / (X.std(0) + 1e-9)
    fmap = FEATURE_MAPS["rff"](kernel=make_kernel("gaussian", lengthscale=10.0),
                               n_components=256, random_state=0).fit(X)
    m = FeatureSGD(1e-1, "classification", epochs=3, chunk_rows=300).fit(fmap, X[:1400], y[:1400])
    err = np.mean(m.predict(X[1400:]) != y[1400:])
    assert err < 0.2  # chance is 0.9
    preds = m.select_lambda(fmap, X[:1000], y[:1000], X[1000:1400], [1e-2, 1.0])
    assert len(preds) == 2 and all(p.shape == (400,) for p in preds)


def test_sklearn_rbf_is_rbfsampler(rng):
    from sklearn.kernel_approximation import RBFSampler

    X = rng.normal(size=(30, 4))
    k = make_kernel("gaussian", lengthscale=1.3)
    ours = FEATURE_MAPS["sklearn_rbf"](kernel=k, n_components=50, random_state=7).fit(X)
    ref = RBFSampler(gamma=0.5 / 1.3**2, n_components=50,
                     random_state=ours.sampler_.random_state).fit(X)
    np.testing.assert_array_equal(ours.transform(X), ref.transform(X))
    assert ours.transform(X.astype(np.float32)).dtype == np.float32
    with pytest.raises(ConfigError, match="features=sklearn_rbf is not allowed with "
                                          "kernel=laplacian"):
        FEATURE_MAPS["sklearn_rbf"](kernel="laplacian", n_components=8).fit(X)


@pytest.mark.parametrize("kname", ["gaussian", "laplacian", "matern"])
def test_nystrom_exact_on_its_landmarks_and_any_kernel(rng, kname):
    X = rng.normal(size=(40, 3))
    k = make_kernel(kname, lengthscale=1.5)
    f = FEATURE_MAPS["nystrom"](kernel=k, n_components=40, random_state=0).fit(X)
    Z = f.transform(X)
    np.testing.assert_allclose(Z @ Z.T, k.gram(X), atol=1e-8)  # D = n: K reproduced
    f2 = FEATURE_MAPS["nystrom"](kernel=k, n_components=10, random_state=0).fit(X)
    Z2 = f2.transform(X)
    L = f2.landmarks_
    want = k.gram(X, L) @ np.linalg.pinv(k.gram(L), rcond=1e-12) @ k.gram(L, X)
    np.testing.assert_allclose(Z2 @ Z2.T, want, atol=1e-8)
    assert f2.transform(X.astype(np.float32)).dtype == np.float32
    # a run refuses D > n_train up front; the Python API follows scikit-learn's Nystroem:
    # a warning, and n_train landmarks (all of them, K reproduced)
    with pytest.raises(ConfigError, match="D=41 is not allowed for features=nystrom"):
        FEATURE_MAPS["nystrom"].check_data(41, 40)
    with pytest.warns(UserWarning, match="n_components=41 > n_samples=40"):
        f3 = FEATURE_MAPS["nystrom"](kernel=k, n_components=41, random_state=0).fit(X)
    Z3 = f3.transform(X)
    assert Z3.shape == (40, 40) and f3.get_feature_names_out().shape == (40,)
    np.testing.assert_allclose(Z3 @ Z3.T, k.gram(X), atol=1e-8)


def test_ridge_ignores_a_constant_added_to_the_kernel(rng):
    """The unpenalised intercept absorbs the offset: ridge on [Z, sqrt(c) 1] equals ridge on
    Z (c > 0), and kernel ridge with Z Z^T + c (any sign, the bordered dual) equals both."""
    X = rng.uniform(0, 1, size=(150, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] + 0.05 * rng.normal(size=150)
    Y = np.stack([y, 1 - y], axis=1)
    fmap = FEATURE_MAPS["ssr"](kernel="gaussian", n_components=2 * 4 * 4, lengthscale=0.5,
                               random_state=0).fit(X)
    c = fmap.kernel_offset_
    assert c != 0

    class WithColumn:  # the map with its offset as a constant column: Z Z^T + |c|
        n_components, tags = fmap.n_components_ + 1, MapTags()

        def transform(self, A):
            return np.hstack([fmap.transform(A), np.full((A.shape[0], 1), np.sqrt(abs(c)))])

    lam = 1e-2
    plain = FeatureRidge(lam).fit(fmap, X, Y)
    col = FeatureRidge(lam).fit(WithColumn(), X, Y)
    Xt = rng.uniform(0, 1, size=(40, 3))
    np.testing.assert_allclose(col.predict(Xt), plain.predict(Xt), rtol=0, atol=1e-9)
    assert abs(col.coef_[-1]).max() < 1e-9  # the constant column gets no weight
    Z, Zt = fmap.transform(X), fmap.transform(Xt)
    for cc in (c, -abs(c), -5.0, 5.0):  # K + lam I may be indefinite for c < 0: LU
        A = Z @ Z.T + cc + lam * np.eye(len(X))
        alpha, b = with_intercept(lambda B: np.linalg.solve(A, B), Y)
        np.testing.assert_allclose((Zt @ Z.T + cc) @ alpha + b, plain.predict(Xt), rtol=0,
                                   atol=1e-8)


@pytest.mark.parametrize("lengthscale,n", [(3.0, 400), (0.05, 60)])
@pytest.mark.parametrize("center", [True, False])
def test_ridge_on_sparse_features_primal_and_dual_equal_the_dense_solve(reg_data, lengthscale,
                                                                         n, center):
    """binning's sparse features: with fewer columns than rows ridge accumulates Z^T Z from
    the sparse products (primal), with more it solves the dual; both are the dense solve's
    weights and predictions, and select_lambda equals separate fits."""
    from sklearn.linear_model import Ridge

    from rffbench.models import _dual

    X, y = reg_data
    X, Y = X[:n], np.stack([y[:n], 1 - y[:n]], axis=1)
    fmap = FEATURE_MAPS["binning"](kernel=make_kernel("laplacian", lengthscale=lengthscale),
                                   n_components=8, random_state=1).fit(X)
    assert _dual(fmap, X) == (lengthscale < 1)  # many small bins: more columns than rows
    lam = 0.3
    model = FeatureRidge(lam, center=center, chunk_rows=37).fit(fmap, X, Y)
    Z = fmap.transform(X).toarray()
    ref = Ridge(alpha=lam, fit_intercept=center, solver="svd").fit(Z, Y)
    np.testing.assert_allclose(model.predict(X[:25]), ref.predict(Z[:25]), rtol=1e-8,
                               atol=1e-9)
    np.testing.assert_allclose(model.coef_, ref.coef_.T, rtol=1e-7, atol=1e-9)
    preds = FeatureRidge(None, center=center, chunk_rows=37).select_lambda(
        fmap, X[:n // 2], Y[:n // 2], X[n // 2:], [0.1, 3.0])
    for lam, P in zip([0.1, 3.0], preds):
        want = FeatureRidge(lam, center=center).fit(fmap, X[:n // 2], Y[:n // 2]).predict(
            X[n // 2:])
        np.testing.assert_allclose(P, want, rtol=1e-8, atol=1e-10)
