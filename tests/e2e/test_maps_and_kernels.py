"""The kernels and maps of every family through the command: the peer libraries' families
(linear, exponential dot product, ANOVA, intersection), the kernels that are not
shift-invariant and their maps, and the refusals of pairs, sizes and data that cannot work."""
import numpy as np
import pandas as pd
import pytest

from rffbench.config import validate
from rffbench.errors import ConfigError
from rffbench.experiment import run
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import make_kernel
from tests.helpers import assert_sweep_reported, compose_config, run_cli

#: the peer libraries' kernels (their references: tests/references.py)
FAMILY_KERNELS = ("linear", "exp_dot", "intersection", "anova")
PARAMS = {"anova": [{"degree": 1}, {"degree": 2}, {"degree": 4}]}
CASES = [(n, p) for n in FAMILY_KERNELS for p in PARAMS.get(n, [{}])]




#: the light-tailed estimates (products of two projections); Random Maclaurin's products of
#: up to 2p projections are heavy-tailed (600 redraws give sample variances 0.75-3.5x the
#: formula's, from the fourth moment's own noise): their formula is checked by enumeration
VARIANCE_CASES = [("gaussian_rp", "linear", {}, {}), ("countsketch", "linear", {}, {})]


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
    assert_sweep_reported(p, sweep)
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


# ---- refusals ---------------------------------------------------------------------
@pytest.mark.parametrize("overrides,match", [
    (["kernel=arccos1", "features=rff"], "features=rff is not allowed with kernel=arccos1: it "
     "samples the spectral density of a shift-invariant kernel and arccos1 is not one; use "
     "features=orf or sorf or fastfood or circulant or qmc or arccos or ssr or gauss_hermite or "
     "nystrom"),
    (["kernel=polynomial", "features=qmc"], "use features=maclaurin or tensorsketch or "
     "sklearn_polysketch or compact or nystrom"),
    (["kernel=gaussian", "features=maclaurin"], "features=maclaurin is not allowed with "
     "kernel=gaussian: it samples the Maclaurin series"),
    (["kernel=laplacian", "features=positive"], "represent the Gaussian"),
    (["kernel=polynomial", "kernel.degree=0"], r"kernel.degree=0 is not allowed: use an integer "
     r"in 1..20"),
    (["kernel=polynomial", "kernel.coef0=-1"], r"kernel.coef0=-1.0 is not allowed"),
])
def test_impossible_pairs_name_what_works(overrides, match):
    with pytest.raises(ConfigError, match=match):
        validate(compose_config(overrides))


def test_negative_data_is_refused_with_the_fix(tmp_path, capsys):
    from rffbench.experiment import main as run_main

    cfg = compose_config(["kernel=additive_chi2", "features=nystrom", "D=32",
                          "measure.bounds.trials=3"])  # digits, standardised: negatives
    assert run_main(cfg, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert "kernel=additive_chi2 needs non-negative data" in err and \
        "dataset.scale=none" in err and "\n" not in err
    assert not (tmp_path / "records.csv").exists()


def test_chi2_runs_on_raw_pixels():
    """digits' raw pixel counts (0..16): the additive chi2 peer and the skewed chi2 kernel
    through rff, whose bounds apply in log(x + c)."""
    common = ["dataset.scale=none", "measure.bounds.trials=10",
              "measure.learning.repeats=1", "measure.approximation.n_points=200",
              "dataset.n_max=400"]
    df, _ = run(compose_config(["kernel=additive_chi2", "features=sklearn_chi2", "D=192",
                                *common]))
    approx = df[df.measurement == "approximation"].set_index("metric").value
    assert 0 < approx["rel_fro_error"] < 0.1 and (df.D == 192).all()
    df, _ = run(compose_config(["kernel=skewed_chi2", "features=rff", "D=256", *common]))
    b = df[(df.measurement == "bounds") & df.dist.isna() & (df.metric == "eps_bound")]
    assert b[b.method == "hoeffding"].value.notna().all()
    s = df[df.metric == "sigma_p2"].value.iloc[0]
    assert s == pytest.approx(64 / (4 * df.lengthscale.iloc[0] ** 2))


@pytest.mark.parametrize("overrides,match", [
    (["kernel=additive_chi2", "features=sklearn_chi2", "D=100", "dataset.scale=none"],
     r"D=100 is not allowed for features=sklearn_chi2 with d=64: .* use D=64, 192 or 320"),
    (["kernel=skewed_chi2", "features=sklearn_skewed_chi2", "dataset.scale=none"],
     r"features=sklearn_skewed_chi2 needs kernel.lengthscale=1"),
    (["kernel=skewed_chi2", "kernel.skewedness=0"], r"kernel.skewedness=0.0 is not allowed"),
    (["features=ssr", "D=100"], r"D=100 is not allowed for features=ssr with d=64: .* use a "
                                r"multiple of 130, e.g. D=130 or D=260 \(or D_n=n"),
])
def test_sizes_and_scales_that_cannot_work(overrides, match, tmp_path, capsys):
    from rffbench.experiment import main as run_main

    cfg = compose_config([*overrides, "measure.bounds.trials=3", "measure.learning.enabled=false"])
    assert run_main(cfg, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    import re
    assert re.search(match, err), err


def test_D_n_sets_D_from_the_data_dimension():
    df, _ = run(compose_config(["dataset=synthetic", "dataset.n=200", "dataset.d=5",
                                "features=ssr", "D_n=2", "measure.bounds.trials=3",
                                "measure.learning.enabled=false"]))
    assert (df.D == 2 * 2 * (5 + 1)).all() and (df.n_freq == 12).all()


def test_data_dependent_maps_say_so_in_their_records():
    df, _ = run(compose_config(["dataset=synthetic", "dataset.n=200", "dataset.d=3",
                                "features=leverage", "D=32", "measure.bounds.enabled=false",
                                "measure.learning.enabled=false", "measure.timing.enabled=false"]))
    note = df[(df.measurement == "approximation") & (df.metric == "rel_fro_error")].note.iloc[0]
    assert "data-dependent map: fitted on the 150 training rows" in note
