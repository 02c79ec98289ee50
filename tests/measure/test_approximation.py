"""The approximation measurement against a plain-numpy computation."""
import numpy as np
import pytest

from rffbench.errors import ConfigError
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import make_kernel
from rffbench.measure.approximation import BLOCK_ROWS, expected_fro_sq, gram_errors


@pytest.mark.parametrize("map_name", ["rff", "rff_pairs"])
@pytest.mark.parametrize("kname", ["gaussian", "laplacian"])
def test_gram_errors_match_numpy(map_name, kname, rng):
    n = BLOCK_ROWS + 77  # more than one block
    M = rng.normal(size=(n, 4))
    kernel = make_kernel(kname, lengthscale=2.0)
    fmap = FEATURE_MAPS[map_name](kernel=kernel, n_components=128, random_state=0).fit(M)
    got = gram_errors(kernel, fmap, M)
    Z = fmap.transform(M)
    K = kernel.gram(M)
    E = K - Z @ Z.T
    assert got["max_abs_error"] == pytest.approx(np.abs(E).max(), rel=1e-12)
    assert got["mean_abs_error"] == pytest.approx(np.abs(E).mean(), rel=1e-12)
    assert got["rel_fro_error"] == pytest.approx(np.linalg.norm(E) / np.linalg.norm(K), rel=1e-12)
    assert got["rel_spectral_error"] == pytest.approx(
        np.linalg.norm(E, 2) / np.linalg.norm(K, 2), rel=1e-7)
    # expected error, entry by entry from k(delta) and k(2 delta)
    diff = M[:, None, :] - M[None, :, :]
    k, k2 = kernel.k_of_delta(diff), kernel.k_of_delta(2 * diff)
    var = (1 + 0.5 * k2 - k**2) if map_name == "rff" else (1 + k2 - 2 * k**2)
    assert got["expected_rel_fro_error"] == pytest.approx(
        np.sqrt(var.sum() / 128) / np.linalg.norm(K), rel=1e-10)


@pytest.mark.parametrize("map_name", ["rff", "rff_pairs"])
def test_expected_frobenius_error_matches_redraws(map_name, rng):
    """Mean of ||K_hat - K||_F^2 over independent maps -> the exact expectation
    (5 standard errors of the mean of the observed squared errors)."""
    M = rng.normal(size=(40, 3))
    kernel = make_kernel("gaussian", lengthscale=1.5)
    K = kernel.gram(M)
    D, S = 32, 1500
    sq = np.empty(S)
    for s in range(S):
        Z = FEATURE_MAPS[map_name](kernel=kernel, n_components=D, random_state=s).fit(M) \
            .transform(M)
        sq[s] = np.sum((K - Z @ Z.T) ** 2)
    expected = expected_fro_sq(kernel, M, M, K, FEATURE_MAPS[map_name].tags.variance, D)
    assert abs(sq.mean() - expected) <= 5 * sq.std(ddof=1) / np.sqrt(S)


@pytest.mark.parametrize("map_name,kname", [("rff", "gaussian"), ("ssr", "arccos1"),
                                            ("ssr", "gaussian"), ("ssr", "arccos0"),
                                            ("binning", "laplacian")])
def test_cross_errors_are_those_of_k_x_y(map_name, kname, rng):
    """cross: the error of K(X, Y) for the halves X, Y of M, against numpy; the estimate
    includes the map's kernel_offset_ (ssr's centre term: nonzero for gaussian, arccos0)."""
    M = rng.normal(size=(2 * 300 + 1, 4))  # the odd point is left out
    kernel = make_kernel(kname, lengthscale=2.0)
    fmap = FEATURE_MAPS[map_name](kernel=kernel, n_components=120, random_state=0).fit(M)
    assert (fmap.kernel_offset_ != 0) == (map_name == "ssr" and kname != "arccos1")
    got = gram_errors(kernel, fmap, M, cross=True)
    Z = fmap.transform(M)
    Z = Z.toarray() if hasattr(Z, "toarray") else Z
    X, Y = M[:300], M[300:600]
    K = kernel.gram(X, Y)
    E = K - (Z[:300] @ Z[300:600].T + fmap.kernel_offset_)
    np.testing.assert_allclose(fmap.kernel_estimate(X, Y), K - E, rtol=0, atol=1e-12)
    assert got["max_abs_error"] == pytest.approx(np.abs(E).max(), rel=1e-12)
    assert got["rel_fro_error"] == pytest.approx(np.linalg.norm(E) / np.linalg.norm(K), rel=1e-12)
    assert got["rel_spectral_error"] == pytest.approx(
        np.linalg.norm(E, 2) / np.linalg.norm(K, 2), rel=1e-9)
    if map_name == "rff":
        diff = X[:, None, :] - Y[None, :, :]
        k, k2 = kernel.k_of_delta(diff), kernel.k_of_delta(2 * diff)
        assert got["expected_rel_fro_error"] == pytest.approx(
            np.sqrt((1 + 0.5 * k2 - k**2).sum() / 120) / np.linalg.norm(K), rel=1e-10)


def test_redraws_and_independent_samples_through_a_run():
    """redraws=R: the records hold the mean over R maps (spread: their sd), the first map is
    the single-draw run's, every draw is in approximation_redraws.csv; cross=independent:
    K(X, Y) of two independent samples of n_points / 2 training points."""
    from rffbench.experiment import run
    from rffbench.results import REDRAWS_FILE
    from tests.helpers import compose_config

    common = ["dataset=synthetic", "dataset.n=400", "features=ssr", "D=36", "dataset.d=5",
              "measure.bounds.enabled=false", "measure.learning.enabled=false",
              "measure.timing.enabled=false", "measure.approximation.n_points=120",
              "measure.approximation.cross=independent"]
    one, _ = run(compose_config(common))
    many, tables = run(compose_config([*common, "measure.approximation.redraws=6"]))
    fro = lambda df: df[df.metric == "rel_fro_error"].iloc[0]  # noqa: E731
    draws = tables[REDRAWS_FILE]
    v = draws[draws.metric == "rel_fro_error"].sort_values("redraw").value.to_numpy()
    assert len(v) == 6 and v[0] == pytest.approx(fro(one).value, rel=1e-12)
    assert fro(many).value == pytest.approx(v.mean(), rel=1e-12)
    assert fro(many).spread == pytest.approx(v.std(ddof=1), rel=1e-12)
    assert fro(many).n_repeats == 6 and len(set(np.round(v, 12))) == 6
    offs = draws[draws.metric == "kernel_offset"].value
    assert (offs != 0).all() and "independent samples of 60 training points" in fro(one).note
    assert "centre term" in fro(one).note


def test_rows_test_first_measures_the_first_test_rows_at_every_seed(monkeypatch):
    """rows=test_first: M is the first n_points test rows in the data's order, the same at
    every seed (only the map changes); more points than test rows is one line naming them."""
    from rffbench.experiment import run
    from rffbench.measure import approximation
    from tests.helpers import compose_config

    seen = []
    orig = approximation.points

    def spy(ctx, cfg):
        X, Y, note = orig(ctx, cfg)
        seen.append((X.copy(), np.asarray(ctx.data.X_test)[:X.shape[0]].copy(), note))
        return X, Y, note

    monkeypatch.setattr(approximation, "points", spy)
    common = ["dataset=wine", "dataset.split=ordered", "dataset.test_size=0.5",
              "D=16", "measure.bounds.enabled=false", "measure.learning.enabled=false",
              "measure.timing.enabled=false", "measure.approximation.n_points=40",
              "measure.approximation.rows=test_first"]
    recs = [run(compose_config([*common, f"seed={s}"]))[0] for s in (0, 1)]
    (X0, T0, note), (X1, T1, _) = seen
    np.testing.assert_array_equal(X0, T0)
    np.testing.assert_array_equal(X0, X1)
    assert note.startswith("M = the first 40 test points")
    fro = [r[r.metric == "rel_fro_error"].value.iloc[0] for r in recs]
    assert fro[0] != fro[1]  # the maps differ
    with pytest.raises(ConfigError, match=r"measure.approximation.n_points=100 is not allowed: "
                                          r"dataset=wine has 89 test points; use 2..89"):
        run(compose_config([*common[:-2], "measure.approximation.n_points=100",
                            "measure.approximation.rows=test_first"]))
