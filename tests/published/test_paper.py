"""rffbench/published/paper.py: a paper's CSV and its source, its protocol: a run off it is
not compared, and says why, once."""

import numpy as np
import pytest

from rffbench.published import PAPERS
from tests.published.common import (
    B24,
    B24M,
    BUECHEL2024,
    BUECHEL2024_ACCURACY,
    LIU2021_ACCURACY,
    PAPER,
    QUAD,
    W22,
    WACKER2022,
    flat,
    ij_ident,
)


# ---- the published CSVs ----------------------------------------------------------------
def test_published_csvs_load_with_their_source():
    for paper in PAPERS.values():
        pts = paper.points
        src = paper.source
        assert {"paper", "source", "extracted", "quantity"} <= set(src), src
        assert pts.notna().all().all() and (pts["mean"] > 0).all() and (pts.sd >= 0).all()
        assert (pts.distinct <= pts.runs).all()
    pts = PAPER.points
    letter = pts[pts.dataset == "letter"]
    # 3 kernels x 6 methods x n = 1..5, 500 runs each, n_freq = 2 n (d + 1)
    assert len(letter) == 90 and set(letter.runs) == {500} and set(letter.d) == {16}
    assert (letter.n_freq == 2 * letter.n * 17).all()
    assert set(letter.method) == {"G", "Gort", "ROM", "QMC", "GQ", "B"}
    assert "github.com/maremun/quffka" in PAPER.source["source"]


@pytest.mark.parametrize("overrides,ident,reason", [
    (["dataset.scale=standardize"], {}, "dataset.scale=standardize (the paper: "
                                        "dataset.scale=xmax"),
    (["dataset.scale=max"], {}, "dataset.scale=max (the paper: dataset.scale=xmax"),
    (["measure.approximation.cross=halves"], {}, "measure.approximation.cross=halves"),
    (["+features.params.radius=rule"], {}, "none of the paper's methods"),
    ([], {"lengthscale": 1.0}, "lengthscale=1 (the paper: gamma = 1/d"),
    ([], {"n_train": 15000}, "n_train=15000"),
    ([], {"n_freq": 50}, "n_freq=50 is not one of"),
])
def test_a_run_off_the_protocol_is_not_compared_and_says_why(overrides, ident, reason):
    cfg = flat([*QUAD, "+quffka_method=gaussian_B", *overrides])
    base = dict(dataset="letter", d=16, kernel="gaussian", lengthscale=np.sqrt(8.0),
                n_train=10000, features="ssr", n_freq=68)
    points, reasons = PAPER.match(cfg, {**base, **ident})
    assert points == [] and any(reason in r for r in reasons), reasons
    assert PAPER.match(cfg, {**base, "dataset": "digits"}) == ([], [])  # not its data


@pytest.mark.parametrize("overrides,ident,reason", [
    (["dataset.scale=max"], {}, "dataset.scale=max (the paper: dataset.scale=standardize"),
    (["measure.approximation.n_points=500"], {}, "measure.approximation.n_points=500"),
    (["measure.approximation.cross=halves"], {}, "measure.approximation.cross=halves"),
    ([], {"lengthscale": 1.0}, "lengthscale=1 (the paper: gamma = 0.05"),
    ([], {"n_freq": 64}, "n_freq=64 is not one of the paper's frequency vectors n_freq = "
                         "int(2^s d) - s: 31, 62, 125, 252, 507"),
])
def test_a_run_off_their_protocol_is_not_compared_and_says_why(overrides, ident, reason):
    cfg = flat([*B24, "+buechel_method=gaussian_rff", *overrides])
    base = dict(dataset="letter", d=16, kernel="gaussian", lengthscale=np.sqrt(10.0),
                n_train=15000, features="rff_pairs", n_freq=31)
    points, reasons = BUECHEL2024.match(cfg, {**base, **ident})
    assert points == [] and any(reason in r for r in reasons), reasons


@pytest.mark.parametrize("overrides,ident,reason", [
    (["kernel.lengthscale=5.0", "kernel.median_subsample=1000"], {},
     "kernel.lengthscale=5.0 (the paper: kernel.lengthscale=median"),
    (["kernel.median_subsample=1000"], {}, "kernel.median_subsample=1000"),
    (["dataset.scale=max"], {}, "dataset.scale=max (the paper: dataset.scale=standardize"),
    (["dataset.test_size=0.2"], {}, "dataset.test_size=0.2 (the paper: their test fraction"),
    (["dataset.split=ordered"], {}, "dataset.split=ordered (the paper: a random split"),
    (["measure.approximation.n_points=1000"], {}, "measure.approximation.n_points=1000"),
    ([], {"n_freq": 12}, "n_freq=12 is not one of the paper's n_freq (their D"),
    ([], {"features": "orf"}, "features=orf with these parameters is none of"),
])
def test_a_run_off_the_wacker_protocol_is_not_compared_and_says_why(overrides, ident, reason):
    cfg = flat([*W22, "+wacker_method=rff", *overrides])
    if "features" in ident:
        cfg = dict(cfg, **{"features.name": ident["features"]})
    base = dict(dataset="letter", d=16, kernel="gaussian", lengthscale=5.37, n_train=18000,
                features="rff_pairs", n_freq=16)
    points, reasons = WACKER2022.match(cfg, {**base, **ident})
    assert points == [] and any(reason in r for r in reasons), reasons


@pytest.mark.parametrize("overrides,reason", [
    (["model.lam=1.0"], "model.lam=1.0 (the paper: alpha = 0.5"),
    (["dataset.test_size=0.25"], "dataset.test_size=0.25 (the paper: MAGIC: half the rows test"),
    (["model.center=false"], "model.center=False (the paper: model.center=True"),
    (["dataset.scale=max"], "dataset.scale=max (the paper: dataset.scale=standardize"),
])
def test_a_run_off_their_learning_protocol_is_not_compared_and_says_why(overrides, reason):
    cfg = flat([*B24M, "+buechel_method=gaussian_rff", "D=19", *overrides])
    ident = dict(dataset="magic", d=10, kernel="gaussian", lengthscale=np.sqrt(10.0),
                 n_train=9510, features="rff_pairs", n_freq=19)
    points, reasons = BUECHEL2024_ACCURACY.match(cfg, ident)
    assert points == [] and any(reason in r for r in reasons), reasons


def test_reasons_that_differ_only_in_their_value_are_told_once():
    """A sweep of other data lists why its runs are not compared: one reason per key with
    its values (sorted as numbers), not one per value."""
    from collections import Counter

    from rffbench.report.reproductions import _reasons_text

    c = Counter({"lengthscale=5.39 (the paper: sqrt(10))": 3,
                 "lengthscale=5.371 (the paper: sqrt(10))": 2,
                 "lengthscale=10 (the paper: sqrt(10))": 1,
                 "dataset.scale=max (the paper: xmax)": 6, "no record": 1})
    text = _reasons_text(c, 6)
    assert "lengthscale=5.371, 5.39, 10 (the paper: sqrt(10)) (6 runs)" in text
    assert text.index("no record") > text.index("dataset.scale=max")  # most runs first
    assert "no record (1 runs)" in text and text.count("lengthscale=") == 1


@pytest.mark.parametrize("overrides,reason", [
    (["dataset.encoding=libsvm"], "dataset.encoding=libsvm (the paper: ijcnn1: 13 columns"),
    (["dataset.file_scale=none"], "dataset.file_scale=none (the paper: ijcnn1: each file"),
    (["dataset.split=random"], "dataset.split=random (the paper: dataset.split=ordered "
                               "(LIBSVM's split)"),
    (["dataset.test_size=0.5"], "dataset.test_size=0.5 (the paper: ijcnn1.val + ijcnn1.t"),
    (["model.lam=1.0"], "model.lam=1.0 (the paper: alpha = 0.5"),
])
def test_a_run_off_the_liu_protocol_is_not_compared_and_says_why(overrides, reason):
    cfg = flat(["experiment=liu2021", "+buechel_method=gaussian_rff", "D=26", *overrides])
    points, reasons = LIU2021_ACCURACY.match(cfg, ij_ident("rff_pairs", 26))
    assert points == [] and any(reason in r for r in reasons), reasons


def test_the_per_dataset_protocol_leaves_other_datasets_alone():
    """BUECHEL2024_ACCURACY asks MAGIC for a random half split and ijcnn1 for LIBSVM's; a
    MAGIC run is not asked for ijcnn1's encoding (its config has no such value)."""
    cfg = flat([*B24M, "+buechel_method=gaussian_rff", "D=19"])
    ident = dict(dataset="magic", d=10, kernel="gaussian", lengthscale=np.sqrt(10.0),
                 n_train=9510, features="rff_pairs", n_freq=19)
    assert BUECHEL2024_ACCURACY.match(cfg, ident)[1] == []
    ij = flat(["experiment=buechel2024_ijcnn1", "+buechel_method=gaussian_rff", "D=25",
                "dataset.test_size=0.5"])
    pts, why = BUECHEL2024_ACCURACY.match(ij, ij_ident("rff_pairs", 25))
    assert pts == [] and any("dataset.test_size=0.5" in r for r in why), why
