"""The report: one grouping rule (no pooling but over seeds), figures that draw the records'
values, the status of a sweep (complete, failed, missing, damaged) and index.html."""
import base64
import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rffbench import report
from rffbench.report import across as rmaps
from rffbench.report import approximation as rapprox
from rffbench.report import bounds as rbounds
from rffbench.report import figures, grouping
from rffbench.report import learning as rlearning
from rffbench.report.collect import collect
from rffbench.results import RECORDS_FILE, SCHEMA_VERSION, record, records_frame
from rffbench.store import write_config
from tests.helpers import CHROMIUM_FLAGS, HTMLPage, run_cli

TINY = ["dataset=synthetic", "dataset.n=120", "dataset.d=3", "measure.bounds.trials=4",
        "measure.learning.repeats=1", "measure.timing.repeats=3", "measure.learning.exact=false"]
ENV = dict(schema=SCHEMA_VERSION, rffbench="t", numba="t", numpy="t", scipy="t", sklearn="t",
           runtime_env="", cpu="test cpu", blas="test blas", date="2026-01-01T00:00:00",
           git_sha="")


# --------------------------------------------------------------------------
# a sweep made by hand: known values, so that medians can be checked exactly
# --------------------------------------------------------------------------
def truth(kernel, d, feat, D, seed):
    """The 'observed' value of a run: distinct per condition, seed adds 0, 1, 2 %."""
    base = {"gaussian": 1.0, "laplacian": 2.0}[kernel] * {2: 1.0, 5: 1.5, 9: 1.8}[d] \
        * {"rff": 1.0, "rff_pairs": 0.7}[feat] / np.sqrt(D)
    return base * (1.0 + 0.01 * seed)


def fake_run(root, kernel, d, feat, D, seed, bounds=False, uniform_from=0):
    conf = dict(kernel=dict(name=kernel, lengthscale="median"), features=dict(name=feat),
                dataset=dict(name="synthetic", d=d, n=100), D=D, seed=seed, experiment="t",
                measure=dict(timing=dict(repeats=3)))
    rid = f"{kernel[:3]}{d}{feat[-5:]}{D}s{seed}"
    v = truth(kernel, d, feat, D, seed)
    rows = [record("approximation", "rel_fro_error", v),
            record("approximation", "expected_rel_fro_error", v * 1.1, method="theory"),
            record("approximation", "max_abs_error", 3 * v)]
    if bounds:
        rows += [record("bounds", "diam", 2.0, method="domain", note="used by the bounds"),
                 record("bounds", "sigma_p2", float(d)),
                 record("bounds", "eps_empirical", 2 * v, method="empirical", delta=0.05),
                 record("bounds", "eps_bound", 3 * v, method="hoeffding", delta=0.05),
                 record("bounds", "tightness", 1.5, method="hoeffding", delta=0.05)]
        if D >= uniform_from:
            rows += [record("bounds", "eps_bound", 20 * v, method="sutherland_schneider",
                            delta=0.05),
                     record("bounds", "tightness", 10.0, method="sutherland_schneider",
                            delta=0.05)]
    return write_run(root, rid, conf, rows, d=d, kernel=kernel, lengthscale=1.0 + seed,
                     features=feat, D=D, seed=seed)


def write_run(root, rid, conf, rows, **identity):
    """A complete run directory ``root/runs/rid`` made by hand: its config and its records
    (``rows``) under a synthetic run's identity, ``identity`` overriding it (d, kernel,
    features, D, seed, ...); returns the run id."""
    D = identity["D"]
    identity = dict(dict(run_id=rid, experiment="t", dataset="synthetic", task="regression",
                         n_train=75, n_test=25, nu=None, lengthscale=1.0, n_freq=D,
                         n_columns=D, dtype="float64", threads=2), **identity)
    out = Path(root) / "runs" / rid
    out.mkdir(parents=True)
    write_config(out, rid, conf, [])
    records_frame(identity, rows, ENV).to_csv(out / RECORDS_FILE, index=False)
    return rid


GRID = list(itertools.product(["gaussian", "laplacian"], [2, 5], ["rff", "rff_pairs"],
                              [16, 64], [0, 1, 2]))


@pytest.fixture
def grid_sweep(tmp_path):
    for combo in GRID:
        fake_run(tmp_path / "s", *combo, bounds=True)
    return tmp_path / "s"


@pytest.fixture(scope="module")
def grid_report(tmp_path_factory):
    """The grid sweep's report, made once for the tests that read it, from inside the
    sweep's folder (``rffbench-report .``): (sweep, report)."""
    sweep = tmp_path_factory.mktemp("grid") / "s"
    for combo in GRID:
        fake_run(sweep, *combo, bounds=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sweep)
        return sweep, report.make_report(".", pdf=False, dpi=40)


def test_grid_tables_have_one_row_per_combination_and_mean_over_seeds(grid_report):
    """The default report.center=mean: each cell the mean over the seeds, then its
    interval in brackets."""
    rep = grid_report[1]
    assert rep.complete
    t = next(t for t in rep.tables if t.name == "approximation")
    frame = t.frame[t.frame.metric == "rel_fro_error"]
    # no pooling: one row per kernel x d x map, one column per D
    assert len(frame) == 8 and {"D=16", "D=64"} <= set(frame.columns)
    assert set(zip(frame.kernel, frame.d, frame.features)) == {
        (k, str(d), f) for k in ("gaussian", "laplacian") for d in (2, 5)
        for f in ("rff", "rff_pairs")}
    for row in frame.to_dict("records"):
        for D in (16, 64):
            want = np.mean([truth(row["kernel"], int(row["d"]), row["features"], D, s)
                            for s in (0, 1, 2)])
            center, bracket = row[f"D={D}"].split(" ", 1)
            assert float(center) == pytest.approx(want, rel=1e-3)  # 4 digits shown
            lo, hi = map(float, bracket.strip("[]").split(", "))
            assert lo < float(center) < hi
    assert "mean over the seeds: 3 runs per cell (seeds 0, 1, 2)" in t.caption
    assert "Rows: kernel x features x d x metric; columns: D." in t.caption


def test_grid_figures_have_the_expected_panels_and_lines(grid_report):
    grid_sweep, rep = grid_report
    names = {d.name for d in rep.figures}
    assert "error_vs_D" in names
    col = collect(grid_sweep)
    df = pd.concat([r.records for r in col.complete_runs], ignore_index=True)
    df, origins = grouping.attach_conditions(df, col.complete_runs)
    ctx = figures.FigContext(df, origins, {r.run_id: r.path for r in col.complete_runs})
    drawn, _ = rapprox.fig_error_vs_D(ctx)
    assert len(drawn) == 1
    axes = [ax for ax in drawn[0].fig.axes if ax.get_visible()]
    titles = sorted(ax.get_title() for ax in axes)
    assert titles == sorted(f"kernel={k}, d={d}" for k in ("gaussian", "laplacian")
                            for d in (2, 5))
    for ax in axes:
        kernel, d = ax.get_title().replace("kernel=", "").replace(" d=", "").split(",")
        observed = {ln.get_gid(): ln for ln in ax.get_lines()
                    if (ln.get_gid() or "").startswith("observed:")}
        assert set(observed) == {"observed:rel_fro_error:rff", "observed:rel_fro_error:rff_pairs"}
        for gid, ln in observed.items():
            feat = gid.rsplit(":", 1)[1]
            want = [np.median([truth(kernel, int(d), feat, D, s) for s in (0, 1, 2)])
                    for D in (16, 64)]
            np.testing.assert_allclose(ln.get_ydata(), want, rtol=1e-12)
        assert "Each point: median over the seeds: 3 runs per point" in drawn[0].caption
    # bounds: a panel per kernel x d x map, uniform tightness only in the lower axes
    drawn, _ = rbounds.fig_bounds(ctx)
    assert sum(len([ax for ax in d.fig.axes if ax.get_visible()]) for d in drawn) == 2 * 8
    for d in drawn:
        for ax in d.fig.axes:
            gids = {ln.get_gid() for ln in ax.get_lines()}
            assert "tightness:hoeffding" not in gids  # pointwise: never in the violated zone


def test_dimension_figure_plots_the_records_of_the_metrics_it_names(tmp_path):
    root = tmp_path / "s"
    for d, seed in itertools.product([2, 5, 9], [0, 1, 2]):
        fake_run(root, "gaussian", d, "rff_pairs", 64, seed, bounds=True)
    col = collect(root)
    df = pd.concat([r.records for r in col.complete_runs], ignore_index=True)
    df, origins = grouping.attach_conditions(df, col.complete_runs)
    drawn, why = rbounds.fig_dimension(figures.FigContext(df, origins, {}))
    assert drawn, why
    # two values of d would be two-point lines: not drawn, and the reason says where they are
    two = df[df.d != 9]
    none, why = rbounds.fig_dimension(figures.FigContext(two, origins, {}))
    assert not none and ">= 3 values of d" in why and "bounds_vs_D" in why
    lines = {ln.get_gid(): ln for ax in drawn[0].fig.axes for ln in ax.get_lines()}
    for gid, metric, method in (("observed:rel_fro_error", "rel_fro_error", ""),
                                ("observed:eps_empirical", "eps_empirical", "empirical"),
                                ("expected:rel_fro_error", "expected_rel_fro_error", "theory"),
                                ("bound:sutherland_schneider", "eps_bound",
                                 "sutherland_schneider")):
        sel = df[(df.metric == metric) & (df.method.fillna("") == method)]
        want = sel.groupby("d").value.median().sort_index()
        np.testing.assert_allclose(lines[gid].get_xdata(), want.index)
        np.testing.assert_allclose(lines[gid].get_ydata(), want.values, rtol=1e-12)
    assert "pointwise:hoeffding" in lines  # drawn, as a reference line


def _frame(root):
    col = collect(root)
    df = pd.concat([r.records for r in col.complete_runs], ignore_index=True)
    df, origins = grouping.attach_conditions(df, col.complete_runs)
    configs = {r.run_id: grouping.with_added_defaults(r.config) for r in col.complete_runs
               if r.config is not None} or None
    return figures.FigContext(df, origins, {r.run_id: r.path for r in col.complete_runs},
                              configs=configs)


def _labelled_ticks(ax, which):
    axis = ax.yaxis if which == "y" else ax.xaxis
    lo, hi = sorted(ax.get_ylim() if which == "y" else ax.get_xlim())
    return [v for v in axis.get_majorticklocs() if lo <= v <= hi]


def test_a_figure_for_a_paper_lines_up_its_panels_and_promises_only_what_it_draws(tmp_path):
    """bounds_vs_D of one seed, a uniform bound from D=64 on: top and bottom axes of a
    column share the D range and ticks (they were 16-256 against 64-256), the panels of a
    row share their y range with one y label, log axes label at most MAX_LOG_TICKS values,
    the legend and caption say nothing of a band or of a median over one seed, and what
    was left out is apart from the caption."""
    root = tmp_path / "s"
    for kernel, d, D in itertools.product(["gaussian", "laplacian"], [2], [16, 64, 256]):
        fake_run(root, kernel, d, "rff", D, 0, bounds=True, uniform_from=64)
    (drawn,), why = rbounds.fig_bounds(_frame(root))
    axes = [ax for ax in drawn.fig.axes if ax.get_visible()]
    assert len(axes) == 4
    assert len({tuple(np.round(ax.get_xlim(), 9)) for ax in axes}) == 1
    assert all(list(ax.xaxis.get_majorticklocs()) == [16, 64, 256] for ax in axes)
    bottom = [ax for ax in axes if ax.get_xlabel()]
    assert {tuple(ln.get_xdata()) for ax in bottom for ln in ax.get_lines()
            if (ln.get_gid() or "").startswith("tightness:")} == {(64, 256)}
    by_row = {}
    for ax in axes:
        by_row.setdefault(ax.get_subplotspec().rowspan.start, []).append(ax)
    for row in by_row.values():
        assert len({ax.get_ylim() for ax in row}) == 1
        labels = [ax.get_ylabel() for ax in sorted(row, key=lambda a: a.get_subplotspec()
                                                   .colspan.start)]
        assert labels[0] and not any(labels[1:])
    for ax in axes:
        assert 2 <= len(_labelled_ticks(ax, "y")) <= figures.MAX_LOG_TICKS
    legend = [t.get_text() for t in drawn.fig.legends[0].get_texts()]
    assert legend and not any("band" in t or "median" in t for t in legend)
    assert "band" not in drawn.caption and "one run per point (seed 0)" in drawn.caption
    assert "Panels:" in drawn.details and "Panels:" not in drawn.caption
    # three seeds: the band is drawn and the legend says what it is
    for seed in (1, 2):
        for kernel, D in itertools.product(["gaussian", "laplacian"], [16, 64, 256]):
            fake_run(root, kernel, 2, "rff", D, seed, bounds=True, uniform_from=64)
    (drawn,), _ = rbounds.fig_bounds(_frame(root))
    legend = [t.get_text() for t in drawn.fig.legends[0].get_texts()]
    assert any(grouping.center_words(True) in t for t in legend)


def test_linear_panels_of_a_row_share_a_range_that_does_not_magnify_noise():
    """Two panels of one quantity: 0.1966-0.1976 (noise in the fourth decimal) and
    0.30-0.31 share one y range of at least MIN_REL_SPAN of its top."""
    p = figures.plt()
    fig, axes = p.subplots(1, 2)
    for ax, (a, b) in zip(axes, [(0.1966, 0.1976), (0.30, 0.31)]):
        ax.plot([1, 2], [a, b])
        ax.set_ylabel("test error rate")
    figures.share_ranges(fig)
    (lo0, hi0), (lo1, hi1) = (ax.get_ylim() for ax in axes)
    assert (lo0, hi0) == (lo1, hi1) and lo0 <= 0.1966 and hi0 >= 0.31
    one, ax = p.subplots(1, 1)
    ax.plot([1, 2], [0.1966, 0.1976])
    ax.set_ylabel("test error rate")
    figures.share_ranges(one)
    lo, hi = ax.get_ylim()
    assert hi - lo >= figures.MIN_REL_SPAN * 0.1976 and lo <= 0.1966 and hi >= 0.1976


@pytest.mark.parametrize("lo,hi", [(0.08, 0.11), (0.05, 0.6), (0.011, 1.3), (2e-4, 3.0),
                                   (1e-9, 1e6), (0.196, 0.198)])
def test_a_log_axis_labels_few_readable_values(lo, hi):
    ax = figures.plt().subplots(1, 1)[1]
    ax.plot([1, 2], [lo, hi])
    ax.set_ylim(lo, hi)
    figures.log_axis(ax, "y")
    ticks = _labelled_ticks(ax, "y")
    assert 2 <= len(ticks) <= figures.MAX_LOG_TICKS, ticks
    labels = [ax.yaxis.get_major_formatter()(v, 0) for v in ticks]
    assert len(set(labels)) == len(labels) and all(len(t) <= 6 for t in labels), labels


def test_the_page_names_the_sweep_when_reported_from_inside_it(grid_report):
    grid_sweep = grid_report[0]  # reported as "."
    md = (grid_sweep / "report" / "summary.md").read_text()
    page = (grid_sweep / "report" / "index.html").read_text()
    assert md.splitlines()[0] == f"# rffbench report: {grid_sweep.name}"
    assert f"<h1>rffbench report: {grid_sweep.name}</h1>" in page
    assert "sweep ." not in md and "report: ." not in page


def test_a_dependent_condition_is_shown_with_its_anchor_not_split(tmp_path):
    rows = pd.DataFrame(dict(run_id=list("abcd"), seed=0, value=1.0, D=[16, 64, 16, 64],
                             features=["rff", "rff", "qmc", "qmc"],
                             **{"features.pairs": [None, None, True, True]}))
    g = grouping.Grouping(rows, {"features": ["features.name"],
                                 "features.pairs": ["features.pairs"]}, ["approximation"],
                          x="D", lines=["features"])
    assert g.keys == [] and g.dependents == {"features.pairs": "features"}
    assert g.name("features", "qmc") == "qmc (pairs=True)" and g.name("features", "rff") == "rff"


def test_too_many_panels_are_split_over_files_and_said_so(grid_sweep):
    col = collect(grid_sweep)
    df = pd.concat([r.records for r in col.complete_runs], ignore_index=True)
    df, origins = grouping.attach_conditions(df, col.complete_runs)
    obs = df[df.metric == "rel_fro_error"]
    g = grouping.Grouping(obs, origins, ["approximation"], x="D")
    files = g.files(2)  # kernel x d x features = 8 panels, at most 2 per file
    assert len(files) == 4 and all(len(p) == 2 for _, _, p in files)
    assert len(set(s for s, _, _ in files)) == 4 and g.split_keys


# --------------------------------------------------------------------------
# status of real sweeps
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_sweep(tmp_path_factory):
    sweep = tmp_path_factory.mktemp("real") / "s"
    p = run_cli("-m", *TINY, "D=16,32", f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-2000:]
    return sweep


def _copy(sweep, tmp_path):
    dst = tmp_path / "copy"
    shutil.copytree(sweep, dst, symlinks=True)
    shutil.rmtree(dst / "report", ignore_errors=True)
    return dst


def _run_dirs(sweep):
    return sorted((sweep / "runs").iterdir())


@pytest.mark.slow
def test_complete_sweep_exits_0_and_html_embeds_every_figure_and_table(real_sweep, tmp_path,
                                                                        capsys):
    s = _copy(real_sweep, tmp_path)
    assert report.main([str(s), "--no-pdf"]) == 0
    assert "(complete: 2 complete)" in capsys.readouterr().out
    rep = report.make_report(s, pdf=False, dpi=40)
    page = HTMLPage.parse(rep.index)
    assert {f"fig-{d.name}" for d in rep.figures} <= page.ids and rep.figures
    assert {f"table-{t.name}" for t in rep.tables} <= page.ids and rep.tables
    assert len(page.images) == len(rep.figures)
    for src in page.images:  # embedded PNGs, no external asset
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert not page.external, page.external
    text = rep.index.read_text()
    for want in ("What was run", "2 jobs expected: 2 complete", "Environment", "numba",
                 "D=16,32"):
        assert want in text


@pytest.mark.slow
def test_failed_job_is_listed_with_its_line_and_exit_1(tmp_path, capsys):
    sweep = tmp_path / "s"
    p = run_cli("-m", *TINY, "features=rff_pairs", "D=16,15", "measure.bounds.enabled=false",
                f"hydra.sweep.dir={sweep}")
    assert p.returncode == 1
    assert "rffbench: failed: job 1 of sweep . (" in p.stderr and "must be even" in p.stderr
    assert "Traceback" not in p.stderr
    assert report.main([str(sweep), "--no-pdf"]) == 1
    jobs = pd.read_csv(sweep / "report" / "jobs.csv")
    assert jobs[jobs.kind == "job"].set_index("job").status.to_dict() == {0: "complete",
                                                                         1: "failed"}
    html = (sweep / "report" / "index.html").read_text()
    assert "INCOMPLETE" in html and "must be even" in html


def test_missing_jobs_are_listed_and_exit_1(real_sweep, tmp_path, capsys):
    s = _copy(real_sweep, tmp_path)
    # the sweep asked for D=16,32,64 but was stopped before the third job started
    mr = (s / "multirun.yaml").read_text()
    (s / "multirun.yaml").write_text(mr.replace("D=16,32", "D=16,32,64"))
    assert report.main([str(s), "--no-pdf"]) == 1
    err = capsys.readouterr().err
    assert "missing: job 2 of sweep . (" in err and "D=64" in err and "never started" in err
    summary = (s / "report" / "summary.md").read_text()
    assert "3 jobs expected: 2 complete, 1 missing" in summary


@pytest.mark.parametrize("damage,status,reason", [
    (lambda f: f.write_bytes(f.read_bytes()[:-40]), "damaged", "cut mid-line"),
    (lambda f: f.write_text(f.read_text().replace(f",{SCHEMA_VERSION},", ",7,")), "damaged",
     "schema value 7"),
    (lambda f: f.write_text(f.read_text().replace(",approximation,max_abs_error,,",
                                                  ",approximation,max_abs_error,,abc")),
     "damaged", "not a number"),
    (lambda f: f.write_text(f.read_text().replace(f",{SCHEMA_VERSION},", ",2,")), "outdated",
     "schema value 2"),
])
def test_a_damaged_records_file_is_reported_with_its_path(real_sweep, tmp_path, capsys, damage,
                                                          status, reason):
    s = _copy(real_sweep, tmp_path)
    victim = _run_dirs(s)[0] / RECORDS_FILE
    damage(victim)
    assert report.main([str(s), "--no-pdf"]) == 1
    err = capsys.readouterr().err
    assert f"{status}: job" in err and str(victim) in err and reason in err
    assert "Traceback" not in err
    res = pd.read_csv(s / "report" / "results.csv")
    assert res.run_id.nunique() == 1  # the damaged run is not half-read into the results


def test_report_errors(tmp_path, capsys):
    assert report.main([str(tmp_path)]) == 2
    assert "no runs found" in capsys.readouterr().err
    assert report.main([str(tmp_path / "missing")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_crossover_interpolation():
    from rffbench.report.learning import crossover

    n = [1000.0, 2000.0, 4000.0]
    assert crossover(n, [1.0, 1.0, 1.0], [0.5, 2.0, 8.0]) == pytest.approx(
        1000 * 2 ** 0.5, rel=1e-12)
    assert crossover(n, [1.0, 1.0, 1.0], [0.1, 0.2, 0.3]) is None


@pytest.mark.skipif(not shutil.which("chromium"), reason="Debian's chromium is not installed")
@pytest.mark.slow
def test_index_html_renders_in_headless_chromium(real_sweep, tmp_path):
    import subprocess

    s = _copy(real_sweep, tmp_path)
    rep = report.make_report(s, pdf=False, dpi=40)
    p = subprocess.run(["chromium", *CHROMIUM_FLAGS,
                        f"--user-data-dir={tmp_path / 'chr'}", "--dump-dom",
                        rep.index.as_uri()], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0
    dom = HTMLPage.parse_text(p.stdout)
    assert len(dom.images) == len(rep.figures) and dom.ids >= {f"fig-{d.name}"
                                                             for d in rep.figures}
    # every data table got its filter box and sortable headers (tests/report/test_render.py
    # clicks them)
    n_tables = len(rep.tables) + sum(len(sec.tables) for sec in rep.reproductions)
    assert n_tables and p.stdout.count('class="filter"') == n_tables
    assert p.stdout.count('role="button"') == sum(t.frame.shape[1] for t in rep.tables) + sum(
        t.frame.shape[1] for sec in rep.reproductions for t in sec.tables)


def test_json_config_of_every_run(real_sweep):
    for d in _run_dirs(real_sweep):
        blob = json.loads((d / "config.json").read_text())
        assert blob["run_id"] == d.name and blob["config"]["D"] in (16, 32)


def test_a_condition_that_follows_the_x_axis_is_a_panel_not_joined_along_x():
    """D = 2 n (d + 1) makes the dataset a function of D: the datasets must still be
    panels (one line across them would join different data)."""
    rows = pd.DataFrame(dict(run_id=list("abcdef"), seed=0, value=1.0,
                             D=[34, 68, 74, 148, 362, 724], features="ssr",
                             dataset=["letter", "letter", "satellite", "satellite", "dna", "dna"]))
    g = grouping.Grouping(rows, {"dataset": ["dataset.name"], "D": ["D_n"]}, ["approximation"],
                          x="D", lines=["features"])
    assert g.keys == ["dataset"] and "dataset" not in g.dependents


def _write_run(root, rid, conf, identity, rows):
    out = root / "runs" / rid
    out.mkdir(parents=True)
    write_config(out, rid, conf, [])
    records_frame(identity, rows, ENV).to_csv(out / RECORDS_FILE, index=False)


def _fig_context(root):
    """The figures' input for the complete runs of a sweep directory."""
    col = collect(root)
    df = pd.concat([r.records for r in col.complete_runs], ignore_index=True)
    df, origins = grouping.attach_conditions(df, col.complete_runs)
    configs = {r.run_id: grouping.with_added_defaults(r.config) for r in col.complete_runs
               if r.config is not None} or None
    return figures.FigContext(df, origins, {r.run_id: r.path for r in col.complete_runs},
                              configs=configs)


def test_exact_krr_is_drawn_per_kernel_when_the_kernel_follows_the_map(tmp_path):
    """Learning vs D with maps of different kernels in one panel: one exact line per kernel,
    each at the median of its own runs."""
    root = tmp_path / "s"
    rows_by_kernel = {}
    for (kernel, feat), D, seed in itertools.product(
            [("arccos1", "arccos"), ("gaussian", "positive")], [16, 32], [0, 1]):
        conf = dict(kernel=dict(name=kernel), features=dict(name=feat),
                    dataset=dict(name="synthetic"), D=D, seed=seed)
        rid = f"{feat}{D}s{seed}"
        exact = {"arccos1": 0.3, "gaussian": 0.2}[kernel] + 0.01 * seed
        rows = [record("learning", "test_rel_rmse", 0.5 / D ** 0.5, method="ridge"),
                record("learning", "test_rel_rmse", exact, method="exact_krr")]
        rows_by_kernel.setdefault(kernel, []).append(exact)
        identity = dict(run_id=rid, experiment="t", dataset="synthetic", task="regression",
                        n_train=75, n_test=25, d=3, kernel=kernel, nu=None, lengthscale=1.0,
                        features=feat, D=D, n_freq=D, n_columns=D, seed=seed,
                        dtype="float64", threads=2)
        _write_run(root, rid, conf, identity, rows)
    drawn, why = rlearning.fig_learning_vs_D(_fig_context(root))
    assert drawn, why
    (ax,) = drawn[0].fig.axes
    exact = {ln.get_gid(): ln.get_ydata()[0] for ln in ax.get_lines()
             if (ln.get_gid() or "").startswith("exact_krr")}
    assert len(exact) == 2, exact
    for kernel, vals in rows_by_kernel.items():
        (gid,) = [k for k in exact if f"kernel={kernel}" in k]
        assert exact[gid] == pytest.approx(np.median(vals))
    assert "one red line per kernel" in drawn[0].caption


@pytest.mark.parametrize("unit", ["frequencies", "output"])
def test_learning_vs_D_counts_frequencies_where_the_sweep_does(tmp_path, unit):
    """D_unit=frequencies: a [cos, sin] map has D = 2 n_freq, a step map D = n_freq; the
    learning figure's x axis is n_freq (as the error figure's), so the same sizes meet."""
    root = tmp_path / "s"
    for (feat, per), nf, seed in itertools.product([("rff_pairs", 2), ("arccos", 1)],
                                                   [19, 38, 77], [0, 1]):
        conf = dict(kernel=dict(name="gaussian"), features=dict(name=feat),
                    dataset=dict(name="synthetic"), D=nf, D_unit=unit, seed=seed)
        rid = f"{feat}{nf}s{seed}"
        rows = [record("learning", "test_error_rate", 1.0 / nf, method="ridge")]
        identity = dict(run_id=rid, experiment="t", dataset="synthetic",
                        task="classification", n_train=75, n_test=25, d=3, kernel="gaussian",
                        nu=None, lengthscale=1.0, features=feat, D=per * nf, n_freq=nf,
                        n_columns=per * nf, seed=seed, dtype="float64", threads=2)
        _write_run(root, rid, conf, identity, rows)
    drawn, why = rlearning.fig_learning_vs_D(_fig_context(root))
    assert drawn, why
    (ax,) = drawn[0].fig.axes
    lines = {ln.get_gid(): ln for ln in ax.get_lines()
             if (ln.get_gid() or "").startswith("observed:")}
    x = {gid.split(":")[2]: list(ln.get_xdata()) for gid, ln in lines.items()}
    if unit == "frequencies":
        assert ax.get_xlabel() == "n_freq (frequencies)"
        assert x == {"rff_pairs+ridge": [19, 38, 77], "arccos+ridge": [19, 38, 77]}
    else:
        assert ax.get_xlabel() == "D (output dimension)"
        assert x == {"rff_pairs+ridge": [38, 76, 154], "arccos+ridge": [19, 38, 77]}


def test_the_size_axis_says_where_D_is_not_the_output_columns(tmp_path):
    """binning's D is its number of grids; its output columns are its bins: the label of
    a figure that draws it with a dense map says so."""
    root = tmp_path / "s"
    for (feat, cols), D, seed in itertools.product([("rff", 1), ("binning", 45)], [30, 100],
                                                   [0, 1]):
        conf = dict(kernel=dict(name="gaussian"), features=dict(name=feat),
                    dataset=dict(name="synthetic"), D=D, seed=seed)
        rid = f"{feat}{D}s{seed}"
        rows = [record("learning", "test_error_rate", 1.0 / D, method="ridge")]
        identity = dict(run_id=rid, experiment="t", dataset="synthetic",
                        task="classification", n_train=75, n_test=25, d=3, kernel="gaussian",
                        nu=None, lengthscale=1.0, features=feat, D=D, n_freq=D,
                        n_columns=cols * D, seed=seed, dtype="float64", threads=2)
        _write_run(root, rid, conf, identity, rows)
    drawn, why = rlearning.fig_learning_vs_D(_fig_context(root))
    assert drawn, why
    (ax,) = drawn[0].fig.axes
    assert ax.get_xlabel() == ("D (output dimension; binning: n_components, not its output "
                               "columns)")


def test_train_time_marks_the_exact_points_fitted_by_cg(tmp_path):
    """exact_solver=auto switches solver along n_train: the cg points are drawn as squares
    and the caption says what circles and squares are."""
    from rffbench.measure.learning import CG_TRAIN_NOTE

    root = tmp_path / "s"
    for n, D in itertools.product([1000, 20000, 50000], [64, 256]):
        conf = dict(dataset=dict(name="synthetic", n=n), D=D)
        rid = f"n{n}D{D}"
        cg = n > 10000
        rows = [record("learning", "train_time_s", 1e-3 * D * n / 1000, method="ridge"),
                record("learning", "train_time_s", (n / 1000) ** 2, method="exact_krr",
                       note=f"{CG_TRAIN_NOTE}: ..." if cg else "Gram 1 s + Cholesky 1 s")]
        identity = dict(run_id=rid, experiment="t", dataset="synthetic", task="regression",
                        n_train=n, n_test=n // 3, d=16, kernel="gaussian", nu=None,
                        lengthscale=1.0, features="rff", D=D, n_freq=D, n_columns=D, seed=0,
                        dtype="float64", threads=2)
        _write_run(root, rid, conf, identity, rows)
    drawn, why = rlearning.fig_train_time(_fig_context(root))
    assert drawn, why
    (ax,) = drawn[0].fig.axes
    lines = {ln.get_gid(): ln for ln in ax.get_lines() if ln.get_gid()}
    assert list(lines["exact_krr"].get_xdata()) == [1000, 20000, 50000]
    cg = lines["exact_krr_cg"]
    assert list(cg.get_xdata()) == [20000, 50000] and cg.get_marker() == "s"
    assert list(cg.get_ydata()) == [400.0, 2500.0]
    assert "squares conjugate gradients" in drawn[0].caption


def test_colors_are_distinct_for_many_lines():
    for n in (3, 10, 14, 25, 40):
        cols = figures.colors_for([f"m{i}" for i in range(n)])
        assert len(set(cols.values())) == n, n


def test_old_spellings_are_read_in_the_new_ones():
    from rffbench.report.grouping import with_added_defaults

    old = with_added_defaults({"dataset.standardize": False, "measure.approximation.cross": True})
    assert old["dataset.scale"] == "none" and old["measure.approximation.cross"] == "halves"
    assert "dataset.standardize" not in old
    new = with_added_defaults({"dataset.standardize": None, "dataset.scale": "max"})
    assert new["dataset.scale"] == "max" and "dataset.standardize" not in new
    assert with_added_defaults({})["measure.variance.distances"].startswith("[")  # as JSON


def _maps_sweep(root, runs):
    """runs: [(kernel, map, D, own params)] x seeds 0-2, Gram error 0.1 D^-1/2 (1 + seed/10)
    times a factor per run (its index + 1)."""
    want = {}
    for i, (kernel, feat, D, own) in enumerate(runs):
        for seed in range(3):
            conf = dict(kernel=dict(name=kernel), features=dict(name=feat, params=own),
                        dataset=dict(name="synthetic"), D=D, seed=seed)
            rid = f"r{i}s{seed}"
            v = (i + 1) * 0.1 / D ** 0.5 * (1 + seed / 10)
            want.setdefault((kernel, i), []).append(v)
            identity = dict(run_id=rid, experiment="t", dataset="synthetic", task="regression",
                            n_train=75, n_test=25, d=3, kernel=kernel, nu=None, lengthscale=1.0,
                            features=feat, D=D, n_freq=D, n_columns=D, seed=seed,
                            dtype="float64", threads=2)
            _write_run(root, rid, conf, identity,
                       [record("approximation", "rel_fro_error", v)])
    return want


def test_maps_figure_draws_one_file_per_kernel_with_a_maps_own_parameters_in_its_name(tmp_path):
    """The maps preset pairs maps with kernels (conf/map_row): one file per kernel, its maps
    side by side (never a map of another kernel), a map's varying own parameter in its
    name (maclaurin with and without h01), D one value per kernel, medians over seeds."""
    runs = [("gaussian", "rff", 64, {}), ("gaussian", "orf", 64, {}),
            ("exp_dot", "maclaurin", 128, {}), ("exp_dot", "maclaurin", 128, {"h01": True}),
            ("linear", "srht", 8, {}), ("linear", "countsketch", 8, {})]
    want = _maps_sweep(tmp_path / "s", runs)
    drawn, why = rmaps.fig_maps(_fig_context(tmp_path / "s"))
    assert len(drawn) == 3, why
    names = {d.name: d for d in drawn}
    assert set(names) == {f"maps__kernel={k}" for k in ("gaussian", "exp_dot", "linear")}
    for kernel, labels in [("gaussian", {"rff", "orf"}),
                           ("exp_dot", {"maclaurin", "maclaurin (h01=True)"}),
                           ("linear", {"srht", "countsketch"})]:
        (ax,) = names[f"maps__kernel={kernel}"].fig.axes
        assert {t.get_text() for t in ax.get_xticklabels()} == labels
        (med,) = [c for c in ax.collections if c.get_gid() == "median"]
        drawn_medians = sorted(med.get_offsets()[:, 1])
        assert drawn_medians == pytest.approx(sorted(
            np.median(v) for (k, _), v in want.items() if k == kernel))
        assert "D follows kernel" in names[f"maps__kernel={kernel}"].details


def test_maps_figure_refuses_a_kernel_whose_maps_differ_in_D(tmp_path):
    _maps_sweep(tmp_path / "s", [("gaussian", "rff", 64, {}), ("gaussian", "orf", 128, {})])
    drawn, why = rmaps.fig_maps(_fig_context(tmp_path / "s"))
    assert not drawn and why.startswith("maps side by side: D varies for a kernel")


# --------------------------------------------------------------------------
# the report pools only what it knows is the same
# --------------------------------------------------------------------------
def _alpha_run(root, rid, alpha, D, seed=0, layout="runs", repeats=3):
    """A rational-quadratic run whose value depends on kernel.alpha, a config key without
    a record column: only its config.json tells two such runs apart."""
    conf = dict(kernel=dict(name="rational_quadratic", lengthscale="median", alpha=alpha),
                features=dict(name="rff"), dataset=dict(name="synthetic", d=3, n=100), D=D,
                seed=seed, experiment="t", measure=dict(timing=dict(repeats=repeats)))
    v = (0.1 if alpha < 1 else 0.2) / np.sqrt(D / 16)
    identity = dict(run_id=rid, experiment="t", dataset="synthetic", task="regression",
                    n_train=75, n_test=25, d=3, kernel="rational_quadratic", nu=None,
                    lengthscale=1.0, features="rff", D=D, n_freq=D, n_columns=D, seed=seed,
                    dtype="float64", threads=2)
    out = Path(root) / ("runs" if layout == "runs" else "jobs") / rid
    _write_run_at(out, rid, conf, identity,
                  [record("approximation", "rel_fro_error", v),
                   record("approximation", "expected_rel_fro_error", v, method="theory")])
    return out


def _write_run_at(out, rid, conf, identity, rows):
    out.mkdir(parents=True)
    write_config(out, rid, conf, [])
    records_frame(identity, rows, ENV).to_csv(out / RECORDS_FILE, index=False)


@pytest.mark.parametrize("layout", ["runs", "jobs"])
def test_a_run_without_its_config_is_left_out_named_never_pooled(tmp_path, capsys, layout):
    """The issue's case: kernel.alpha=0.5,50 with one run's config.json removed pooled the
    two kernels into one median (0.1333 for 0.108 and 0.159) under a caption claiming they
    differ only in settings the value does not depend on."""
    root = tmp_path / "s"
    dirs = {(a, D): _alpha_run(root, f"a{a}D{D}", a, D, layout=layout)
            for a in (0.5, 50) for D in (16, 64)}
    gone = dirs[50, 16]
    (gone / "config.json").unlink()
    assert report.main([str(root), "--no-pdf"]) == 1
    err = capsys.readouterr().err
    line = [ln for ln in err.splitlines() if gone.name in ln]
    assert len(line) == 1 and "config.json" in line[0], err
    res = pd.read_csv(root / "report" / "results.csv")
    assert gone.name not in set(res.run_id) and res.run_id.nunique() == 3
    summary = (root / "report" / "summary.md").read_text()
    assert "differ only in settings" not in summary
    # each alpha is its own line: the values are the runs', never a median of both kernels
    fro = res[res.metric == "rel_fro_error"]
    assert sorted(fro.value) == sorted([0.1, 0.05, 0.1])


def test_a_caption_names_what_same_seed_runs_it_pools_differ_in(tmp_path):
    """Runs with the same seed that differ in a setting the figure does not depend on
    (measure.timing.repeats for the approximation error) are pooled, and the caption names
    that setting, read from their configs; without configs it claims nothing."""
    root = tmp_path / "s"
    for rep in (3, 5):
        for D in (16, 64):
            _alpha_run(root, f"r{rep}D{D}", 0.5, D, repeats=rep)
    out = report.make_report(root, pdf=False, dpi=40)
    text = out.summary.read_text()
    assert "differ only in measure.timing.repeats, which this value does not depend on" \
        in text, text
    for f in root.glob("runs/*/config.json"):  # written before config.json existed
        f.unlink()
    shutil.rmtree(root / "report")
    legacy = tmp_path / "legacy"
    shutil.copytree(root / "runs", legacy / "jobs")  # the layout of those versions
    out = report.make_report(legacy, pdf=False, dpi=40)
    text = out.summary.read_text()
    assert "configurations were not recorded" in text and "differ only in" not in text


@pytest.mark.parametrize("flag,value,have", [("--delta", "0.123", "recorded delta 0.05"),
                                             ("--tail-D", "17", "at D = 16, 64")])
def test_asking_for_what_no_run_recorded_is_one_line(tmp_path, capsys, flag, value, have):
    sweep = tmp_path / "s"  # a corner of the grid: its values of D and delta, one report
    for D in (16, 64):
        fake_run(sweep, "gaussian", 2, "rff", D, 0, bounds=True)
    assert report.main([str(sweep), "--no-pdf", flag, value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{flag} {value}: no run recorded" in err[0] and have in err[0]
    assert not (sweep / "report").exists()  # nothing written
    assert report.main([str(sweep), "--no-pdf", flag, {"--delta": "0.05",
                                                       "--tail-D": "16"}[flag]]) == 0


def test_map_variants_name_only_what_varies_within_a_map():
    """nystrom's landmark rules are its variants; qmc's sequence and orf's layout, each
    constant for its own map, name nothing (a parameter another map does not read is not
    a variant of it)."""
    rows = pd.DataFrame({
        "features": ["nystrom", "nystrom", "qmc", "orf"],
        "features.params.landmarks": ["uniform", "kmeans", None, None],
        "features.sequence": ["sobol", "sobol", "generalized_halton", "sobol"],
        "features.params.layout": [None, None, None, "frame"]})
    named, own = figures.map_variants(rows)
    assert list(named.features) == ["nystrom (landmarks=uniform)",
                                    "nystrom (landmarks=kmeans)", "qmc", "orf"]
    assert set(own) == {"features.params.landmarks", "features.sequence",
                        "features.params.layout"}
    same, none = figures.map_variants(rows[rows.features == "qmc"])
    assert none == [] and list(same.features) == ["qmc"]


@pytest.mark.parametrize("ranges,shared", [(((10, 50), (1570, 7850)), False),
                                           (((10, 50), (20, 100)), True)])
def test_panels_share_x_unless_their_ranges_do_not_overlap(ranges, shared):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2)
    for ax, (lo, hi) in zip(axes, ranges):
        ax.plot([lo, hi], [1, 2])
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
    figures.share_ranges(fig, y=False)
    a, b = (tuple(np.round(ax.get_xlim(), 6)) for ax in axes)
    assert (a == b) == shared
    if not shared:
        assert a == ranges[0] and b == ranges[1]
    plt.close(fig)


def test_the_points_that_differ_are_told_per_method():
    from rffbench.report.reproductions import _differ_text

    g = pd.DataFrame({"n": [3, 1, 2], "ratio": [1.1231, 1.1149, 1.12]})
    assert _differ_text(("usps", "arccos0", "B"), g, "n") == \
        "usps arccos0 B n=1, 2, 3: ours / published = 1.115-1.123"
    assert _differ_text(("usps", "arccos0", "QMC"), g.iloc[:1], "n").endswith("= 1.123")
