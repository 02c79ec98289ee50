"""rffbench/report/approximation.py's error_vs_time figure (error_vs_D and the approximation
table: tests/test_report.py): each map a line of its error against its fit + transform time
through its D, each point the seeds' summary on both axes, drawn from known records."""

import numpy as np

from rffbench.report import approximation as rapprox
from rffbench.report import figures
from rffbench.report.grouping import summarising, summary
from rffbench.results import record
from tests.test_report import _frame, write_run

MAPS = {"rff": 1.0, "orf": 0.6}  # error scale: orf's error is lower at the same D


def _value(feat, D, seed):
    return MAPS[feat] / np.sqrt(D) * (1.0 + 0.03 * seed)


def _time(feat, D, seed):
    return 1e-4 * D * (1.5 if feat == "orf" else 1.0) * (1.0 + 0.05 * seed)


def _run(root, feat, D, seed, timing=True):
    rid = f"{feat}{D}s{seed}"
    conf = dict(kernel=dict(name="gaussian", lengthscale="median"), features=dict(name=feat),
                dataset=dict(name="synthetic", d=3, n=100), D=D, seed=seed, experiment="t")
    rows = [record("approximation", "rel_fro_error", _value(feat, D, seed))]
    if timing:
        rows += [record("timing", "map_fit_time_s", 0.25 * _time(feat, D, seed), "s"),
                 record("timing", "map_transform_time_s", 0.75 * _time(feat, D, seed), "s")]
    write_run(root, rid, conf, rows, d=3, kernel="gaussian", features=feat, D=D, seed=seed)


def _sweep(root, seeds, timing=True):
    for feat in MAPS:
        for D in (16, 64, 256):
            for seed in seeds:
                _run(root, feat, D, seed, timing)
    return _frame(root)


def test_error_vs_time_draws_each_maps_seeds_summary_on_both_axes(tmp_path):
    """Three seeds, report.center=mean: per map a line whose points are (mean time, mean
    error) per D, each with the interval of the report's summary on both axes as bars, and
    a caption that says so."""
    ctx = _sweep(tmp_path / "s", (0, 1, 2))
    with summarising("mean"):
        (drawn,), why = rapprox.fig_error_vs_time(ctx)
        (ax,) = [a for a in drawn.fig.axes if a.get_visible()]
        lines = {ln.get_gid(): ln for ln in ax.get_lines()
                 if (ln.get_gid() or "").startswith("observed:")}
        assert set(lines) == {"observed:error_vs_time:rff", "observed:error_vs_time:orf"}
        for feat in MAPS:
            ln = lines[f"observed:error_vs_time:{feat}"]
            want_t = [summary([_time(feat, D, s) for s in (0, 1, 2)]) for D in (16, 64, 256)]
            want_e = [summary([_value(feat, D, s) for s in (0, 1, 2)]) for D in (16, 64, 256)]
            np.testing.assert_allclose(ln.get_xdata(), [w[0] for w in want_t], rtol=1e-12)
            np.testing.assert_allclose(ln.get_ydata(), [w[0] for w in want_e], rtol=1e-12)
        bars = [c for c in ax.collections if c.get_gid() == figures.BAND_GID]
        assert len(bars) == 2 * len(MAPS)  # an x bar and a y bar per map
        # the bars are the intervals: every segment's ends are one point's lo and hi
        ends = {tuple(np.round(seg[:, 0], 12)) for c in bars for seg in c.get_segments()}
        t_rff = summary([_time("rff", 64, s) for s in (0, 1, 2)])
        assert tuple(np.round(t_rff[1:], 12)) in ends
    assert "The bars on both axes are each point's band (below)." in drawn.caption
    assert "band: its 95% lognormal (Cox) interval" in drawn.caption
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def test_error_vs_time_of_one_seed_draws_no_bars_and_promises_none(tmp_path):
    ctx = _sweep(tmp_path / "s", (0,))
    (drawn,), _ = rapprox.fig_error_vs_time(ctx)
    (ax,) = [a for a in drawn.fig.axes if a.get_visible()]
    assert not [c for c in ax.collections if c.get_gid() == figures.BAND_GID]
    assert "bars" not in drawn.caption and "band" not in drawn.caption


def test_error_vs_time_says_why_without_timing_records(tmp_path):
    ctx = _sweep(tmp_path / "s", (0, 1), timing=False)
    drawn, why = rapprox.fig_error_vs_time(ctx)
    assert drawn == [] and why == ("approximation error vs time: needs rel_fro_error and the "
                                   "timing measurement's fit and transform times at >= 2 "
                                   "values of D")
