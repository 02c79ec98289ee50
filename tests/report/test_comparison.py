"""rffbench/report/comparison.py: the map-comparison table (which map to use) against its
definition on synthetic records whose error is a known power of D."""
import numpy as np
import pandas as pd
import pytest

from rffbench.report import comparison as cmp
from rffbench.report.grouping import summarising


def test_the_d_at_a_target_is_interpolated_in_log_log():
    D = np.array([16, 64, 256])
    err = 0.4 / np.sqrt(D)  # a power law: log-log interpolation is exact
    assert cmp._at_target(D, err, 0.05) == pytest.approx((0.4 / 0.05) ** 2)
    assert cmp._at_target(D[::-1], err[::-1], 0.05) == pytest.approx(64.0)  # any order
    assert cmp._at_target(D, err, 0.2) == "below"
    assert cmp._at_target(D, err, 0.001) is None
    assert cmp._interp_loglog(D, D * 1e-4, 100.0) == pytest.approx(1e-2)
    assert cmp._interp_loglog(D, D * 1e-4, 1000.0) is None


def _records(timing=True):
    """Maps a (error 0.4 / sqrt(D)) and b (twice a's), 3 seeds with a 1% spread, D = 16,
    64, 256; c only at D = 16, 64 (so D* = 64); fit + transform time 1e-5 D."""
    rows = []
    for m, c, Ds in (("a", 0.4, (16, 64, 256)), ("b", 0.8, (16, 64, 256)),
                     ("c", 0.8, (16, 64))):
        for seed in range(3):
            for D in Ds:
                rid = f"{m}{seed}{D}"
                base = dict(run_id=rid, seed=seed, D=D, features=m, kernel="gaussian")
                rows.append(dict(base, measurement="approximation", metric="rel_fro_error",
                                 value=c / np.sqrt(D) * (1 + 0.01 * (seed - 1))))
                if timing:
                    for metric in ("map_fit_time_s", "map_transform_time_s"):
                        rows.append(dict(base, measurement="timing", metric=metric,
                                         value=0.5e-5 * D))
    return pd.DataFrame(rows)


def test_the_table_ranks_the_maps_and_gives_the_d_and_time_to_each_target():
    df = _records()
    with summarising("mean", interval=("t", 0.95, 2000)):
        t = cmp.table_map_comparison(df, {})
    f = t.frame.set_index("features")
    assert list(t.frame.features) == ["a", "b", "c"] and set(f["D*"]) == {"64"}
    assert f.loc["a", "rank"] == "1" and f.loc["b", "rank"] == f.loc["c", "rank"] == "2"
    d_a = float(f.loc["a", "D for 0.05"].split()[0])
    assert d_a == pytest.approx(64.0, rel=0.03)  # 0.4 / sqrt(D) = 0.05 at D = 64
    assert float(f.loc["a", "time (s) for 0.05"].split()[0]) == pytest.approx(1e-5 * d_a,
                                                                            rel=1e-6)
    # 0.8 / sqrt(256) = 0.05 exactly: the seed 1% above does not reach it by D = 256
    assert f.loc["b", "D for 0.05"] == "> 256"
    assert f.loc["a", "D for 0.01"] == "> 256" and f.loc["a", "time (s) for 0.01"] == "n/a"
    assert f.loc["c", "D for 0.05"] == "> 64"
    assert t.values["error at D*"].iloc[0].size == 3
    assert "Welch's t, two-sided, 5% level" in t.caption


def test_without_timing_the_times_are_n_a_and_one_map_or_one_d_gives_no_table():
    t = cmp.table_map_comparison(_records(timing=False), {})
    assert (t.frame["time (s) for 0.05"] == "n/a").all()
    df = _records()
    assert cmp.table_map_comparison(df[df.features == "a"], {}) is None
    assert cmp.table_map_comparison(df[df.D == 16], {}) is None
