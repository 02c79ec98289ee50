"""The kernels and maps of the peer libraries' families (linear, exponential dot product, ANOVA
and intersection kernels; random projections, signed circulant, Random Maclaurin's H0/1,
compact and ANOVA features, Maji-Berg codes): exact Grams against independent references,
each numba kernel against a plain-numpy one, the estimates' mean and variance against the
kernel and the exact variance formulas, and runs through ``run.py``."""
import itertools
import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from conftest import compose_config, run_cli
from references import anova_reference, reference_gram
from scipy.linalg import circulant, hadamard

from rffbench import _numba as nbk
from rffbench.exact import kernel_times
from rffbench.experiment import run
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import make_kernel
from rffbench.theory import estimate_mse


#: the peer libraries' kernels (their references: tests/references.py)
FAMILY_KERNELS = ("linear", "exp_dot", "intersection", "anova")
PARAMS = {"anova": [{"degree": 1}, {"degree": 2}, {"degree": 4}]}
CASES = [(n, p) for n in FAMILY_KERNELS for p in PARAMS.get(n, [{}])]


@pytest.mark.parametrize("name,params", CASES,
                         ids=[n + "".join(f"-{v}" for v in p.values()) for n, p in CASES])
def test_gram_and_products_match_the_reference(name, params, dtype, rng):
    X = np.abs(rng.normal(size=(37, 7))).astype(dtype)
    Y = np.abs(rng.normal(size=(23, 7))).astype(dtype)
    k = make_kernel(name, lengthscale=1.9, **params)
    ref = reference_gram(name, X, Y, 1.9, **params)
    G = k.gram(X, Y)
    assert G.dtype == dtype
    tol = (1e-13 if dtype == np.float64 else 3e-6) * np.abs(ref).max()
    assert np.max(np.abs(G - ref)) <= tol
    # the kernel-times-matrix products of the exact baseline (tiles, or Python tiles
    # through _gram_into for anova)
    V = rng.normal(size=(23, 3))
    P = kernel_times(k, X.astype(np.float64), Y.astype(np.float64), V)
    np.testing.assert_allclose(P, ref @ V, rtol=1e-11, atol=1e-11 * np.abs(ref).max())


def test_exp_dot_series_and_overflow_refusal():
    k = make_kernel("exp_dot", lengthscale=1.3)
    a = k.maclaurin_coefficients(2.0)
    lam = 4.0 / 1.3**2
    np.testing.assert_allclose(a[:4], [lam**0 / 1, 1 / 1.3**2, 1 / 1.3**4 / 2, 1 / 1.3**6 / 6])
    # the cut series at |x.y| <= R^2 is exp to float64 resolution
    assert abs(np.sum(a * 4.0 ** np.arange(a.size)) - math.exp(lam)) <= 1e-15 * math.exp(lam)
    from rffbench.errors import DataError

    with pytest.raises(DataError, match="kernel.lengthscale >= "):
        make_kernel("exp_dot", lengthscale=0.1).check_values(5.0)


# ---- numba kernels against numpy ---------------------------------------------------
def test_srht_projection_is_the_subsampled_hadamard_matrix(rng):
    X = rng.normal(size=(9, 5))
    L, B = 8, 3
    signs = rng.choice([-1.0, 1.0], size=(B, L))
    rows = np.argsort(rng.random((B, L)), axis=1)
    out = np.empty((9, 19))
    nbk.srht_project(X, signs, rows, 0.7, out)
    H = hadamard(L)
    Xp = np.hstack([X, np.zeros((9, L - 5))])
    ref = np.hstack([0.7 * (Xp * signs[b]) @ H.T[:, rows[b]] for b in range(B)])[:, :19]
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-13)


def test_anova_recursions_are_the_subset_sums(rng):
    X, Y = rng.normal(size=(6, 7)), rng.normal(size=(5, 7))
    for p in (1, 2, 3, 7):
        G = np.empty((6, 5))
        nbk.anova_gram(X, np.ascontiguousarray(Y.T), p, 0.5, G)
        np.testing.assert_allclose(G, 0.5 * anova_reference(X, Y, p), rtol=1e-12, atol=1e-12)
        R = rng.choice([-1.0, 1.0], size=(4, 7))
        Z = np.empty((6, 4))
        nbk.elementary_symmetric(X, R, p, 0.3, Z)
        ref = 0.3 * np.array([[anova_reference((x * r)[None], np.ones((1, 7)), p)[0, 0]
                                for r in R] for x in X])
        np.testing.assert_allclose(Z, ref, rtol=1e-12, atol=1e-12)


def test_unary_codes_are_the_maji_berg_encoding(rng):
    X = np.abs(rng.normal(size=(7, 3)))
    X[0, 0], X[1, 1], X[2, 2] = 0.0, 5.0, 0.75  # zero, clipped, on a bin edge (top 1.5)
    top = np.array([2.0, 1.0, 1.5])
    nbins = np.array([4, 3, 6])
    first = np.array([0, 4, 7])
    counts = np.empty(7, dtype=np.int64)
    nbk.unary_counts(X, top, nbins, counts)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    vals, idx = np.empty(indptr[-1]), np.empty(indptr[-1], dtype=np.int64)
    nbk.unary_codes(X, top, nbins, first, indptr, vals, idx)
    Z = sp.csr_matrix((vals, idx, indptr), shape=(7, 13)).toarray()
    ref = np.zeros((7, 13))
    for i, k in itertools.product(range(7), range(3)):
        t = min(X[i, k], top[k]) * nbins[k] / top[k]
        for j in range(nbins[k]):
            ref[i, first[k] + j] = math.sqrt(top[k] / nbins[k]) * min(1.0, max(0.0, t - j))
    np.testing.assert_allclose(Z, ref, rtol=1e-14, atol=1e-15)
    assert np.count_nonzero(Z) == indptr[-1]  # no stored zeros


def test_circulant_projection_is_the_signed_circulant_matrix(rng):
    X = rng.normal(size=(6, 5))
    f = FEATURE_MAPS["circulant"](kernel="linear", n_components=12, lengthscale=1.3,
                                  random_state=0).fit(X)
    g = np.fft.irfft(f.spectra_, n=5, axis=1)
    W = np.vstack([f.signs_[b][:, None] * circulant(g[b]) for b in range(3)])[:12] / 1.3
    np.testing.assert_allclose(f.transform(X), X @ W.T / math.sqrt(12), rtol=1e-12,
                               atol=1e-12)


# ---- statistics --------------------------------------------------------------------
def estimates(name, kernel, X, Y, D, redraws, **params):
    P = np.vstack([X, Y])
    n = len(X)
    out = np.empty((redraws, n))
    for s in range(redraws):
        Z = FEATURE_MAPS[name](kernel=kernel, n_components=D, random_state=s,
                               **params).fit(P).transform(P)
        Z = Z.toarray() if sp.issparse(Z) else Z
        out[s] = np.einsum("ij,ij->i", Z[:n], Z[n:])
    return out


#: the light-tailed estimates (products of two projections); Random Maclaurin's products of
#: up to 2p projections are heavy-tailed (600 redraws give sample variances 0.75-3.5x the
#: formula's, from the fourth moment's own noise): their formula is checked by enumeration
VARIANCE_CASES = [("gaussian_rp", "linear", {}, {}), ("countsketch", "linear", {}, {})]


@pytest.mark.parametrize("name,kname,kparams,params", VARIANCE_CASES,
                         ids=[f"{c[0]}-{c[1]}" + "".join(f"-{k}" for k in c[3])
                              for c in VARIANCE_CASES])
def test_mean_and_variance_match_the_exact_formulas(name, kname, kparams, params, rng):
    """Mean within 4.5 standard errors of k, sample variance within 4.5 standard errors (from
    the fourth moment) of exact_mse, at 6 pairs over 600 redraws (fixed seeds)."""
    d, D, R = 12, 24, 600
    X = rng.normal(size=(6, d)) / math.sqrt(d)
    Y = X + rng.normal(size=(6, d)) * np.linspace(0.1, 1.0, 6)[:, None] / math.sqrt(d)
    k = make_kernel(kname, lengthscale=0.9, **kparams)
    est = estimates(name, k, X, Y, D, R, **params)
    exact = np.array([k.gram(X[i:i + 1], Y[i:i + 1])[0, 0] for i in range(6)])
    kf = make_kernel(kname, lengthscale=0.9, **kparams).fit(None)
    theory = np.array([estimate_mse(name, kf, X[i], Y[i], D, **params) for i in range(6)])
    mean, s2 = est.mean(0), est.var(0, ddof=1)
    assert np.all(np.abs(mean - exact) <= 4.5 * np.sqrt(s2 / R))
    m4 = ((est - mean) ** 4).mean(0)
    se_v = np.sqrt(np.maximum(m4 - s2**2 * (R - 3) / (R - 1), 0) / R)
    assert np.all(np.abs(s2 - theory) <= 4.5 * se_v), (s2, theory, se_v)


@pytest.mark.parametrize("name", ["orf", "sorf", "fastfood", "circulant", "qmc", "srht",
                                  "gaussian_rp", "countsketch"])
def test_projections_of_the_linear_kernel_are_unbiased(name, rng):
    X = rng.normal(size=(5, 24)) / 5
    Y = X + rng.normal(size=(5, 24)) / 5
    R = 300
    est = estimates(name, make_kernel("linear", lengthscale=0.8), X, Y, 16, R)
    exact = np.einsum("ij,ij->i", X, Y) / 0.8**2
    assert np.all(np.abs(est.mean(0) - exact) <= 4.5 * est.std(0, ddof=1) / math.sqrt(R)
                  + 1e-12)


@pytest.mark.parametrize("kname,kparams", [("polynomial", {"degree": 3}), ("exp_dot", {})])
@pytest.mark.parametrize("h01", [False, True])
def test_maclaurin_variance_formula_by_enumeration(kname, kparams, h01, rng):
    """exact_mse against the variance computed from the map's own law: the degrees' law q and
    the weights read from a fitted map (D = 40,000: the degree frequencies within 5 standard
    errors of q), and E[(r.x)^2 (r.y)^2] by enumerating the 2^d sign vectors r."""
    d = 4
    x, y = rng.normal(size=d) / 2, rng.normal(size=d) / 2
    k = make_kernel(kname, lengthscale=1.1, **kparams).fit(None)
    D = 40_000
    f = FEATURE_MAPS["maclaurin"](kernel=k, n_components=D, h01=h01, random_state=3)
    f.fit(np.vstack([x, y]))
    D_r = D - (d + 1 if h01 else 0)
    a = f.coefficients_
    N = np.arange(a.size)
    q = 0.5 ** (N + 1.0) * (N >= (2 if h01 else 0))  # Kar & Karnick's measure, by hand
    q /= q.sum()
    freq = np.bincount(f.degrees_, minlength=a.size) / D_r
    assert np.all(np.abs(freq - q) <= 5 * np.sqrt(q * (1 - q) / D_r) + 1.0 / D_r)
    np.testing.assert_allclose(f.weights_, np.sqrt(a[f.degrees_] / (q[f.degrees_] * D_r)),
                               rtol=1e-13)
    w2 = np.where(q > 0, a / np.where(q > 0, q, 1), 0.0)
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=d)))
    m2 = np.mean((signs @ x) ** 2 * (signs @ y) ** 2)
    used = q > 0
    k_r = np.sum(a[used] * (x @ y) ** N[used])
    direct = (np.sum(q[used] * w2[used] ** 2 * m2 ** N[used]) - k_r**2) / D_r
    assert estimate_mse("maclaurin", k, x, y, D, h01=h01) == pytest.approx(direct, rel=1e-10)


def test_h01_features_hold_the_exact_low_degrees(rng):
    X = rng.normal(size=(4, 3))
    k = make_kernel("polynomial", degree=1, lengthscale=1.0)  # 1 + x.y: H0/1 is exact
    f = FEATURE_MAPS["maclaurin"](kernel=k, n_components=6, h01=True, random_state=0).fit(X)
    np.testing.assert_allclose(f.kernel_estimate(X), 1.0 + X @ X.T, rtol=1e-13)


def test_maji_berg_error_is_within_its_grid_bound(rng):
    X = np.abs(rng.normal(size=(40, 5)))
    f = FEATURE_MAPS["mb"](kernel="intersection", n_components=50, lengthscale=1.0).fit(X)
    K = make_kernel("intersection", lengthscale=1.0).gram(X)
    err = K - f.kernel_estimate(X)
    assert err.min() >= -1e-12 and err.max() <= np.sum(f.top_ / (4 * f.n_bins_)) + 1e-12
    assert sp.issparse(f.transform(X)) and f.transform(X).shape == (40, 50)


# ---- what users type ---------------------------------------------------------------
FAST = ["dataset=synthetic", "dataset.n=300", "dataset.d=8", "measure.bounds.enabled=false",
        "measure.learning.repeats=1"]
RUNS = [["kernel=linear", "features=srht", "D=16"],
        ["kernel=linear", "features=sorf", "D=16"],
        ["kernel=linear", "features=countsketch", "D=16"],
        ["kernel=exp_dot", "features=maclaurin", "+features.params.h01=true", "D=32"],
        ["kernel=anova", "kernel.degree=3", "features=anova_rf", "D=32"],
        ["kernel=gaussian", "features=circulant", "D=32"],
        ["kernel=polynomial", "features=compact", "+features.params.up=8", "D=16"]]


@pytest.mark.parametrize("overrides", RUNS, ids=["-".join(o[:2]) for o in RUNS])
def test_runs_through_run_py(overrides):
    df, _ = run(compose_config([*FAST, *overrides]))
    err = df[(df.measurement == "approximation") & (df.metric == "rel_fro_error")].value
    assert len(err) == 1 and 0 <= float(err.iloc[0]) < 2.0


def test_intersection_on_pixels_runs_through_run_py():
    """Non-negative data (digits' pixels, scaled by the maximum): the Maji-Berg codes' error
    is within the grid bound at 8 bins per coordinate."""
    df, _ = run(compose_config(["dataset=digits", "dataset.scale=max", "kernel=intersection",
                                "features=mb", "D=512", "measure.bounds.enabled=false",
                                "measure.learning.repeats=1"]))
    err = df[(df.measurement == "approximation") & (df.metric == "rel_fro_error")].value
    assert 0 <= float(err.iloc[0]) < 0.05


def test_the_command_line_takes_the_new_names(tmp_path):
    r = run_cli("kernel=linear", "features=srht", "D=16", *FAST,
                f"hydra.run.dir={tmp_path}/run")
    assert r.returncode == 0, r.stderr
    bad = run_cli("kernel=exp_dot", "features=maclaurin", "+features.params.h01=true", "D=8",
                  *FAST, f"hydra.run.dir={tmp_path}/bad")
    assert bad.returncode != 0
    assert "D=8 is not allowed for features=maclaurin with features.params.h01=true and d=8" \
        in bad.stderr


@pytest.mark.slow
def test_the_maps_preset_pairs_each_new_map_with_its_kernel_and_draws_a_figure_per_kernel(
        tmp_path):
    """``python run.py -m experiment=maps`` with four of its rows: each run has the kernel,
    D and settings of its conf/map_row file, and the report has one maps figure per kernel
    with maclaurin and its H0/1 variant told apart."""
    sweep = tmp_path / "maps"
    p = run_cli("-m", "experiment=maps", "seed=0", "measure.bounds.trials=4",
                "+map_row=exp_dot_maclaurin,exp_dot_maclaurin_h01,linear_srht,linear_countsketch",
                f"hydra.sweep.dir={sweep}", timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    df = pd.read_csv(sweep / "report" / "results.csv", low_memory=False)
    h01 = df["features.params.h01"].astype(object).where(df["features.params.h01"].notna(), False)
    got = df.assign(h01=h01).groupby(["kernel", "features", "h01"]).D.unique()
    assert {k: list(v) for k, v in got.items()} == {
        ("exp_dot", "maclaurin", True): [512], ("exp_dot", "maclaurin", False): [512],
        ("linear", "countsketch", False): [32], ("linear", "srht", False): [32]}
    assert set(df[df.kernel == "exp_dot"]["kernel.lengthscale"].astype(float)) == {8.0}
    assert set(df[df.kernel == "exp_dot"]["dataset.scale"]) == {"max"}
    for kernel in ("exp_dot", "linear"):
        assert (sweep / "report" / f"maps__kernel={kernel}.png").stat().st_size > 10_000
    assert "failed to draw" not in (sweep / "report" / "index.html").read_text()


def test_the_bounds_measurement_records_a_maps_own_variance_formula():
    """variance_theory at the bounds' pairs comes from the map's exact_mse when it declares
    no i.i.d. family (here countsketch on the linear kernel), and agrees with the sample
    variance over the trials; the approximation record says the formula is per pair."""
    df, _ = run(compose_config(["dataset=synthetic", "dataset.n=200", "dataset.d=6",
                                "kernel=linear", "features=countsketch", "D=4",
                                "measure.bounds.trials=400", "measure.learning.enabled=false",
                                "measure.timing.enabled=false"]))
    b = df[df.measurement == "bounds"]
    theory = b[b.metric == "variance_theory"].set_index("dist")
    emp = b[(b.metric == "variance_empirical")].set_index("dist")
    assert len(theory) >= 3 and theory.value.notna().all()
    assert theory.note.str.contains("Charikar|CountSketch|countsketch|exact").all()
    z = (emp.value - theory.value).abs() / emp.spread
    assert (z < 4.5).all(), pd.DataFrame({"emp": emp.value, "theory": theory.value, "z": z})
    a = df[(df.measurement == "approximation") & (df.metric == "expected_rel_fro_error")]
    assert "has an exact variance per pair" in a.note.iloc[0]


def test_an_anova_degree_above_d_is_refused(tmp_path):
    """A degree above d sums over no coordinate set (k = 0 everywhere): refused by name,
    through the API and the command line (exit 2, no records)."""
    with pytest.raises(ValueError, match=r"kernel.degree=5 is not allowed for kernel=anova .* "
                                         r"d=3 \(3 feature\(s\)\): use a degree in \[1, 3\]"):
        FEATURE_MAPS["anova_rf"](kernel=make_kernel("anova", degree=5),
                                 n_components=8).fit(np.ones((4, 3)))
    r = run_cli("kernel=anova", "kernel.degree=9", "features=anova_rf", *FAST,
                f"hydra.run.dir={tmp_path}/run")
    assert r.returncode == 2 and "kernel.degree=9 is not allowed for kernel=anova" in r.stderr
    assert not (tmp_path / "run" / "records.csv").exists()
