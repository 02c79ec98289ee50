"""Plug-ins: the example package under examples/ is installed into this environment,
its map, kernel and dataset run in a sweep and appear in the report; import paths;
broken plug-ins get one-line errors."""
import warnings

import numpy as np
import pandas as pd
import pytest

from rffbench.errors import ConfigError
from tests.helpers import run_cli


def _reference_alignment(K, Y):
    m = K.shape[0]
    H = np.eye(m) - np.ones((m, m)) / m
    Y = Y.reshape(m, -1)
    Kc, L = H @ K @ H, H @ Y @ Y.T @ H
    return float(np.sum(Kc * L) / (np.linalg.norm(Kc) * np.linalg.norm(L)))


def test_plugin_kernel_against_scikit_learn(plugin, rng):
    """two_scale is the mean of two of scikit-learn's RBF kernels."""
    from sklearn.metrics.pairwise import rbf_kernel

    X, Y = rng.normal(size=(30, 4)), rng.normal(size=(20, 4))
    k = plugin.TwoScale(lengthscale=1.3, ratio=3.0).fit(None)
    want = 0.5 * (rbf_kernel(X, Y, gamma=0.5 / 1.3**2) + rbf_kernel(X, Y, gamma=0.5 / 3.9**2))
    np.testing.assert_allclose(k.gram(X, Y), want, rtol=1e-12, atol=0)


@pytest.mark.slow
def test_plugin_map_and_kernel_pass_the_conformance_check(plugin):
    """The plug-in kernel's spectral sampler is checked through rff (unbiased and the
    exact rff variance), the plug-in map through its own (family-free) checks."""
    from rffbench.features import RandomFourierFeatures
    from rffbench.testing import check_feature_map

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        r1 = check_feature_map(plugin.StratifiedRFF, "gaussian")
        r2 = check_feature_map(RandomFourierFeatures, "two_scale",
                               sklearn_checks=False)
    assert r1["unbiased"].status == "passed" and r1["variance"].status == "skipped"
    assert r2["unbiased"].status == "passed" and r2["variance"].status == "passed"


@pytest.mark.slow
def test_plugin_sweep_and_report(plugin, tmp_path):
    sweep = tmp_path / "sweep"
    r = run_cli("-m", "features=rff,stratified_rff", "kernel=gaussian,two_scale",
                "dataset=two_moons", "dataset.n=300", "D=64", "measure.bounds.trials=5",
                "measure.timing.enabled=false", "measure.learning.exact=false",
                f"hydra.sweep.dir={sweep}")
    assert r.returncode == 0, r.stderr[-3000:]
    res = pd.read_csv(sweep / "report" / "results.csv")
    assert set(res.features) == {"rff", "stratified_rff"}
    assert set(res.kernel) == {"gaussian", "two_scale"}
    assert set(res.dataset) == {"two_moons"}
    # bounds apply to rff (it declares the rff family), not to the plug-in map
    b = res[(res.measurement == "bounds") & (res.method == "hoeffding")
            & (res.metric == "eps_bound")]
    assert b[b.features == "rff"].value.notna().all()
    sb = b[b.features == "stratified_rff"]
    assert sb.value.isna().all() and sb.note.str.contains("no published bound").all()
    html = (sweep / "report" / "index.html").read_text()
    assert "stratified_rff" in html and "two_scale" in html


def test_import_path_map_runs(plugin, tmp_path):
    r = run_cli("features.name=rffbench_example_plugin:StratifiedRFF", "D=32",
                "dataset=two_moons", "dataset.n=200", "measure.bounds.trials=3",
                "measure.learning.enabled=false", "measure.timing.enabled=false",
                f"hydra.run.dir={tmp_path / 'run'}")
    assert r.returncode == 0, r.stderr[-3000:]
    rec = pd.read_csv(tmp_path / "run" / "records.csv")
    assert set(rec.features) == {"rffbench_example_plugin:StratifiedRFF"}


def test_plugin_params_are_checked(plugin):
    from rffbench.config import FeaturesConfig

    with pytest.raises(ConfigError, match="features.params.foo=1 is not allowed: "
                                          "features=stratified_rff takes no further"):
        FeaturesConfig(name="stratified_rff", params={"foo": 1})


@pytest.mark.slow
def test_plugin_measurement_in_records_table_figure_and_help(plugin, tmp_path):
    """The example's alignment measurement: an entry point of rffbench.measurements and
    nothing in rffbench names it; its block, records, table, figure and --help line."""
    h = run_cli("--help")
    assert h.returncode == 0 and "alignment [off]" in h.stdout
    line = " ".join(h.stdout.split("alignment [off]")[1][:300].split())
    assert "[plug-in rffbench-example-plugin]" in line
    sweep = tmp_path / "sweep"
    r = run_cli("-m", "dataset=wine", "D=16,64", "measure.alignment.enabled=true",
                "measure.alignment.n_points=80", "measure.bounds.enabled=false",
                "measure.timing.enabled=false", "measure.learning.enabled=false",
                f"hydra.sweep.dir={sweep}")
    assert r.returncode == 0, r.stderr[-3000:]
    res = pd.read_csv(sweep / "report" / "results.csv")
    al = res[res.measurement == "alignment"]
    assert set(al.metric) == {"alignment", "alignment_gap"} and al.value.notna().all()
    assert (al.value.abs() <= 1).all()
    summary = (sweep / "report" / "summary.md").read_text()
    assert "Kernel-target alignment (plug-in measurement)" in summary
    assert (sweep / "report" / "alignment_vs_D.png").exists()
    bad = run_cli("measure.alignment.n_points=1", "dataset=wine")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "measure.alignment.n_points=1 is not allowed" in bad.stderr


def test_plugin_alignment_against_its_definition(plugin, rng):
    """centred_alignment against <HKH, YY^T> / (|HKH| |YY^T|) written out with H, and its
    invariances: a constant added to K (a map's kernel_offset_), a scale of K."""
    from rffbench_example_plugin.alignment import centred_alignment

    X = rng.standard_normal((60, 3))
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    for Y in (X[:, 0] + 0.1 * rng.standard_normal(60), np.eye(3)[rng.integers(0, 3, 60)]):
        a = centred_alignment(K, Y)
        assert a == pytest.approx(_reference_alignment(K, Y), rel=1e-12)
        assert centred_alignment(K + 0.7, Y) == pytest.approx(a, rel=1e-12)
        assert centred_alignment(3.0 * K, Y) == pytest.approx(a, rel=1e-12)
    y = X[:, 0]
    assert centred_alignment(np.outer(y, y), y) == pytest.approx(1.0)


@pytest.mark.slow
def test_plugin_kernel_takes_its_own_parameters_from_the_command_line(plugin, tmp_path):
    """kernel.params reaches the kernel's class: two_scale's ratio changes the kernel (its
    exact Gram, so the records); a name the class does not take is one line."""
    import json

    outs = {}
    for alpha in (0.5, 50.0):
        out = tmp_path / f"a{alpha}"
        r = run_cli("kernel=two_scale", f"kernel.params.ratio={alpha}",
                    "dataset=wine", "D=64", "kernel.lengthscale=2.0",
                    "measure.bounds.enabled=false", "measure.timing.enabled=false",
                    "measure.learning.enabled=false", f"hydra.run.dir={out}")
        assert r.returncode == 0, r.stderr[-2000:]
        cfg = json.loads((out / "config.json").read_text())["config"]
        assert cfg["kernel"]["params"] == {"ratio": alpha}
        outs[alpha] = pd.read_csv(out / "records.csv")
    fro = {a: df[df.metric == "rel_fro_error"].value.iloc[0] for a, df in outs.items()}
    assert fro[0.5] != fro[50.0]
    k = plugin.TwoScale(lengthscale=2.0, ratio=0.5).fit(None)
    assert k.ratio == 0.5
    bad = run_cli("kernel=two_scale", "kernel.params.beta=1", "dataset=wine")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "kernel.params.beta=1 is not allowed: kernel=two_scale takes ratio" in bad.stderr
    from rffbench.config import KernelConfig  # the plug-in's declared constraint on ratio

    with pytest.raises(ConfigError, match=r"^kernel\.params\.ratio=-1 is not allowed: use a "
                                          r"number > 0$"):
        KernelConfig(name="two_scale", params={"ratio": -1})
