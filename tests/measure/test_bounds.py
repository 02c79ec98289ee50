"""The bounds measurement: helpers against numpy, validity of the bounds,
pointwise variance against theory, applicability, reproducibility, bad input."""
import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import pdist

from rffbench import _numba as nbk
from rffbench.experiment import main as run_main
from rffbench.experiment import run
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import make_kernel
from rffbench.measure.bounds import TRIALS_FILE, condensed_to_ij, pick_pairs, sample_variance_se
from rffbench.results import RECORDS_FILE
from rffbench.theory import UNIFORM_METHODS
from tests.helpers import compose_config

SMALL = ["dataset=synthetic", "dataset.n=400", "dataset.d=3", "measure.approximation.enabled=false",
         "measure.timing.enabled=false", "measure.bounds.n_points=80"]
UNIFORM_ONLY = {"rahimi_recht", "rahimi_recht_output_dim", "sutherland_schneider",
                "sriperumbudur_szabo"}


def bounds_run(*overrides):
    df, tables = run(compose_config([*SMALL, *overrides]))
    return df[df.measurement == "bounds"], tables[TRIALS_FILE]


def test_condensed_index_inverse():
    for n in (2, 3, 7, 50):
        i, j = np.triu_indices(n, 1)
        gi, gj = condensed_to_ij(np.arange(n * (n - 1) // 2), n)
        np.testing.assert_array_equal(gi, i)
        np.testing.assert_array_equal(gj, j)


def test_pick_pairs_span_the_distances(rng):
    X = rng.normal(size=(40, 3))
    d = pdist(X)
    i, j = pick_pairs(d, 40, 5)
    got = np.sort(np.linalg.norm(X[i] - X[j], axis=1))
    assert got[0] == pytest.approx(d.min()) and got[-1] == pytest.approx(d.max())
    assert len(got) == 5 and np.all(np.diff(got) > 0)


@pytest.mark.parametrize("gdtype", [np.float64, np.float32])
def test_max_abs_diff_upper_matches_numpy(rng, gdtype):
    n = 57
    A = rng.normal(size=(n, n))
    K = A + A.T
    B = rng.normal(size=(n, n))
    G = (B + B.T).astype(gdtype)
    want = np.max(np.abs(np.triu(G.astype(np.float64) - K)))
    assert nbk.max_abs_diff_upper(G, K) == want


def test_sample_variance_se(rng):
    x = rng.normal(scale=2.0, size=(4000, 3))
    s2, se = sample_variance_se(x)
    np.testing.assert_allclose(s2, np.var(x, axis=0, ddof=1), rtol=1e-12)
    # normal data: SE of the sample variance = sigma^2 sqrt(2 / (T - 1))
    np.testing.assert_allclose(se, 4.0 * np.sqrt(2 / 3999), rtol=0.1)


@pytest.mark.parametrize("features", ["rff", "rff_pairs"])
def test_gaussian_bounds_valid_and_variance_matches_theory(features):
    b, trials = bounds_run(f"features={features}", "D=256", "measure.bounds.trials=300",
                           "measure.bounds.delta=[0.1,0.05]")
    sup = b[b.dist.isna()]
    # every applicable uniform bound holds: eps_bound >= eps_empirical at both deltas
    uni = sup[sup.method.isin(UNIFORM_ONLY)]
    applicable = uni[uni.metric == "eps_bound"].value.notna()
    expected = 4 if features == "rff_pairs" else 1  # only S&S covers the rff map
    assert applicable.sum() == expected * 2
    tight = uni[(uni.metric == "tightness") & uni.value.notna()]
    assert len(tight) == expected * 2 and (tight.value >= 1).all()
    assert not uni.note.fillna("").str.contains("VIOLATED").any()
    # eps_empirical is the quantile of the per-trial sup values kept in the trials file
    s = trials[trials.quantity == "sup"].error.to_numpy()
    assert len(s) == 300
    for delta in (0.1, 0.05):
        row = sup[(sup.metric == "eps_empirical") & (sup.method == "empirical")
                  & (sup.delta == delta)]
        assert row.value.item() == pytest.approx(np.quantile(s, 1 - delta), rel=1e-12)
    # pointwise: the variance over 300 redraws matches the exact variance within 5 SE
    pw = b[b.dist.notna()]
    emp = pw[pw.metric == "variance_empirical"].set_index("dist")
    theo = pw[pw.metric == "variance_theory"].set_index("dist").value
    assert len(emp) == 5
    z = (emp.value - theo) / emp.spread
    assert (np.abs(z) < 5).all(), z
    # the pointwise tail bounds hold at each pair
    pt = pw[(pw.metric == "tightness")]
    assert len(pt) == 5 * 2 * 2 and (pt.value >= 1).all()


def test_tightness_and_d_required_are_consistent():
    b, _ = bounds_run("features=rff_pairs", "D=128", "measure.bounds.trials=50")
    sup = b[b.dist.isna()]
    emp = sup[(sup.metric == "eps_empirical") & (sup.method == "empirical")].value.item()
    for m in UNIFORM_METHODS:
        r = sup[sup.method == m].set_index("metric").value
        assert r["tightness"] == pytest.approx(r["eps_bound"] / emp, rel=1e-12)
        # a bound looser than observed asks for more D than used, and conversely
        assert (r["D_required"] > 128) == (r["eps_bound"] > emp)


def test_laplacian_uniform_bounds_not_applicable():
    b, _ = bounds_run("kernel=laplacian", "features=rff_pairs", "D=64",
                      "measure.bounds.trials=20")
    sup = b[b.dist.isna()]
    uni = sup[sup.method.isin(UNIFORM_ONLY)]
    assert len(uni) == 4 * 3 and uni.value.isna().all()
    assert uni.note.str.contains("infinite").all()
    sp = sup[sup.metric == "sigma_p2"].value.item()
    assert sp == np.inf
    # pointwise bounds do not need sigma_p: still numbers
    ref = sup[sup.method.isin(["hoeffding", "bernstein"]) & (sup.metric == "eps_bound")]
    assert ref.value.notna().all() and len(ref) == 2


def test_rff_map_pair_only_bounds_not_applicable():
    b, _ = bounds_run("features=rff", "D=64", "measure.bounds.trials=20")
    rr = b[(b.method == "rahimi_recht") & (b.metric == "eps_bound")]
    assert rr.value.isna().all() and rr.note.str.contains("pair map").all()


def test_trials_reproducible_and_independent_of_threads():
    common = ["features=rff", "D=96", "measure.bounds.trials=12"]
    b1, t1 = bounds_run(*common, "threads=1")
    b2, t2 = bounds_run(*common, "threads=2")
    b3, t3 = bounds_run(*common, "threads=2")
    np.testing.assert_array_equal(t1.error.to_numpy(), t2.error.to_numpy())
    np.testing.assert_array_equal(t2.error.to_numpy(), t3.error.to_numpy())
    np.testing.assert_array_equal(b1.value.to_numpy(), b2.value.to_numpy())
    # and a different seed gives different draws
    _, t4 = bounds_run(*common, "seed=1")
    assert not np.array_equal(t1.error.to_numpy(), t4.error.to_numpy())


def test_domain_diameter_of_the_ball_is_used_and_recorded():
    b, _ = bounds_run("features=rff_pairs", "D=64", "measure.bounds.trials=10",
                      "dataset.radius=1.5")
    diam = b[b.metric == "diam"].set_index("method")
    assert diam.value["domain"] == 3.0 and diam.value["empirical"] <= 3.0
    assert "used by the bounds" in diam.note["domain"]
    ss = b[(b.method == "sutherland_schneider") & (b.metric == "eps_bound")]
    assert ss.note.item().startswith("diam=3 (true diameter")
    b2, _ = bounds_run("features=rff_pairs", "D=64", "measure.bounds.trials=10",
                       "measure.bounds.diameter=points")
    ss2 = b2[(b2.method == "sutherland_schneider") & (b2.metric == "eps_bound")]
    assert "max pairwise distance" in ss2.note.item()


def test_records_and_trials_file_written(tmp_path):
    cfg = compose_config([*SMALL, "D=32", "measure.bounds.trials=5"])
    assert run_main(cfg, tmp_path) == 0
    t = pd.read_csv(tmp_path / TRIALS_FILE)
    df = pd.read_csv(tmp_path / RECORDS_FILE)
    assert t.run_id.unique().tolist() == df.run_id.unique().tolist()
    assert (t.quantity == "sup").sum() == 5 and (t.quantity == "pair").sum() == 25


@pytest.mark.parametrize("override,match", [
    ("measure.bounds.trials=1", "measure.bounds.trials=1 is not allowed"),
    ("measure.bounds.delta=1.5", "measure.bounds.delta=1.5 is not allowed"),
    ("measure.bounds.delta=[0.1,0]", "is not allowed: use a number in (0, 1)"),
    ("measure.bounds.n_points=1", "measure.bounds.n_points=1 is not allowed"),
    ("measure.bounds.n_points=301", "has 300 training points"),
    ("measure.approximation.n_points=5000", "measure.approximation.n_points=5000"),
    ("measure.bounds.pairs=0", "measure.bounds.pairs=0"),
])
def test_bad_input_one_line_before_any_work(tmp_path, capsys, override, match):
    cfg = compose_config([*SMALL, "measure.approximation.enabled=true", override])
    code = run_main(cfg, tmp_path)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("rffbench: error:") and match in err and "\n" not in err
    assert not (tmp_path / RECORDS_FILE).exists() and not (tmp_path / TRIALS_FILE).exists()


def test_domain_diameter_refused_when_unknown(tmp_path, capsys):
    cfg = compose_config(["dataset=wine", "measure.bounds.diameter=domain", "D=16"])
    assert run_main(cfg, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert "measure.bounds.diameter='domain' is not allowed for dataset=wine" in err


def test_trials_include_the_maps_constant_term(rng):
    """The sup error of a trial is that of the kernel estimate Z Z^T + kernel_offset_ (ssr's
    centre term), against numpy."""
    from rffbench.measure.bounds import run_trials

    M = rng.uniform(0, 1, size=(40, 3))
    K = make_kernel("gaussian", lengthscale=0.8).fit(None).gram(M)
    I, J = np.array([0, 3]), np.array([5, 9])

    def make(r):
        return FEATURE_MAPS["ssr"](kernel=make_kernel("gaussian", lengthscale=0.8),
                                   n_components=2 * 4 * 3, random_state=r)

    seeds = np.random.SeedSequence(4).spawn(3)
    sup, pw = run_trials(make, M, M, K, I, J, seeds, 1)
    for t, s in enumerate(seeds):
        f = make(np.random.default_rng(s)).fit(M)
        assert f.kernel_offset_ != 0
        E = f.transform(M) @ f.transform(M).T + f.kernel_offset_ - K
        assert sup[t] == pytest.approx(np.abs(E).max(), rel=1e-12)
        np.testing.assert_allclose(pw[t], E[I, J], rtol=1e-10, atol=1e-14)


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
