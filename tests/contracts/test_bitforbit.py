"""Bit for bit: the same config and seed give the same records at 1 and 2 threads for
every registered map and measurement, except the values each measurement declares
(Measurement.varies): measured times and memory, and the values whose last bits depend on
the thread count (BLAS/LAPACK reductions), which agree to ~1e-13 relative; and the same
records again across launchers (basic, joblib, submitit) at the same thread count."""
import numpy as np
import pandas as pd
import pytest

from rffbench.experiment import run
from rffbench.features import FEATURE_MAPS
from rffbench.measure import measurement_classes
from tests.helpers import compose_config, run_cli

#: the kernel each map runs on here: its first declared kernel (gaussian for the maps of
#: every shift-invariant kernel), arccos1 for arccos
KERNEL = {"arccos": "arccos1"}
DATA = ["dataset=synthetic", "dataset.n=500", "dataset.d=4"]
SMALL = ["measure.bounds.trials=6",
         "measure.learning.repeats=1", "measure.variance.enabled=true",
         "measure.variance.redraws=6", "measure.variance.n_pairs=20"]


def kinds(df):
    classes = measurement_classes()
    out = []
    for m, metric in zip(df.measurement, df.metric):
        v = classes[m]().varies(metric)
        out.append(v[0] if v else "")
    return np.array(out)


def compare(a, b, what):
    """The stable values the same bits; the thread-dependent ones within 1e-10 relative."""
    cols = ["measurement", "metric", "method", "delta", "dist"]
    assert a[cols].astype(str).equals(b[cols].astype(str)), what
    kind = kinds(a)
    va, vb = a.value.to_numpy(float), b.value.to_numpy(float)
    same = (va == vb) | (np.isnan(va) & np.isnan(vb))
    bad = (kind == "") & ~same
    assert not bad.any(), (what, a[bad][["measurement", "metric", "method"]].to_string(),
                           va[bad], vb[bad])
    near = (kind == "threads") & ~same
    rel = np.abs(va[near] - vb[near]) / np.maximum(np.abs(va[near]), 1e-300)
    assert (rel <= 1e-10).all(), (what, a[near][["metric", "method"]].to_string(), rel)
    assert (a.note.fillna("") == b.note.fillna("")).all() | (kind == "measured").any()


@pytest.mark.parametrize("name", sorted(FEATURE_MAPS.builtins()))
@pytest.mark.slow
def test_every_map_gives_the_same_records_at_1_and_2_threads(name):
    kernel = KERNEL.get(name, (FEATURE_MAPS[name].KERNELS or ("gaussian",))[0])
    # kernels of non-negative data: digits' pixel counts
    extra = ["dataset=digits", "dataset.n_max=500", "dataset.scale=none",
             "measure.variance.pairs=data"] if "chi2" in kernel or kernel == "intersection" \
        else DATA
    extra += ["kernel.lengthscale=1"] if name == "sklearn_skewed_chi2" else []
    # ssr: a multiple of 2 (d + 1); the linear kernel's sketches: fewer outputs than d = 4
    # (at D >= d they are exact and their errors pure rounding, different at each thread count)
    D = "D=60" if name == "ssr" else "D=3" if kernel == "linear" else "D=64"
    runs = {}
    for t in (1, 2):
        cfg = compose_config([f"features={name}", f"kernel={kernel}", D, f"threads={t}",
                              *SMALL, *extra])
        runs[t] = run(cfg)
    (a, ta), (b, tb) = runs[1], runs[2]
    compare(a, b, name)
    assert sorted(ta) == sorted(tb)
    for f in ta:  # the per-trial, per-redraw, per-pair tables
        x, y = ta[f].drop(columns=["run_id"]), tb[f].drop(columns=["run_id"])
        num = x.select_dtypes("number").columns
        np.testing.assert_array_equal(x[num].to_numpy(float), y[num].to_numpy(float),
                                      err_msg=f"{name}: {f}")


@pytest.mark.parametrize("launcher", ["joblib", "submitit_local"])
@pytest.mark.slow
def test_launchers_give_the_same_records(tmp_path, launcher):
    """A two-job sweep through run.py with the basic launcher and with ``launcher``, one
    thread per job in both: every value but the measured times is the same bits."""
    common = ["-m", "dataset=synthetic", "dataset.n=300", "dataset.d=3", "D=16,32",
              "threads=1", "measure.bounds.trials=6", "measure.learning.repeats=1"]
    extra = {"joblib": ["hydra.launcher.n_jobs=2"],
             "submitit_local": ["hydra.launcher.cpus_per_task=1"]}[launcher]
    frames = {}
    for which, args in (("basic", []), (launcher, [f"hydra/launcher={launcher}", *extra])):
        sweep = tmp_path / which
        p = run_cli(*common, *args, f"hydra.sweep.dir={sweep}")
        assert p.returncode == 0, p.stderr[-2000:]
        frames[which] = {f.parent.name: pd.read_csv(f)
                         for f in sweep.glob("runs/*/records.csv")}
    assert sorted(frames["basic"]) == sorted(frames[launcher]) and len(frames["basic"]) == 2
    res = pd.read_csv(tmp_path / "basic" / "report" / "results.csv", keep_default_na=False)
    by = res.groupby(["measurement", "metric"]).varies.first()
    assert by["timing", "map_transform_time_s"] == "measured"
    assert by["learning", "train_time_s"] == "measured"
    assert by["approximation", "rel_fro_error"] == "threads"
    assert by["learning", "test_rmse"] == "threads"
    assert by["bounds", "eps_empirical"] == "" and by["bounds", "eps_bound"] == ""
    for rid in frames["basic"]:
        compare(frames["basic"][rid], frames[launcher][rid], f"{launcher} {rid}")
