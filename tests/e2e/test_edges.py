"""Every failure a clear line: memory plans, numbers at the edges, the file system.

Each family with several cases; every error is one line naming its cause, exit code 2, and
no records file; every NaN value carries its reason in ``note``."""
import contextlib
import re
import subprocess
import uuid

import numpy as np
import pandas as pd
import pytest

from rffbench.experiment import main as run_main
from rffbench.kernels import make_kernel
from rffbench.results import RECORDS_FILE
from tests.helpers import FAST, compose_config, one_line_error, refused, run_cli


def records(tmp_path, overrides):
    out = tmp_path / "run"
    assert run_main(compose_config([*FAST, *overrides]), out) == 0
    return pd.read_csv(out / RECORDS_FILE)


# --------------------------------------------------------------------------
# numbers at the edges
# --------------------------------------------------------------------------
def _csv(tmp_path, X, y, name="d.csv"):
    path = tmp_path / name
    pd.DataFrame(np.c_[X, y], columns=[f"x{i}" for i in range(X.shape[1])] + ["y"]).to_csv(
        path, index=False)
    return str(path)


@pytest.fixture
def small(rng):
    return rng.standard_normal((60, 3)), rng.integers(0, 2, 60)


def test_standardising_overflowing_values_gives_the_same_result(tmp_path, small):
    X, y = small
    a = records(tmp_path / "a", ["dataset=file", f"dataset.path={_csv(tmp_path, X, y, 'a.csv')}"])
    b = records(tmp_path / "b", ["dataset=file",
                                 f"dataset.path={_csv(tmp_path, X * 1e307, y, 'b.csv')}"])
    for frame in (a, b):
        assert np.isfinite(frame.value.dropna()).all()
    key = ["measurement", "metric", "method", "delta", "dist"]
    approx = lambda f: f[f.measurement == "approximation"].set_index(key[:3]).value  # noqa: E731
    np.testing.assert_allclose(approx(a), approx(b), rtol=1e-9)


@pytest.mark.parametrize("make,extra,match", [
    (lambda X, y: (X * 1e200, y), ["dataset.scale=none"],
     r"feature values up to .* squared distances leave float64's range above 1e\+100: rescale "
     r"the data or set dataset.scale=standardize"),
    (lambda X, y: (X * 1e-200, y), ["dataset.scale=none"],
     r"every feature value is at most .* squared distances underflow"),
    (lambda X, y: (X * 1e20, y), ["dataset.scale=none", "dtype=float32"],
     r"leave float32's range above 1e\+15"),
    (lambda X, y: (X, y * 1e200), ["dataset.file_task=regression"], r"targets up to .*rescale"),
    (lambda X, y: (X[:1], y[:1]), [], r"1 row\(s\); a run needs at least 3"),
])
def test_data_at_the_edges_is_a_clear_error(tmp_path, capsys, small, make, extra, match):
    X, y = make(*small)
    err = one_line_error(tmp_path, capsys, ["dataset=file", f"dataset.path={_csv(tmp_path, X, y)}",
                                            *extra])
    assert re.search(match, err), err


def test_complex_data_is_refused(tmp_path, capsys, small):
    X, y = small
    path = tmp_path / "c.npz"
    np.savez(path, X=X + 1j, y=y)
    err = one_line_error(tmp_path, capsys, ["dataset=file", f"dataset.path={path}"])
    assert "X is complex (dtype complex128)" in err


@pytest.mark.parametrize("overrides,match", [
    (["kernel.lengthscale=1e-40", "dtype=float32", "dataset=synthetic", "dataset.n=60"],
     r"kernel.lengthscale=1e-40 is not allowed with dtype=float32 .* use a lengthscale >= "),
    (["dataset=synthetic", "dataset.n=60", "dataset.radius=1e-200",
      "kernel.lengthscale=median", "dataset.scale=none"], r"underflow"),
])
def test_lengthscales_at_the_edges(tmp_path, capsys, overrides, match):
    assert re.search(match, one_line_error(tmp_path, capsys, overrides))


@pytest.mark.parametrize("overrides,metric,why", [
    (["dataset=synthetic", "dataset.n=5", "dataset.test_size=0.2", "model.lam=1"],
     "test_rel_rmse", "a single test row"),
    (["dataset=synthetic", "dataset.n=60", "dataset.noise=0", "dataset.radius=1e-90",
      "dataset.scale=standardize", "model.lam=1"], None, None),
])
def test_every_nan_metric_says_why(tmp_path, overrides, metric, why):
    df = records(tmp_path, overrides)
    nan = df[df.value.isna()]
    assert (nan.note.fillna("").str.len() > 0).all(), nan[["metric", "method", "note"]]
    assert np.isfinite(df.value.dropna()).all()
    if metric:
        assert why in nan[nan.metric == metric].note.iloc[0]


def test_constant_target_relative_rmse_is_nan_with_its_reason(tmp_path, capsys, small):
    """Constant test targets: the relative RMSE is undefined, recorded empty with why;
    constant training targets leave nothing to learn: refused, naming the data."""
    X, y = small
    n_test = int(round(0.25 * len(X)))
    y = np.r_[y[:len(X) - n_test], np.full(n_test, 3.5)]  # the ordered split's test rows
    path = _csv(tmp_path, X, y)
    df = records(tmp_path, ["dataset=file", f"dataset.path={path}", "dataset.split=ordered",
                            "dataset.file_task=regression", "model.lam=1"])
    rel = df[df.metric == "test_rel_rmse"]
    assert rel.value.isna().all() and rel.note.str.contains("test targets are all equal").all()
    assert (df[df.metric == "test_rmse"].value >= 0).all()
    path = _csv(tmp_path, X, np.full(len(X), 3.5), "constant.csv")
    err = one_line_error(tmp_path / "again", capsys, ["dataset=file", f"dataset.path={path}",
                                                      "dataset.file_task=regression",
                                                      "model.lam=1"])
    assert "training targets are all equal (3.5): nothing to learn" in err


@pytest.mark.parametrize("kernel,nu", [("gaussian", None), ("laplacian", None),
                                       ("cauchy", None), ("matern", 0.5), ("matern", 1.5),
                                       ("matern", 2.5)])
def test_kernels_at_extreme_distances_are_zero_not_nan(kernel, nu):
    params = dict(lengthscale=1e-100) | (dict(nu=nu) if nu else {})
    k = make_kernel(kernel, **params).fit(None)
    X = np.array([[0.0, 0.0], [1e100, -1e100]])
    with np.errstate(all="raise"):
        G = k.gram(X)
    np.testing.assert_array_equal(G, np.eye(2))
    assert k.k_of_delta(X[1] - X[0]) == 0.0


def test_identical_features_give_a_zero_spectral_error(tmp_path):
    df = records(tmp_path, ["dataset=synthetic", "dataset.n=60", "features=rff_pairs",
                            "kernel.lengthscale=1e100"])
    a = df[df.measurement == "approximation"].set_index("metric").value
    assert a["rel_spectral_error"] == 0.0 and a["max_abs_error"] < 1e-12
    ss = df[(df.metric == "eps_bound") & (df.method == "sutherland_schneider") & df.dist.isna()]
    assert ss.value.isna().all() and ss.note.str.contains("assumes sigma_p diam").all()


# --------------------------------------------------------------------------
# the file system: one line naming the directory, nothing half-written
# --------------------------------------------------------------------------
@contextlib.contextmanager
def tmpfs(path, options):
    path.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({p.stderr.strip() or 'mount failed'}; needs "
                    "root or CAP_SYS_ADMIN)")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _cli_error(args, where):
    p = run_cli(*args)
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("rffbench")]
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert lines and where in lines[0], p.stderr[-2000:]
    return lines[0]


@pytest.mark.parametrize("mode", ["run", "sweep"])
@pytest.mark.slow
def test_output_dir_under_a_file(tmp_path, mode):
    f = tmp_path / "file"
    f.write_text("x")
    key = "hydra.run.dir" if mode == "run" else "hydra.sweep.dir"
    line = _cli_error([*(["-m"] if mode == "sweep" else []), "D=16", f"{key}={f / 'out'}"],
                      f"{key}='{f / 'out'}'")
    assert "Not a directory" in line


@pytest.mark.slow
def test_read_only_file_system(tmp_path):
    with tmpfs(tmp_path / f"ro{uuid.uuid4().hex[:6]}", "ro,size=1m") as ro:
        line = _cli_error(["D=16", f"hydra.run.dir={ro / 'run'}"], f"hydra.run.dir='{ro / 'run'}'")
        assert "Read-only file system" in line
        line = _cli_error(["-m", "D=16,32", f"hydra.sweep.dir={ro / 'sw'}"], "hydra.sweep.dir")
        assert "Read-only file system" in line


@pytest.mark.slow
def test_full_disk_run_and_sweep(tmp_path):
    with tmpfs(tmp_path / f"full{uuid.uuid4().hex[:6]}", "size=64k") as full:
        # no room for the probe: refused before Hydra writes anything
        with open(full / "fill", "wb") as fh:
            with contextlib.suppress(OSError):
                fh.write(b"\0" * (80 << 10))
        line = _cli_error(["D=16", f"hydra.run.dir={full / 'run'}"], "hydra.run.dir")
        assert "No space left on device" in line and not (full / "run").exists()
    with tmpfs(tmp_path / f"small{uuid.uuid4().hex[:6]}", "size=100k") as small:
        # room for Hydra's files, not for the records: the run's line names the file
        line = _cli_error(["D=16", f"hydra.run.dir={small / 'run'}"], "cannot write")
        assert "No space left on device" in line and str(small / "run") in line
        assert not list((small / "run").glob("*.csv")) and not list((small / "run").glob(".*tmp"))
    with tmpfs(tmp_path / f"sweep{uuid.uuid4().hex[:6]}", "size=300k") as room:
        # the disk fills in the middle of a sweep: that job fails, the others still run
        p = run_cli("-m", "D=16,32,48", f"hydra.sweep.dir={room / 'sw'}")
        assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr[-2000:]
        assert "No space left on device" in p.stderr
        assert len(list((room / "sw").glob(f"runs/*/{RECORDS_FILE}"))) >= 1


@pytest.mark.parametrize("overrides,fix", [
    (["kernel.degree=20", "kernel.lengthscale=0.01"], "kernel.lengthscale >= "),
    (["kernel.degree=20", "kernel.coef0=1000000", "kernel.lengthscale=1"], "kernel.coef0 <= "),
    (["kernel.degree=12", "dataset.scale=none", "kernel.lengthscale=0.01"],
     "kernel.lengthscale >= "),
])
def test_a_badly_scaled_polynomial_run_is_one_line_not_a_silent_nan(tmp_path, capsys,
                                                                     overrides, fix):
    """Valid values whose kernel overflows the squares and variances (before: inf and NaN
    in the approximation errors and bounds, no message): one line with the value that fits;
    the values it names then run with every number finite or explained."""
    err = one_line_error(tmp_path, capsys, ["kernel=polynomial", "features=maclaurin",
                                            *overrides])
    assert "kernel=polynomial(degree=" in err and fix in err, err
    fixes = dict(re.findall(r"(kernel\.\w+) [<>]= ([0-9.e+-]+)", err))
    fixed = [o for o in overrides if o.split("=")[0] not in fixes]
    fixed += [f"{k}={v}" for k, v in fixes.items()]
    out = tmp_path / "fixed"
    # (learning off: kernel values up to 1e60 need a lambda grid of that scale)
    assert run_main(compose_config([*FAST, "kernel=polynomial", "features=maclaurin",
                                    "measure.learning.enabled=false", *fixed]), out) == 0, \
        capsys.readouterr().err
    df = pd.read_csv(out / RECORDS_FILE)
    vals = pd.to_numeric(df.value, errors="coerce")
    assert np.isfinite(vals[vals.notna()]).all()
    assert df[vals.isna()].note.fillna("").str.len().gt(0).all()


def test_the_polynomial_value_bound_holds(rng):
    """check_values' bound (R^2 / l^2 + c)^p is at least the Gram's largest entry."""
    from rffbench.kernels import max_row_norm

    X = rng.normal(size=(50, 4)) * 3
    k = make_kernel("polynomial", degree=7, coef0=2.0, lengthscale=0.7).fit(None)
    top = np.abs(k.gram(X)).max()
    R = max_row_norm(X)
    assert top <= (R * R / 0.49 + 2.0) ** 7 * (1 + 1e-12)
    assert top >= 0.5 * (np.einsum("ij,ij->i", X, X).max() / 0.49 + 2.0) ** 7  # the diagonal


@pytest.mark.parametrize("kernel,features,domain", [
    ("additive_chi2", "sklearn_chi2", "inputs >= 0"), ("skewed_chi2", "rff", "inputs > -1")])
def test_variance_grid_pairs_outside_a_kernels_domain(tmp_path, capsys, kernel, features,
                                                      domain):
    """The variance measurement's grid pairs lie around 0: a kernel of non-negative data
    refuses them by name (a DataError about 'the data' before, which the user had not
    given)."""
    err = one_line_error(tmp_path, capsys, [f"kernel={kernel}", f"features={features}",
                                            "dataset.scale=none", "D=64",
                                            "measure.variance.enabled=true"])
    assert f"measure.variance.pairs='grid' is not allowed with kernel={kernel}" in err, err
    assert f"({domain}); use measure.variance.pairs=data" in err, err


# --------------------------------------------------------------------------
# the new paths' own edges (each was a traceback)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("cross", ["independent", "halves", "false"])
def test_too_few_test_rows_for_the_approximation_is_one_line(tmp_path, capsys, cross):
    """rows=test_first with one test row (test_size=0.01 of 100): no pair of points to
    compare, in any cross mode (was sklearn's 'Found array with 0 sample(s)')."""
    err = one_line_error(tmp_path, capsys, [
        "dataset=synthetic", "dataset.n=100", "dataset.d=4", "dataset.test_size=0.01",
        "measure.approximation.rows=test_first", f"measure.approximation.cross={cross}"])
    assert err == ("rffbench: error: measure.approximation.n_points=null is not allowed here: "
                   "dataset=synthetic has 1 test point and the measurement needs at least 2; "
                   "raise dataset.test_size (or rows=train)")


def test_leverage_landmarks_with_a_vanishing_ridge_on_repeated_rows_run(tmp_path):
    """features=nystrom landmarks=leverage landmark_lam=1e-300 (in range) on data whose rows
    repeat: K_SS + n lam I is singular in floating point; the scores are the lam -> 0 limit
    (a pseudo-inverse), and the run completes through ``python run.py`` (was LinAlgError)."""
    rng = np.random.default_rng(0)
    rows = np.repeat(rng.normal(size=(6, 3)), 40, axis=0)  # 6 rows, each 40 times
    df = pd.DataFrame(rows, columns=["a", "b", "c"]).assign(y=rows.sum(axis=1))
    path = tmp_path / "dup.csv"
    df.to_csv(path, index=False)
    p = run_cli("dataset=file", f"dataset.path={path}", "features=nystrom", "D=16",
                "features.params.landmarks=leverage", "features.params.landmark_lam=1e-300",
                "measure.bounds.enabled=false", "measure.learning.repeats=1",
                "measure.timing.repeats=3", f"hydra.run.dir={tmp_path / 'r'}")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert (tmp_path / "r" / RECORDS_FILE).exists()


def test_a_landmark_ridge_without_effect_is_one_line(tmp_path):
    """features=nystrom features.params.landmark_lam=0.5 with the default uniform rule
    (which draws no leverage scores) is refused as the other no-effect settings are."""
    p = run_cli("features=nystrom", "features.params.landmark_lam=0.5",
                f"hydra.run.dir={tmp_path / 'r'}")
    assert refused(p, tmp_path / "r") == (
        "rffbench: error: features.params.landmark_lam=0.5 is not allowed: it has no effect "
        "here (landmarks=uniform does not use it; landmarks=leverage does); leave it at its "
        "default 0.001")
