"""Right at every shape, through what users type: one input column, one row, odd output
buffers, values at the edge of a kernel's range; the generated search over the whole space
is tests/contracts/test_differential.py.  A BLAS error message anywhere fails the test
(conftest)."""
import warnings

import numpy as np
import pandas as pd
import pytest

from rffbench.errors import DataError
from rffbench.experiment import main as run_main
from rffbench.features import FEATURE_MAPS
from rffbench.results import RECORDS_FILE
from tests.helpers import compose_config, run_cli
from tests.references import reference_gram

#: the run of the issue, made small: one input column, approximation and learning
D1 = ["dataset=synthetic", "dataset.d=1", "dataset.n=400", "D=256", "measure.bounds.enabled=false",
      "measure.timing.enabled=false", "measure.learning.repeats=1"]
#: the observed relative Frobenius error of one draw against its exact expectation: across
#: 20 seeds at d = 1 (rff, D = 1024, n = 1500) the ratio ranged 0.53-1.5; with the leading
#: dimension refused it was 21
EXPECTED_RATIO = (1 / 3, 3.0)


def _records(path):
    df = pd.read_csv(path / RECORDS_FILE)
    return df.set_index(["measurement", "metric", "method"], drop=False)


@pytest.mark.parametrize("features", ["rff", "rff_pairs"])
def test_one_input_column_through_the_command(tmp_path, features):
    """`python run.py dataset=synthetic dataset.d=1` printed "On entry to DGEMM parameter
    number 8 had an illegal value", exited 0 and recorded rel_fro_error 0.843 against an
    expected 0.081 and ridge's RMSE NaN.  Now the error is within its expectation's range and
    ridge is as good as exact KRR."""
    out = tmp_path / "run"
    p = run_cli(*D1, f"features={features}", f"hydra.run.dir={out}")
    assert p.returncode == 0, p.stderr[-2000:]
    df = _records(out)
    approx = df[df.measurement == "approximation"].set_index("metric")
    observed = approx.value["rel_fro_error"]
    expected = float(approx[approx.method == "theory"].value["expected_rel_fro_error"])
    lo, hi = EXPECTED_RATIO
    assert lo * expected <= observed <= hi * expected, (observed, expected)
    learn = df[df.measurement == "learning"]
    rel = learn[learn.metric == "test_rel_rmse"].set_index("method").value
    assert np.isfinite(rel["ridge"]) and rel["ridge"] <= 1.2 * rel["exact_krr"], rel


GAUSSIAN_MAPS = [n for n, cls in FEATURE_MAPS.builtins().items()
                 if cls.KERNELS is None or "gaussian" in cls.KERNELS]


@pytest.mark.slow
def test_one_input_column_with_every_map_of_the_gaussian_kernel(tmp_path):
    """The sweep a user would type over every map that takes the Gaussian kernel at d = 1:
    every run completes; where a map has an exact expected error, the observed one is in its
    range; the others' errors are finite."""
    sweep = tmp_path / "s"
    p = run_cli("-m", *D1, "features=" + ",".join(GAUSSIAN_MAPS), f"hydra.sweep.dir={sweep}",
                timeout=1200)
    assert p.returncode == 0, p.stderr[-3000:]
    runs = sorted(sweep.glob(f"runs/*/{RECORDS_FILE}"))
    assert len(runs) == len(GAUSSIAN_MAPS)
    seen = set()
    for path in runs:
        df = pd.read_csv(path)
        approx = df[df.measurement == "approximation"].set_index("metric")
        name = df.features.iloc[0]
        seen.add(name)
        observed = approx.value["rel_fro_error"]
        assert np.isfinite(observed), name
        theory = approx[approx.method == "theory"]
        if len(theory) and np.isfinite(theory.value["expected_rel_fro_error"]):
            expected = float(theory.value["expected_rel_fro_error"])
            lo, hi = EXPECTED_RATIO
            assert lo * expected <= observed <= hi * expected, (name, observed, expected)
    assert seen == set(GAUSSIAN_MAPS)


@pytest.mark.parametrize("name", ["rff", "rff_pairs", "orf", "qmc"])
def test_the_issues_one_dimensional_gram_estimate(name):
    """21 points on [0, 3], d = 1, D = 2048: the estimate was off by ~1.0 (or NaN); within
    0.1 at d = 2, 3, 8.  Now as close at d = 1 (the Gaussian kernel, lengthscale 1)."""
    X = np.linspace(0.0, 3.0, 21)[:, None]
    f = FEATURE_MAPS[name](kernel="gaussian", n_components=2048, lengthscale=1.0,
                           random_state=0).fit(X)
    err = np.abs(f.kernel_estimate(X) - reference_gram("gaussian", X, X, 1.0)).max()
    assert err < 0.1, err


def test_one_row_in_every_layout_and_odd_output_buffers(rng):
    """A row whose stride is not its width (x[None, :], a broadcast row, a transposed column,
    a Fortran (1, d) buffer) gave features off by 0.28-0.33; transform(x, out=buf) with
    buf = np.empty((D, 1)).T or a Fortran (1, D) buffer was left unwritten (NaN, inf)."""
    x = rng.standard_normal(5)
    f = FEATURE_MAPS["rff"](n_components=64, lengthscale=1.0, random_state=0).fit(x[None])
    want = np.sqrt(2 / 64) * np.cos(x @ f.random_weights_ + f.random_offset_)
    for view in (x[None, :], np.broadcast_to(x, (1, 5)), x.reshape(5, 1).T,
                 np.asfortranarray(x[None])):
        np.testing.assert_allclose(f.transform(view)[0], want, rtol=0, atol=1e-12)
    for buf in (np.empty((64, 1)).T, np.empty((1, 64), order="F")):
        buf[...] = np.nan
        assert f.transform(x[None], out=buf) is buf
        np.testing.assert_allclose(buf[0], want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda X, y: __import__("rffbench.exact", fromlist=["x"]).ExactKRR(
        kernel="exp_dot", lengthscale=0.05, solver="cg").fit(X, y),
    lambda X, y: __import__("rffbench.exact", fromlist=["x"]).ExactKRR(
        kernel="exp_dot", lengthscale=0.05, solver="cholesky").fit(X, y),
    lambda X, y: FEATURE_MAPS["maclaurin"](kernel="exp_dot", lengthscale=0.05).fit(X),
    lambda X, y: __import__("rffbench.kernels", fromlist=["x"]).make_kernel(
        "exp_dot", lengthscale=0.05).gram(X)],
    ids=["ExactKRR-cg", "ExactKRR-cholesky", "RandomMaclaurin", "gram"])
def test_the_api_refuses_kernel_values_a_run_refuses(rng, make):
    """exp(x.y / l^2) beyond 1e60: the command line refused it; through the API cg's
    predictions were all NaN, RandomMaclaurin estimated 1.4e17 where k = 6.1e128, the Gram was
    inf.  The one rule (Kernel.check_values) now runs wherever the kernel meets data."""
    X, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DataError, match=r"kernel=exp_dot\(lengthscale=0.05\): its values "
                                            r"on .* use kernel.lengthscale >= "):
            make(X, y)


def test_a_refusal_names_the_key_the_user_set(tmp_path, capsys):
    """kernel.gamma=100 was refused with advice on kernel.lengthscale only."""
    out = tmp_path / "run"
    code = run_main(compose_config(["kernel=exp_dot", "features=maclaurin", "kernel.gamma=100",
                                    "D=32", "measure.bounds.trials=4"]), out)
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err, err
    assert "kernel=exp_dot(gamma=100 (lengthscale 0.1))" in err and "use kernel.gamma <= " in err
    assert not (out / RECORDS_FILE).exists()


@pytest.mark.parametrize("name", ["rff", "rff_pairs", "orf", "qmc"])
def test_one_dimensional_least_squares_learns_a_sine(name):
    """The 1-D least-squares example of rfflearn (ported: y = sin(x) on [0, 2 pi], random
    features and ridge) failed on the refused GEMM; now it fits the curve as the exact
    kernel machine does."""
    from rffbench.models import FeatureRidge

    X = np.linspace(0.0, 2 * np.pi, 200)[:, None]
    y = np.sin(X[:, 0])
    f = FEATURE_MAPS[name](kernel="gaussian", n_components=256, lengthscale=1.0,
                           random_state=0).fit(X)
    model = FeatureRidge(1e-6).fit(f, X, y[:, None])
    rmse = float(np.sqrt(np.mean((model.predict(X)[:, 0] - y) ** 2)))
    assert rmse < 1e-2, rmse


def test_a_map_with_fewer_columns_than_d_in_the_lambda_search(tmp_path):
    """model.lam=auto fits the map on 80% of the training rows: Nystrom with D = 256 on 240
    rows outputs 240 columns, and ridge's normal equations were sized by D (an internal
    error from scipy's dsyrk, "0-th dimension must be fixed to 240 but got 256"); they now
    take the fitted map's width."""
    out = tmp_path / "run"
    code = run_main(compose_config(["dataset=synthetic", "dataset.n=400", "dataset.d=2",
                                    "features=nystrom", "D=256", "measure.bounds.enabled=false",
                                    "measure.timing.enabled=false",
                                    "measure.learning.repeats=1"]), out)
    assert code == 0
    df = pd.read_csv(out / RECORDS_FILE)
    rel = df[df.metric == "test_rel_rmse"].set_index("method").value
    assert np.isfinite(rel["ridge"]) and rel["ridge"] <= 1.2 * rel["exact_krr"], rel
