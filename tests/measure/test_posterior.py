"""rffbench/measure/posterior.py: the posterior measurement's records, its expectation
against redraws, the sampler bugs it must flag, and its refusals (the closed forms against
sampled functions: tests/test_posterior.py)."""
import math

import numpy as np
import pytest

from tests.helpers import compose_config, one_line_error

#: a small problem, every other measurement off
SMALL = ["dataset=synthetic", "dataset.n=400", "dataset.d=3", "measure.bounds.enabled=false",
         "measure.learning.enabled=false", "measure.timing.enabled=false",
         "measure.approximation.enabled=false", "measure.posterior.enabled=true",
         "measure.posterior.n_train=100", "measure.posterior.n_test=60"]


def _run(*overrides):
    from rffbench.experiment import run

    df, tables = run(compose_config([*SMALL, *overrides]))
    return df[df.measurement == "posterior"], tables


def _w2(df):
    return df[df.metric == "w2"].set_index("method").value.to_dict()


@pytest.mark.parametrize("features", ["rff_pairs", "rff"])
def test_the_expected_covariance_error_is_the_mean_over_redraws(features):
    """E ||C - Sigma||_F^2 of the decoupled sampler (a Monte Carlo over 20,000 frequencies)
    against the mean over 400 draws of the map, within 4.5 standard errors of both; noise 1
    keeps ||C - Sigma||^2's tail light enough for a sample mean (at noise 1e-3 its tail is
    heavy: means of 400 draws fall 10-50% under it).  A formula with the frequencies
    miscounted (D instead of D / 2) would be 2x off: ~20 standard errors."""
    df, tables = _run(f"features={features}", "D=64", "measure.posterior.n_train=40",
                      "measure.posterior.n_test=25", "measure.posterior.noise=1",
                      "measure.posterior.redraws=400",
                      "measure.posterior.expectation_frequencies=20000")
    r = tables["posterior_redraws.csv"]
    sq = r[(r.sampler == "decoupled") & (r.metric == "cov_rel_fro_error")].value.to_numpy() ** 2
    e = df[df.metric == "expected_cov_rel_fro_error"].iloc[0]
    se = math.hypot(sq.std(ddof=1) / math.sqrt(sq.size), 2 * e.value * e.spread)
    assert abs(sq.mean() - e.value ** 2) <= 4.5 * se, (sq.mean(), e.value ** 2, se)
    assert se < 0.1 * e.value ** 2  # the comparison could have said no
    mean = df[(df.metric == "cov_rel_fro_error") & (df.method == "decoupled")].iloc[0]
    assert mean.n_repeats == 400 and mean.spread > 0


def test_planted_sampler_bugs_raise_w2_by_an_order_of_magnitude(monkeypatch):
    """The bugs libraries shipped: the targets ignored (BoTorch #2337) and a scaling applied
    to one argument only (GPJax #326, here the test points' inputs scaled by 1.5): each
    sampler's W2 at least 10x the correct one's."""
    from rffbench import posterior as gp
    from rffbench.measure import posterior as mp

    good = _w2(_run("D=1024")[0])
    dec, ws = gp.decoupled, gp.weight_space
    with monkeypatch.context() as m:
        m.setattr(gp, "decoupled", lambda Z, Zs, M, y, noise: dec(Z, Zs, M, 0 * y, noise))
        m.setattr(gp, "weight_space", lambda Z, Zs, y, noise: ws(Z, Zs, 0 * y, noise))
        ignored = _w2(_run("D=1024")[0])
    feats = mp.dense_features
    with monkeypatch.context() as m:  # the 60 test points' features, of inputs scaled
        m.setattr(mp, "dense_features",
                  lambda fmap, X: feats(fmap, X * 1.5 if X.shape[0] == 60 else X))
        scaled = _w2(_run("D=1024")[0])
    for sampler in ("weight_space", "decoupled"):
        assert ignored[sampler] > 10 * good[sampler], (sampler, good, ignored)
        assert scaled[sampler] > 10 * good[sampler], (sampler, good, scaled)


def test_records_say_what_each_sampler_was_and_the_exact_scale():
    """One record per (sampler, metric); the decoupled mean is the exact one; the
    weight-space sampler's D + n features (matched) and D (same) are in its notes; a map
    without i.i.d. frequencies records the expectation as n/a, saying why."""
    df, tables = _run("D=64", "features=orf", "measure.posterior.weight_space_features=same")
    got = df.groupby("method").metric.apply(sorted).to_dict()
    samp = sorted(["w2", "mean_rmse", "cov_rel_fro_error", "starvation_ratio"])
    assert got == {"weight_space": samp, "decoupled": sorted(samp + ["expected_cov_rel_fro_"
                                                                      "error"]),
                   "exact": ["far_variance_fraction", "n_conditioned", "n_test_points",
                             "posterior_sd_rms"]}
    rec = df.set_index(["method", "metric"])
    assert rec.loc[("decoupled", "mean_rmse"), "value"] < 1e-10
    assert "weight-space: 64 features" in rec.loc[("weight_space", "w2"), "note"]
    assert "not i.i.d." in rec.loc[("decoupled", "expected_cov_rel_fro_error"), "note"]
    assert np.isnan(rec.loc[("decoupled", "expected_cov_rel_fro_error"), "value"])
    assert 0 < rec.loc[("exact", "far_variance_fraction"), "value"] <= 1
    assert rec.loc[("exact", "n_conditioned"), "value"] == 100
    assert rec.loc[("exact", "n_test_points"), "value"] == 60
    assert "posterior_redraws.csv" not in tables  # one draw: the records are it
    df, _ = _run("D=64", "features=rff_pairs")
    note = df[(df.metric == "w2") & (df.method == "weight_space")].note.iloc[0]
    assert note.startswith("weight-space: 164 features (D + n_train: the decoupled")
    df, _ = _run("D=64", "features=ssr")  # d = 3: a multiple of 2 (d + 1) = 8 from 164 on
    note = df[(df.metric == "w2") & (df.method == "weight_space")].note.iloc[0]
    assert note.startswith("weight-space: 169 feature columns for n_components=168 (the "
                           "map's own count; a kernel_offset_ is one more) (D + n_train = 164, "
                           "rounded up to a size the map takes"), note


#: Wilson et al.'s problem (Matern-5/2, lengthscale 0.1 sqrt(d), X uniform on [0, 1]^8)
WILSON = ["dataset=friedman1", "dataset.d=8", "dataset.n=1000", "dataset.scale=none",
          "kernel=matern", "kernel.nu=2.5", "kernel.lengthscale=0.2828"]


def test_the_weight_space_sampler_starves_far_from_the_data_and_decoupled_does_not():
    """Wilson et al.'s variance starvation at one size (n = 256, D = 128): far from the
    data the weight-space sampler's variance falls under 0.8 of the exact one's (0.49
    measured), the decoupled one's stays within 0.1 of it (1.00), and its W2 is the
    smaller (6.4 against 15.8 at D = 256)."""
    df, _ = _run(*WILSON, "D=128", "measure.posterior.n_train=256",
                 "measure.posterior.n_test=100")
    rec = df.set_index(["method", "metric"])
    ws, dec = rec.loc["weight_space"], rec.loc["decoupled"]
    assert rec.loc[("exact", "far_variance_fraction"), "value"] > 0.8  # far from the data
    assert ws.loc["starvation_ratio", "value"] < 0.8
    assert abs(dec.loc["starvation_ratio", "value"] - 1) < 0.1
    assert dec.loc["w2", "value"] < ws.loc["w2", "value"]


@pytest.mark.parametrize("overrides,words", [
    (["measure.posterior.noise=0"], "measure.posterior.noise=0"),
    (["measure.posterior.noise=-1"], "use a number > 0"),
    (["measure.posterior.noise=nan"], "measure.posterior.noise=nan"),
    (["measure.posterior.n_train=301"], "has 300 training points; use 1..300 or null"),
    (["measure.posterior.n_test=101"], "has 100 test points; use 1..100 or null"),
    (["measure.posterior.n_train=0"], "measure.posterior.n_train=0"),
    (["measure.posterior.targets=data", "dataset.task=classification"],
     "measure.posterior.targets=data is not allowed with dataset=synthetic: its task is "
     "classification"),
    (["measure.posterior.targets=posterior"], "measure.posterior.targets='posterior'"),
    (["measure.posterior.weight_space_features=double"], "weight_space_features='double'"),
    (["measure.posterior.far_fraction=0"], "measure.posterior.far_fraction=0"),
    (["measure.posterior.redraws=0"], "measure.posterior.redraws=0"),
    (["measure.posterior.expectation_frequencies=1"], "expectation_frequencies=1"),
    (["kernel=linear", "features=gaussian_rp", "measure.posterior.noise=1e-300"],
     "K + noise I is not positive definite at measure.posterior.noise=1e-300"),
])
def test_bad_posterior_settings_are_one_line(tmp_path, capsys, overrides, words):
    err = one_line_error(tmp_path, capsys, ["measure.posterior.enabled=true", "dataset=synthetic",
                                            "dataset.n=400", "dataset.d=3", *overrides])
    assert words in err, err


@pytest.mark.parametrize("overrides,words", [
    (["dataset.n=400000", "measure.posterior.n_test=90000", "measure.posterior.n_train=10"],
     r"measure.posterior.n_test=90000 is not allowed: the posterior measurement .* needs .* "
     r"at its peak, more than 80% of the .* available; measure.posterior.n_test <= \d+ fits"),
    (["dataset.n=14000", "measure.posterior.n_train=10001"],
     "measure.posterior.n_train=10001 is not allowed with targets=prior: a draw from the "
     "prior needs a Cholesky factor of K \\+ noise I, made up to 10000 training points"),
])
def test_a_posterior_past_memory_or_cholesky_is_refused_before_work(tmp_path, capsys, overrides,
                                                                     words):
    import re

    err = one_line_error(tmp_path, capsys, ["measure.posterior.enabled=true", "dataset=synthetic",
                                            "dataset.d=2", *overrides])
    assert re.search(words, err), err


@pytest.mark.slow
def test_the_wilson_preset_orders_the_samplers_as_they_found(tmp_path):
    """experiment=wilson2020 through the command (two of its Matern rows, D = 256, three n,
    256 test points): per map the weight-space W2 grows with n (by more than 2x from 4 to
    1024) while the decoupled one stays flat (within 1.3x), below it at every n > 4."""
    import pandas as pd

    from tests.helpers import assert_sweep_reported, run_cli

    sweep = tmp_path / "wilson2020"
    p = run_cli("-m", "experiment=wilson2020", "+map_row=matern_rff,matern_qmc", "D=256",
                "measure.posterior.n_train=4,64,1024", "measure.posterior.n_test=256",
                "measure.posterior.redraws=1", "report.pdf=false", f"hydra.sweep.dir={sweep}")
    assert_sweep_reported(p, sweep)
    df = pd.read_csv(sweep / "report" / "results.csv")
    df = df[df.measurement == "posterior"]
    n = df[df.metric == "n_conditioned"].set_index("run_id").value
    w2 = df[df.metric == "w2"].assign(n=lambda r: r.run_id.map(n))
    for feat, grp in w2.groupby("features"):
        ws = grp[grp.method == "weight_space"].set_index("n").value.sort_index()
        dec = grp[grp.method == "decoupled"].set_index("n").value.sort_index()
        assert list(ws.index) == [4, 64, 1024]
        assert ws.is_monotonic_increasing and ws[1024] > 2 * ws[4], (feat, ws)
        assert dec.max() < 1.3 * dec.min(), (feat, dec)
        assert (dec[[64, 1024]] < ws[[64, 1024]]).all(), (feat, dec, ws)


def test_past_the_cholesky_limit_cg_gives_the_same_records(monkeypatch):
    """With the Cholesky limit lowered to 50 points, 100 training points are solved by cg
    (its preconditioner of rank 20, so that it iterates): every record within 1e-5
    (relative: cg's residual is 1e-8 per column, and Sigma = K_ss - K_sn A loses digits to
    the cancellation; measured 1.5e-6) of the Cholesky run's; a cg that cannot reach its
    tolerance is one line."""
    from rffbench.errors import RangeError
    from rffbench.measure import posterior as mp

    args = ("D=64", "measure.posterior.targets=data", "measure.posterior.n_test=30")
    chol = _run(*args)[0].set_index(["method", "metric"]).value
    monkeypatch.setattr(mp, "CHOLESKY_MAX", 50)
    monkeypatch.setattr(mp, "CG_RANK", 20)
    cg = _run(*args)[0].set_index(["method", "metric"]).value
    assert chol.index.equals(cg.index)
    np.testing.assert_allclose(cg.to_numpy(), chol.to_numpy(), rtol=1e-5, atol=1e-9)
    monkeypatch.setattr(mp, "CG_MAX_ITER", 1)
    monkeypatch.setattr(mp, "CG_TOL", 1e-30)
    with pytest.raises(RangeError, match=r"conjugate gradients past 50 training points\) "
                                         r"stopped at relative residual .* after 1 iterations"):
        _run(*args)
