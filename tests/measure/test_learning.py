"""The learning measurement end to end: records, convergence to exact KRR,
skip and refusal paths, bad input, the fashion_mnist loader on the real files."""
import os

import numpy as np
import pandas as pd
import pytest

from rffbench import memory
from rffbench.datasets import FASHION_MNIST_DIR, FASHION_MNIST_FILES
from rffbench.experiment import main as run_main
from rffbench.experiment import run
from rffbench.results import RECORDS_FILE
from tests.helpers import compose_config

ONLY = ["measure.approximation.enabled=false", "measure.bounds.enabled=false",
        "measure.timing.enabled=false", "measure.learning.repeats=1"]
METRICS = {"test_rmse", "test_rel_rmse", "test_error_rate", "train_time_s", "predict_time_s",
           "map_time_s", "gram_time_s", "solve_time_s", "peak_rss_mb", "lambda",
           "precond_time_s", "cg_iterations", "cg_residual"}


def learning(*overrides):
    df, _ = run(compose_config([*ONLY, *overrides]))
    return df[df.measurement == "learning"]


def test_records_vocabulary_and_relative_rmse():
    from rffbench.config import validate
    from rffbench.datasets import load_dataset

    cfg = compose_config([*ONLY, "dataset=diabetes", "D=128"])
    df = learning("dataset=diabetes", "D=128")
    y_test = load_dataset(validate(cfg).dataset, seed=0).y_test
    assert set(df.metric) <= METRICS and set(df.method) == {"ridge", "exact_krr"}
    for m in ("ridge", "exact_krr"):
        r = df[df.method == m].set_index("metric").value
        assert r["test_rmse"] > 0 and r["train_time_s"] > 0 and r["predict_time_s"] > 0
        assert r["lambda"] in [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]
        assert r["test_rel_rmse"] == pytest.approx(r["test_rmse"] / np.std(y_test), rel=1e-12)
        assert r["peak_rss_mb"] > 10
    lam_note = df[(df.metric == "lambda") & (df.method == "ridge")].note.item()
    assert lam_note.startswith("auto: validation error by lambda {1e-06:")


def test_ridge_approaches_exact_krr_as_D_grows():
    gaps = {}
    for D in (16, 256, 2048):
        e = learning(f"D={D}", "model.lam=1e-2").query("metric == 'test_error_rate'")
        e = e.set_index("method").value
        gaps[D] = e["ridge"] - e["exact_krr"]
    # digits, 450 test points: exact KRR ~1.6% error; 16 features are far worse
    assert gaps[16] > 0.1 and gaps[256] < gaps[16] and abs(gaps[2048]) < 0.03, gaps


def test_exact_skipped_above_exact_max_n_and_when_memory_is_short(monkeypatch):
    df = learning("dataset=wine", "D=32", "model.exact_max_n=50")
    ex = df[df.method == "exact_krr"]
    assert len(ex) == 1 and ex.value.isna().all()
    assert "n_train=134 > model.exact_max_n=50" in ex.note.item()
    # wine: ridge with D=32 needs ~93 kB, the exact 134 x 134 Gram 144 kB: only the Gram is refused
    monkeypatch.setattr(memory, "available_bytes", lambda: 150_000)
    df = learning("dataset=wine", "D=32", "model.lam=0.1")
    ex = df[df.method == "exact_krr"]
    assert len(ex) == 1 and "GiB available" in ex.note.item()
    assert df[df.method == "ridge"].value.notna().all()  # the feature model still ran


def test_exact_cg_agrees_with_cholesky_in_a_run():
    """The run's two exact solvers: same lambda (auto), test RMSE to the tolerance, and
    the cg records (iterations, the recomputed residual, preconditioner time)."""
    base = ["dataset=synthetic", "dataset.n=1600", "dataset.d=4", "D=64"]
    chol = learning(*base, "model.exact_solver=cholesky")
    cg = learning(*base, "model.exact_solver=cg", "model.precond_rank=200", "model.cg_tol=1e-8")
    a = chol[chol.method == "exact_krr"].set_index("metric")
    b = cg[cg.method == "exact_krr"].set_index("metric")
    assert a.value["lambda"] == b.value["lambda"]
    assert b.value["test_rmse"] == pytest.approx(a.value["test_rmse"], rel=1e-5)
    assert b.value["cg_residual"] <= 1e-8 and b.value["cg_iterations"] >= 1
    assert b.note["cg_iterations"].startswith("converged") and b.value["precond_time_s"] > 0
    assert "cg without the Gram" in b.note["train_time_s"] and "gram_time_s" not in b.index
    assert "cg_iterations" not in a.index
    # mixed precision (float32 tiles, float64 sums) solves with the float32 kernel: a
    # perturbation of K by ~1e-7 relative moves alpha by up to ~1e-7 ||K|| / lam; at the
    # lam = 1e-4 chosen here the test RMSE moved by 2e-4 relative (measured), so 1e-3
    mixed = learning(*base, "model.exact_solver=cg", "model.precond_rank=200",
                     "model.cg_tol=1e-6", "model.exact_precision=mixed")
    c = mixed[mixed.method == "exact_krr"].set_index("metric")
    assert c.value["lambda"] == a.value["lambda"]
    assert c.value["test_rmse"] == pytest.approx(a.value["test_rmse"], rel=1e-3)
    assert "mixed precision: float32 tiles" in c.note["solve_time_s"]
    assert "float64 tiles" in b.note["solve_time_s"]


PYTHON_TILES = "tile by tile through the kernel's Gram"


@pytest.mark.parametrize("kernel,features,route", [
    ("rational_quadratic", "rff", PYTHON_TILES), ("anova", "anova_rf", PYTHON_TILES),
    ("intersection", "mb", "sorted coordinates")])
def test_mixed_precision_where_it_does_not_apply_is_recorded_as_what_ran(kernel, features,
                                                                         route):
    """kernel=rational_quadratic with model.exact_precision=mixed was recorded as "fused ...
    float32 tiles" while its products went through float64 tiles from Python: the note
    names the route the products took, float64, and that the precision asked does not
    apply."""
    df = learning("dataset=digits", "dataset.n_max=300", "D=64", "dataset.scale=max",
                  f"kernel={kernel}", f"features={features}", "kernel.lengthscale=8.0",
                  "model.exact_solver=cg", "model.exact_precision=mixed")
    note = df[(df.method == "exact_krr") & (df.metric == "solve_time_s")].note.item()
    assert route in note and "float32" not in note, note
    assert "model.exact_precision=mixed does not apply to this route: float64" in note, note


def _cg_and_cholesky(tmp_path, base, rank):
    """Exact KRR's records of `python run.py *base` with cg (tolerance 1e-9, the given
    preconditioner rank) and with Cholesky."""
    from tests.helpers import run_cli

    runs = []
    for name, extra in (("cg", ["model.exact_solver=cg", f"model.precond_rank={rank}",
                                "model.cg_tol=1e-9"]),
                        ("chol", ["model.exact_solver=cholesky"])):
        out = tmp_path / name
        p = run_cli(*base, *extra, f"hydra.run.dir={out}")
        assert p.returncode == 0, p.stderr[-2000:]
        df = pd.read_csv(next(out.rglob(RECORDS_FILE)))
        runs.append(df[df.method == "exact_krr"].set_index("metric"))
    return runs


def test_exact_cg_through_sorted_coordinates_from_the_command_line(tmp_path):
    """`python run.py kernel=intersection model.exact_solver=cg` (digits' pixels scaled by
    their maximum): the products go through the sorted coordinates, the records say so,
    and the test error rate is Cholesky's."""
    b, a = _cg_and_cholesky(tmp_path, ["dataset=digits", "dataset.scale=max",
                                       "kernel=intersection", "features=mb", "D=256", *ONLY,
                                       "model.lam=0.1"], rank=800)
    assert "through the kernel's sorted coordinates" in b.note["solve_time_s"]
    assert b.value["cg_residual"] <= 1e-9
    assert b.value["test_error_rate"] == a.value["test_error_rate"]


def test_exact_cg_through_explicit_features_from_the_command_line(tmp_path):
    """`python run.py kernel=polynomial model.exact_solver=cg`: the products go through the
    kernel's 15 explicit features (degree 2, d = 4), the records say so, and the test
    RMSE is Cholesky's to the tolerance; the Gaussian kernel's note names the tiles."""
    b, a = _cg_and_cholesky(tmp_path, ["kernel=polynomial", "features=tensorsketch",
                                       "dataset=synthetic", "dataset.n=1600", "dataset.d=4",
                                       "D=64", *ONLY, "model.lam=0.01"], rank=50)
    assert "through the kernel's 15 explicit features" in b.note["solve_time_s"]
    assert b.value["cg_residual"] <= 1e-9
    assert b.value["test_rmse"] == pytest.approx(a.value["test_rmse"], rel=1e-6)
    g = learning("dataset=synthetic", "dataset.n=400", "dataset.d=4", "D=16",
                 "model.exact_solver=cg", "model.precond_rank=50")
    assert "numba tiles" in g[g.method == "exact_krr"].set_index("metric").note["solve_time_s"]


def test_cg_memory_counts_the_explicit_features():
    """The cg plan's memory includes phi (n x M float64) when the products go through the
    kernel's explicit features: the polynomial kernel of degree 2 at d = 4 (15 features)
    needs 8 n 15 bytes more than the same run without them; a Gaussian kernel none."""
    from types import SimpleNamespace

    from rffbench.config import validate
    from rffbench.measure import learning as lm

    cfg = validate(compose_config(["dataset=synthetic", "dataset.n=1600", "dataset.d=4",
                                   "kernel=polynomial", "features=tensorsketch"]))
    data = SimpleNamespace(X_train=np.zeros((1200, 4)), d=4, n_classes=0)
    ctx = SimpleNamespace(cfg=cfg, data=data)
    from rffbench.exact import ExactKRR, explicit_features_bound

    poly = (cfg.kernel.name, cfg.kernel.kernel_params())
    assert explicit_features_bound(*poly, 1200, 4) == 15
    assert explicit_features_bound(*poly, 100, 4) == 0  # 8 x 15 > 100 rows: tiles
    gauss = validate(compose_config(["dataset=synthetic", "dataset.n=1600", "dataset.d=4"]))
    assert explicit_features_bound(gauss.kernel.name, {}, 1200, 4) == 0
    assert ExactKRR.memory_bytes(1200, 4, solver="cg", kernel=poly[0], kernel_params=poly[1]) \
        - ExactKRR.memory_bytes(1200, 4, solver="cg") == 8 * 1200 * 15
    assert lm._cg_bytes(ctx) - lm._cg_bytes(SimpleNamespace(cfg=gauss, data=data)) \
        == 8 * 1200 * 15


def test_exact_cg_not_converged_is_a_record_not_an_answer():
    df = learning("dataset=synthetic", "dataset.n=800", "dataset.d=3", "D=32", "model.lam=1e-6",
                  "model.exact_solver=cg", "model.cg_max_iter=2", "model.precond_rank=2")
    ex = df[df.method == "exact_krr"].set_index("metric")
    assert np.isnan(ex.value["test_rmse"]) and np.isnan(ex.value["test_rel_rmse"])
    assert ex.note["test_rmse"].startswith("cg not converged: relative residual")
    assert "model.cg_max_iter=2" in ex.note["test_rmse"]
    assert ex.value["cg_residual"] > 1e-6 and ex.value["cg_iterations"] == 2
    assert ex.note["cg_iterations"] == ex.note["test_rmse"]


def test_sgd_and_peers_in_one_table():
    rows = []
    for feats in ("rff", "sklearn_rbf", "nystrom"):
        df = learning("dataset=breast_cancer", f"features={feats}", "D=64", "model=sgd",
                      "model.lam=1e-2", "measure.learning.exact=false")
        rows.append(df)
    df = pd.concat(rows)
    err = df[df.metric == "test_error_rate"].set_index("features").value
    assert set(err.index) == {"rff", "sklearn_rbf", "nystrom"} and (err < 0.2).all(), err
    assert set(df.method) == {"sgd"}


@pytest.mark.parametrize("overrides,match", [
    (["model.lam=0"], "model.lam=0 is not allowed: use a number > 0 or auto"),
    (["model.lam=-1"], "model.lam=-1 is not allowed"),
    (["model.exact_max_n=0"], "model.exact_max_n=0 is not allowed"),
    (["model=sgd", "model.loss=hinge", "dataset=diabetes"],
     "model.loss='hinge' is not allowed for the regression dataset=diabetes"),
    (["features=sklearn_rbf", "kernel=laplacian"], "features=sklearn_rbf is not allowed with "
                                                   "kernel=laplacian"),
    (["features=nystrom", "D=5000", "dataset=wine"], "D=5000 is not allowed for features=nystrom"),
    (["D=300000"], "D=300000 is not allowed: the learning measurement (ridge on features: 3 D x D"),
    (["model.val_size=1.5"], "model.val_size=1.5 is not allowed"),
    (["model.exact_solver=lu"], "model.exact_solver='lu' is not allowed: use one of auto, "
                                "cholesky, cg"),
    (["model.cg_tol=2"], "model.cg_tol=2.0 is not allowed: use a number in [1e-14, 1)"),
    (["model.precond_rank=0"], "model.precond_rank=0 is not allowed"),
    (["measure.learning.processes=0"], "measure.learning.processes=0 is not allowed: use an "
                                       "integer in 1..100"),
    (["measure.learning.unstable_ratio=1"], "measure.learning.unstable_ratio=1.0 is not allowed"),
    (["measure.learning.processes=2", "backend.name=dask"], "measure.learning.processes=2 is "
                                                           "not allowed with backend.name=dask"),
])
def test_bad_input_one_line(tmp_path, capsys, overrides, match):
    code = run_main(compose_config([*ONLY, *overrides]), tmp_path)
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("rffbench: error:") and match in err and "\n" not in err
    assert not (tmp_path / RECORDS_FILE).exists()


def test_single_class_labels_refused(tmp_path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("a,b,y\n" + "".join(f"{i},{i % 3},1\n" for i in range(20)))
    cfg = compose_config([*ONLY, "dataset=file", f"dataset.path={path}",
                          "dataset.file_task=classification"])
    assert run_main(cfg, tmp_path) == 2
    assert "classification needs at least 2 classes, found 1" in capsys.readouterr().err


HAVE_FASHION = all(os.path.isfile(os.path.join(FASHION_MNIST_DIR, f)) for f in FASHION_MNIST_FILES)


@pytest.mark.skipif(not HAVE_FASHION and not os.environ.get("CI"),
                    reason="apt-get install dataset-fashion-mnist (CI installs it)")
@pytest.mark.slow
def test_fashion_mnist_real_files():
    from rffbench.config import DatasetConfig
    from rffbench.datasets import DATASETS, load_dataset

    dcfg = DatasetConfig(name="fashion_mnist", path=FASHION_MNIST_DIR, test_size=1 / 7)
    data = load_dataset(dcfg, seed=0)
    assert data.X_train.shape == (60000, 784) and data.X_test.shape == (10000, 784)
    assert DATASETS["fashion_mnist"].shape(dcfg) == (70000, 784)  # the memory plan's
    assert data.n_classes == 10 and np.bincount(data.y_train).tolist() == [6000] * 10
    assert "Fashion-MNIST" in data.source
    df = learning("dataset=fashion_mnist", "dataset.n_max=1500", "D=256", "model.lam=1e-1")
    err = df[df.metric == "test_error_rate"].set_index("method").value
    assert (err < 0.35).all(), err  # chance is 0.9


def test_fashion_mnist_missing_files_name_the_install_command(tmp_path, capsys):
    cfg = compose_config([*ONLY, "dataset=fashion_mnist", f"dataset.path={tmp_path}"])
    assert run_main(cfg, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert "sudo apt-get install dataset-fashion-mnist" in err and "\n" not in err


def test_fit_and_predict_timed_again_in_fresh_worker_processes():
    """measure.learning.processes=2: train_time_s and predict_time_s of the model and of
    exact KRR are the median of two worker processes' medians, with their ratio and the
    unstable flag; the test errors are the run's own (the same as with one process)."""
    base = ["dataset=synthetic", "dataset.n=400", "dataset.d=3", "D=32"]
    one = learning(*base).set_index(["method", "metric"])
    two = learning(*base, "measure.learning.processes=2").set_index(["method", "metric"])
    for method in ("ridge", "exact_krr"):
        assert two.loc[(method, "test_rmse"), "value"] == one.loc[(method, "test_rmse"), "value"]
        for what in ("train", "predict"):
            note = two.loc[(method, f"{what}_time_s"), "note"]
            assert "2 worker processes' medians" in note and "in the run's own process" in note
            ratio = two.loc[(method, f"{what}_process_ratio"), "value"]
            flag = two.loc[(method, f"{what}_unstable"), "value"]
            assert ratio >= 1 and flag == float(ratio > 1.3)
        assert (method, "train_process_ratio") not in one.index


@pytest.mark.parametrize("lengthscale,dual", [(50.0, False), (0.02, True)])
def test_ridge_on_sparse_features_is_planned_by_their_columns(monkeypatch, lengthscale, dual):
    """Binning's columns are known once it is fitted: the run plans again with them.  Few
    wide bins (few columns, the primal: 3 x columns^2) run where the n x n dual would not
    fit; many small bins (more columns than rows) plan the dual and are refused in one
    line naming it, before any measurement.  The plan once counted the dual whatever
    the columns: 16 n^2 bytes, 28 MB at n_train = 1,320 against the primal's 70 kB."""
    from rffbench.errors import ConfigError

    n_train = 1320
    budget = 4 * n_train ** 2 + 2e6  # a quarter of the dual's Gram and its factor
    monkeypatch.setattr(memory, "available_bytes", lambda: budget / memory.MEMORY_FRACTION)
    args = ("dataset=synthetic", "dataset.n=1760", "dataset.d=2", "features=binning",
            "kernel=laplacian", f"kernel.lengthscale={lengthscale}", "D=8", "model.lam=0.1",
            "measure.learning.exact=false")
    if not dual:
        df = learning(*args)
        ridge = df[df.method == "ridge"].set_index("metric")
        assert ridge.value["test_rmse"] > 0 and df.n_train.iloc[0] == n_train
        assert df.n_columns.iloc[0] < n_train  # the primal
        return
    with pytest.raises(ConfigError, match=r"^dataset.n=1760 is not allowed: the learning "
                                          r"measurement \(ridge in the dual: n_train x n_train "
                                          r"\(\d+ columns > 1320 rows\)\) needs .* more than "
                                          r"80% of .*; dataset.n <= \d+ fits$"):
        learning(*args)
    # friedman1 generates its rows too: the line names dataset.n (it named dataset.n_max,
    # the key of the sources read from files: the refusal was hard-coded for synthetic)
    friedman = ["dataset=friedman1"] + [("dataset.d=5" if a == "dataset.d=2" else a)
                                        for a in args if a != "dataset=synthetic"]
    with pytest.raises(ConfigError, match=r"^dataset.n=1760 is not allowed: .*; "
                                          r"dataset.n <= \d+ fits$"):
        learning(*friedman)
