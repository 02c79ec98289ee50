"""Sweep report: one tidy table, a summary a person reads, and the figures.

    python -m rffbench.report SWEEP_DIR [--out DIR] [--tail-D D]

(also run automatically at the end of every multirun by :class:`ReportCallback`).

* Collects every ``records.csv`` under SWEEP_DIR (any depth: nested sweeps
  too) and every Hydra job directory (one with ``.hydra/``): a job is
  ``complete`` (records), ``failed`` (``error.txt``: its one-line reason) or
  ``incomplete`` (neither: killed or still running).  Records of one run_id
  found twice (a resumed sweep) are kept once (the newest file).
* Writes into the report directory (default SWEEP_DIR/report):
  ``results.csv`` (every record of every job, the schema of results.py),
  ``jobs.csv``, ``summary.md`` (jobs, pivot tables, the figures, and a note for
  every figure skipped because its data is absent) and the figures as PNG and PDF.
* Figures use only the table (and, for the tail plot, the ``bounds_trials.csv``
  files next to the records); a figure without data is skipped with a note,
  never drawn empty.

Errors (one line, exit 2): no records under the directory, records of
different schema versions (rerun the older sweep or report them apart).
"""
from __future__ import annotations

import argparse
import logging
import math
import sys
from pathlib import Path

import numpy as np

from .errors import RffbenchError
from .results import ERROR_FILE, RECORDS_FILE, SCHEMA_VERSION, TRIALS_FILE, write_atomic

log = logging.getLogger(__name__)

UNIFORM = ["rahimi_recht", "rahimi_recht_output_dim", "sutherland_schneider",
           "sriperumbudur_szabo"]
BOUND_COLOR = {"hoeffding": "tab:blue", "bernstein": "tab:orange", "rahimi_recht": "tab:red",
               "rahimi_recht_output_dim": "tab:brown", "sutherland_schneider": "tab:green",
               "sriperumbudur_szabo": "tab:purple"}
BOUND_STYLE = {"hoeffding": ":", "bernstein": ":", "rahimi_recht": "--",
               "rahimi_recht_output_dim": "--", "sutherland_schneider": "-.",
               "sriperumbudur_szabo": (0, (1, 3))}


class ReportError(RffbenchError):
    pass


# --------------------------------------------------------------------------
# collecting
# --------------------------------------------------------------------------
def collect(sweep_dir):
    """(records DataFrame, jobs DataFrame) of everything under ``sweep_dir``."""
    import pandas as pd

    root = Path(sweep_dir)
    if not root.is_dir():
        raise ReportError(f"{sweep_dir}: no such directory")
    files = sorted(root.rglob(RECORDS_FILE), key=lambda f: f.stat().st_mtime)
    frames = []
    for f in files:
        if "report" in f.relative_to(root).parts[:-1]:
            continue
        try:
            df = pd.read_csv(f)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise ReportError(f"{f}: not a records file ({str(exc).splitlines()[0]})") from None
        if "schema" not in df.columns or "run_id" not in df.columns:
            raise ReportError(f"{f}: not an rffbench records file (no schema/run_id column)")
        df["job_dir"] = str(f.parent.relative_to(root))
        frames.append(df)
    jobs = []
    for hydra_dir in sorted(root.rglob(".hydra")):
        job = hydra_dir.parent
        if job == root or "report" in job.relative_to(root).parts:
            continue
        rel = str(job.relative_to(root))
        err = job / ERROR_FILE
        if (job / RECORDS_FILE).exists():
            status, reason = "complete", ""
        elif err.exists():
            status, reason = "failed", (err.read_text().strip().splitlines() or ["failed"])[0]
        else:
            status, reason = "incomplete", "no records and no error: killed or still running"
        overrides = (hydra_dir / "overrides.yaml")
        ov = " ".join(line[2:].strip() for line in overrides.read_text().splitlines()
                      if line.startswith("- ")) if overrides.exists() else ""
        jobs.append(dict(job_dir=rel, status=status, overrides=ov, reason=reason))
    if not frames:
        raise ReportError(f"{sweep_dir}: no {RECORDS_FILE} found (no job completed; "
                          f"{len(jobs)} job dir(s))")
    df = pd.concat(frames, ignore_index=True)
    versions = sorted(df.schema.dropna().astype(int).unique().tolist())
    if versions != [SCHEMA_VERSION]:
        raise ReportError(f"{sweep_dir}: incompatible record versions: schema {versions} found, "
                          f"this rffbench reads schema {SCHEMA_VERSION}; rerun the older jobs or "
                          "report them separately")
    # a resumed sweep may hold a run twice: keep the newest file's records
    newest = df.groupby("run_id").job_dir.last()
    df = df[df.job_dir == df.run_id.map(newest)].reset_index(drop=True)
    jobs = pd.DataFrame(jobs, columns=["job_dir", "status", "overrides", "reason"])
    return df, jobs


# --------------------------------------------------------------------------
# figures: each returns (figure or None, reason when None)
# --------------------------------------------------------------------------
def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _facets(n, ncols=3, w=4.2, h=3.4):
    plt = _plt()
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _band(ax, x, grp, label, style="-", color=None, marker="o"):
    """Median line and min-max band over seeds; returns the line's colour."""
    stats = grp.groupby(x).value.agg(["median", "min", "max"]).sort_index()
    (ln,) = ax.plot(stats.index, stats["median"], style, marker=marker, ms=3.5, label=label,
                    color=color)
    if (stats["max"] > stats["min"]).any():
        ax.fill_between(stats.index, stats["min"], stats["max"], color=ln.get_color(),
                        alpha=0.18, lw=0)
    return ln.get_color()


def _log_axes(ax, y=True):
    """Log axes; x ticks at the swept values (D, d, n_train) when there are few."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator, ScalarFormatter

    ax.set_xscale("log")
    xs = sorted({float(v) for line in ax.get_lines() for v in np.atleast_1d(line.get_xdata())
                 if np.isfinite(v) and v > 0})
    if 1 <= len(xs) <= 10 and max(xs) / min(xs) < 1e6:
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_locator(NullLocator())
    else:
        ax.xaxis.set_minor_formatter(NullFormatter())
    if y:
        ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.25)


def _fig_legend(fig, axes):
    """One legend for the figure: every labelled artist of every panel, once."""
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if seen:
        ncol = min(len(seen), 4 if len(axes) >= 3 else 2 * len(axes))
        fig.legend(list(seen.values()), list(seen.keys()), loc="lower center",
                   ncol=ncol, fontsize=7, frameon=False)


def fig_error_vs_D(df):
    a = df[(df.measurement == "approximation") & df.metric.isin(
        ["rel_fro_error", "expected_rel_fro_error"])]
    obs = a[a.metric == "rel_fro_error"]
    if obs.empty or obs.D.nunique() < 2:
        return None, "approximation error vs D: needs rel_fro_error records at >= 2 values of D"
    panels = list(obs.groupby(["kernel", "dataset", "d"], sort=True).groups)
    fig, axes = _facets(len(panels))
    for ax, (kern, ds, d) in zip(axes, panels):
        sel = (a.kernel == kern) & (a.dataset == ds) & (a.d == d)
        for feat, grp in a[sel].groupby("features"):
            color = _band(ax, "D", grp[grp.metric == "rel_fro_error"], feat)
            theo = grp[(grp.metric == "expected_rel_fro_error") & grp.value.notna()]
            if not theo.empty:
                t = theo.groupby("D").value.median().sort_index()
                ax.plot(t.index, t.values, "--", color=color, lw=1, alpha=0.9)
        mine = obs[(obs.kernel == kern) & (obs.dataset == ds) & (obs.d == d)]
        Ds = np.array(sorted(mine.D.unique()), float)
        y0 = mine[mine.D == Ds[0]].value.median()
        ax.plot(Ds, y0 * np.sqrt(Ds[0] / Ds), color="0.5", lw=0.8, label="1/sqrt(D)")
        ax.set(xlabel="D (output dimension)", ylabel="||K - ZZ'||_F / ||K||_F",
               title=f"{kern} | {ds}, d={d}")
        _log_axes(ax)
    fig.suptitle("Approximation error vs D\n(median, band = min-max over seeds; dashed: "
                 "exact expected error)", fontsize=9)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    _fig_legend(fig, axes)
    return fig, ""


def _bounds_sup(df):
    b = df[(df.measurement == "bounds") & df.dist.isna()]
    return b


def fig_bounds(df, delta=None):
    b = _bounds_sup(df)
    emp = b[(b.metric == "eps_empirical") & (b.method == "empirical")]
    if emp.empty or emp.D.nunique() < 2:
        return None, "bound tightness vs D: needs bounds records at >= 2 values of D"
    delta = delta if delta is not None else float(emp.delta.max())
    b = b[(b.delta == delta) | b.delta.isna()]
    emp = emp[emp.delta == delta]
    panels = list(emp.groupby(["kernel", "features", "dataset", "d"], sort=True).groups)
    plt = _plt()
    fig, axes = plt.subplots(2, len(panels), figsize=(4.4 * len(panels), 6.6), squeeze=False)
    for j, (kern, feat, ds, d) in enumerate(panels):
        sel = (b.kernel == kern) & (b.features == feat) & (b.dataset == ds) & (b.d == d)
        top, bot = axes[0, j], axes[1, j]
        _band(top, "D", emp[(emp.kernel == kern) & (emp.features == feat) & (emp.dataset == ds)
                            & (emp.d == d)], "observed (1-delta) quantile", color="k")
        for m, grp in b[sel & (b.metric == "eps_bound") & b.value.notna()].groupby("method"):
            s = grp.groupby("D").value.median().sort_index()
            top.plot(s.index, s.values, linestyle=BOUND_STYLE.get(m, "-"), marker=".", label=m,
                     color=BOUND_COLOR.get(m))
        for m, grp in b[sel & (b.metric == "tightness") & b.value.notna()].groupby("method"):
            s = grp.groupby("D").value.median().sort_index()
            bot.plot(s.index, s.values, linestyle=BOUND_STYLE.get(m, "-"), marker=".", label=m,
                     color=BOUND_COLOR.get(m))
        bot.axhline(1.0, color="r", lw=0.8)
        top.set(ylabel="epsilon", title=f"{feat} | {kern} | {ds}, d={d}")
        bot.set(xlabel="D", ylabel="eps_bound / eps_empirical")
        for ax in (top, bot):
            _log_axes(ax)
        na = b[sel & (b.metric == "eps_bound") & b.value.isna() & b.method.isin(UNIFORM)]
        if not na.empty:
            bot.text(0.02, 0.02, "n/a: " + ", ".join(sorted(na.method.unique())),
                     transform=bot.transAxes, fontsize=6, va="bottom")
    fig.suptitle(f"Observed sup error and published bounds, delta = {delta:g}\n"
                 "(tightness < 1, below the red line: bound violated)", fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    _fig_legend(fig, axes[0])
    return fig, ""


def fig_tail(df, root, D=None):
    """Empirical P[sup >= eps] over the trials of one run against the bounds' curves."""
    import pandas as pd

    from . import theory
    from .features import FEATURE_MAPS

    b = _bounds_sup(df)
    runs = b[(b.metric == "eps_empirical") & (b.method == "empirical")]
    if runs.empty:
        return None, "empirical tail: needs bounds records"
    runs = runs.sort_values(["D", "features"])
    if D is not None:
        runs = runs[runs.D == D]
    cand = [r for r in runs.itertuples() if (Path(root) / r.job_dir / TRIALS_FILE).exists()]
    if not cand:
        return None, f"empirical tail: no {TRIALS_FILE} next to the bounds records" + (
            f" at D={D}" if D is not None else "")
    r = cand[-1] if D is None else cand[0]
    trials = pd.read_csv(Path(root) / r.job_dir / TRIALS_FILE)
    sup = np.sort(trials[trials.quantity == "sup"].error.to_numpy())
    rec = b[b.run_id == r.run_id]
    diam_rows = rec[rec.metric == "diam"]
    used = diam_rows[diam_rows.note.fillna("").str.contains("used by the bounds")]
    diam = float((used if not used.empty else diam_rows).value.iloc[0])
    sigma_p2 = float(rec[rec.metric == "sigma_p2"].value.iloc[0])
    fam = FEATURE_MAPS[r.features].variance if r.features in FEATURE_MAPS else None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    surv = 1.0 - np.arange(len(sup)) / len(sup)
    ax.step(sup, surv, where="post", color="k", label=f"observed ({len(sup)} redraws)")
    eps = np.geomspace(max(sup.min() / 3, 1e-4), 5.0, 300)
    for bnd in theory.uniform_bounds(fam, int(r.d), sigma_p2, diam, map_name=r.features):
        if bnd.prob is None or bnd.method == "bernstein":
            continue
        p = np.minimum([bnd.prob(e, int(r.D)) for e in eps], 1.0)
        ax.plot(eps, p, linestyle=BOUND_STYLE.get(bnd.method, "-"), label=bnd.method,
                color=BOUND_COLOR.get(bnd.method))
    _log_axes(ax)
    ax.set(ylim=(0.5 / len(sup), 1.5), xlabel="epsilon",
           ylabel="P[sup |z(x)'z(y) - k(x,y)| >= epsilon]",
           title=f"Empirical tail vs bounds: {r.features}, {r.kernel}, {r.dataset} d={r.d}, "
                 f"D={r.D}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig, ""


def fig_learning_vs_D(df):
    lr = df[(df.measurement == "learning") & df.metric.isin(["test_error_rate", "test_rel_rmse"])]
    feat = lr[lr.method != "exact_krr"]
    keys = ["dataset", "metric", "n_train"]
    panels = [k for k, g in feat.groupby(keys, sort=True) if g.D.nunique() >= 2]
    if not panels:
        return None, "learning vs D: needs learning records at >= 2 values of D for one dataset"
    fig, axes = _facets(len(panels))
    for ax, (ds, metric, n) in zip(axes, panels):
        sel = (lr.dataset == ds) & (lr.metric == metric) & (lr.n_train == n)
        for (fname, meth), grp in lr[sel & (lr.method != "exact_krr")].groupby(
                ["features", "method"]):
            _band(ax, "D", grp, f"{fname} + {meth}")
        ex = lr[sel & (lr.method == "exact_krr")].value.dropna()
        if not ex.empty:
            ax.axhspan(ex.min(), ex.max() if ex.max() > ex.min() else ex.min() * 1.0001,
                       color="r", alpha=0.25, lw=0)
            ax.axhline(ex.median(), color="r", lw=1, label="exact KRR")
        ax.set(xlabel="D", ylabel=metric.replace("_", " "), title=f"{ds}, n_train={n}")
        _log_axes(ax, y=False)
    fig.suptitle("Test error vs D\n(exact kernel ridge: red line and band)", fontsize=9)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    _fig_legend(fig, axes)
    return fig, ""


def crossover(n, t_feat, t_exact):
    """n_train where the exact time first exceeds the feature model's (log-linear
    interpolation between the bracketing sizes), or None."""
    d = np.log(np.asarray(t_exact)) - np.log(np.asarray(t_feat))
    for i in range(1, len(n)):
        if d[i - 1] <= 0 < d[i]:
            f = -d[i - 1] / (d[i] - d[i - 1])
            return float(np.exp(np.log(n[i - 1]) + f * (np.log(n[i]) - np.log(n[i - 1]))))
    return None


def fig_train_time(df):
    t = df[(df.measurement == "learning") & (df.metric == "train_time_s") & df.value.notna()]
    ok = [ds for ds, g in t.groupby("dataset")
          if g.n_train.nunique() >= 2 and "exact_krr" in set(g.method)]
    if not ok:
        return None, ("train time vs n_train: needs train_time_s of exact KRR and a feature "
                      "model at >= 2 values of n_train of one dataset")
    t = t[t.dataset == ok[0]]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ex = t[t.method == "exact_krr"].groupby("n_train").value.median().sort_index()
    ax.plot(ex.index, ex.values, "k-o", ms=4, label="exact KRR")
    notes = []
    for (D, meth), grp in t[t.method != "exact_krr"].groupby(["D", "method"]):
        s = grp.groupby("n_train").value.median().sort_index()
        (ln,) = ax.plot(s.index, s.values, "-o", ms=3.5, label=f"{meth}, D={D}")
        common = s.index.intersection(ex.index)
        x = crossover(np.asarray(common, float), s[common].values, ex[common].values)
        if x is not None:
            ax.axvline(x, color=ln.get_color(), lw=0.8, ls=":")
            notes.append(f"D={D}: {x:.0f}")
    _log_axes(ax)
    ax.set(xlabel="n_train", ylabel="train time (s)",
           title="Train time: ridge on features vs exact KRR" + (
               f"\ncrossover n_train {'; '.join(notes)}" if notes else ""))
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig, ""


MAP_METRICS = [("approximation", "rel_fro_error", None, "Gram error ||K - ZZ'||_F / ||K||_F"),
               ("bounds", "eps_empirical", "empirical", "observed sup error (1-delta quantile)"),
               ("learning", "test_error_rate", "feature", "test error rate (model on features)"),
               ("learning", "test_rel_rmse", "feature", "test RMSE / std (model on features)"),
               ("timing", "map_transform_time_s", None, "transform time of the training set (s)")]


def fig_maps(df):
    """Every map side by side at equal D: one panel per metric, a dot per seed."""
    if df.features.nunique() < 2 or df.D.nunique() != 1:
        return None, ("maps side by side: needs records of >= 2 feature maps at one D (a sweep "
                      "over D is drawn by error_vs_D)")
    panels = []
    for meas, metric, method, label in MAP_METRICS:
        sel = df[(df.measurement == meas) & (df.metric == metric) & df.dist.isna()]
        if method == "empirical":
            sel = sel[(sel.method == "empirical") & (sel.delta == sel.delta.max())]
        elif method == "feature":
            sel = sel[sel.method != "exact_krr"]
        if sel.value.notna().any() and sel.features.nunique() >= 2:
            panels.append((label, sel))
    if not panels:
        return None, "maps side by side: no comparable metric for >= 2 maps"
    fig, axes = _facets(len(panels), ncols=2, w=5.6, h=3.2)
    for ax, (label, sel) in zip(axes, panels):
        med = sel.groupby("features").value.median().sort_values()
        order = {f: i for i, f in enumerate(med.index)}
        ax.scatter(sel.features.map(order), sel.value, s=12, alpha=0.6, color="tab:blue")
        ax.scatter(range(len(med)), med.values, marker="_", s=300, color="k")
        ax.set_xticks(range(len(med)), med.index, rotation=30, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_title(label, fontsize=9)
        ax.grid(True, axis="y", which="both", alpha=0.25)
    Ds = ", ".join(str(int(v)) for v in sorted(df.D.unique()))
    fig.suptitle(f"Maps side by side at D = {Ds} (dots: seeds, bar: median)", fontsize=9)
    fig.tight_layout()
    return fig, ""


def fig_speed_vs_size(df):
    """Transform time vs N per implementation (log-log), a panel per (d, D, dtype)."""
    t = df[(df.measurement == "speed") & (df.metric == "time_s") & df.value.notna()
           & df.method.str.startswith("transform/")]
    panels = [k for k, g in t.groupby(["d", "D", "dtype"]) if g.n_train.nunique() >= 2]
    if not panels:
        return None, "speed vs size: needs transform times at >= 2 values of N for one (d, D)"
    fig, axes = _facets(len(panels), ncols=2, w=5.0, h=3.8)
    for ax, (d, D, dt) in zip(axes, panels):
        sel = t[(t.d == d) & (t.D == D) & (t.dtype == dt)]
        for impl, grp in sel.groupby("method"):
            s = grp.groupby("n_train").value.median().sort_index()
            ours = not impl.split("/")[1] in ("numpy", "sklearn_rbf")
            ax.plot(s.index, s.values, "-o" if ours else "--s", ms=3.5, label=impl.split("/")[1])
        ax.set(xlabel="N (rows)", ylabel="transform time (s)", title=f"d={d}, D={D}, {dt}")
        _log_axes(ax)
    fig.suptitle("Transform time vs N (dashed: plain numpy and scikit-learn)", fontsize=9)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    _fig_legend(fig, axes)
    return fig, ""


def fig_speed_bars(df):
    """Speed-up vs scikit-learn and fraction of the machine's limit, per shape and implementation."""
    sp = df[(df.measurement == "speed") & df.metric.isin(["speedup_vs_sklearn",
                                                          "fraction_of_limit"]) & df.value.notna()]
    if sp.empty:
        return None, "speed bars: needs speed records"
    sp = sp.assign(shape=[f"{t.split('/')[0]} N={n} d={d} D={D} {dt}"
                          for t, n, d, D, dt in zip(sp.method, sp.n_train, sp.d, sp.D, sp.dtype)],
                   impl=sp.method.str.split("/").str[1])
    plt = _plt()
    metrics = [m for m in ("speedup_vs_sklearn", "fraction_of_limit") if m in set(sp.metric)]
    shapes = sorted(sp["shape"].unique())
    fig, axes = plt.subplots(len(metrics), 1, figsize=(max(8, 0.9 * len(shapes) + 4),
                                                       3.4 * len(metrics)), squeeze=False)
    for ax, metric in zip(axes[:, 0], metrics):
        tab = sp[sp.metric == metric].pivot_table(index="shape", columns="impl", values="value",
                                                  aggfunc="median").reindex(shapes)
        tab = tab.dropna(how="all")
        width = 0.8 / max(1, tab.shape[1])
        for i, impl in enumerate(tab.columns):
            ax.bar(np.arange(len(tab)) + i * width, tab[impl].values, width, label=impl)
        ax.set_xticks(np.arange(len(tab)) + 0.4 - width / 2, tab.index, rotation=20, ha="right",
                      fontsize=7)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_ylabel(metric.replace("_", " "))
        ax.grid(True, axis="y", alpha=0.25)
        ax.legend(fontsize=7, ncol=4)
    fig.suptitle("rffbench speed-up over scikit-learn and fraction of the machine's limit "
                 "(1 = at the limit)", fontsize=9)
    fig.tight_layout()
    return fig, ""


def fig_dimension(df):
    b = _bounds_sup(df)
    emp = b[(b.metric == "eps_empirical") & (b.method == "empirical")]
    a = df[(df.measurement == "approximation") & (df.metric == "rel_fro_error")]
    src = emp if emp.d.nunique() >= 2 else a
    if src.d.nunique() < 2:
        return None, "dimension: needs records at >= 2 values of d"
    D = int(src.D.mode().iloc[0])
    src = src[src.D == D]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for (feat, kern), grp in src.groupby(["features", "kernel"]):
        if src is emp:
            grp = grp[grp.delta == grp.delta.max()]
        color = _band(ax, "d", grp, f"{feat}, {kern} observed")
        if src is emp:
            ss = b[(b.features == feat) & (b.kernel == kern) & (b.D == D) & (b.metric == "eps_bound")
                   & (b.method == "sutherland_schneider") & b.value.notna()]
            if not ss.empty:
                s = ss.groupby("d").value.median().sort_index()
                ax.plot(s.index, s.values, "--", color=color, label=f"{feat} S&S bound")
    ylabel = "epsilon ((1-delta) quantile of the sup)" if src is emp else "relative Frobenius error"
    _log_axes(ax)
    ax.set(xlabel="input dimension d", ylabel=ylabel, title=f"Error and bound vs d at D={D}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig, ""


# --------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------
def _md_table(frame, floatfmt=".4g"):
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join([frame.index.name or ""] + cols) + " |",
             "|" + "---|" * (len(cols) + 1)]
    for idx, row in frame.iterrows():
        cells = [("" if (isinstance(v, float) and math.isnan(v)) else
                  (format(v, floatfmt) if isinstance(v, (float, np.floating)) else str(v)))
                 for v in row.values]
        lines.append("| " + " | ".join([str(idx)] + cells) + " |")
    return "\n".join(lines)


def pivots(df):
    """(title, table) pairs a person reads."""
    out = []
    a = df[(df.measurement == "approximation") & (df.metric == "rel_fro_error")]
    if not a.empty:
        out.append(("Relative Frobenius error (median over seeds), D x map",
                    a.pivot_table(index="D", columns=["kernel", "features"], values="value",
                                  aggfunc="median")))
    b = _bounds_sup(df)
    t = b[(b.metric == "tightness") & b.method.isin(UNIFORM) & b.value.notna()]
    if not t.empty:
        out.append(("Bound tightness eps_bound / eps_empirical (median), D x bound",
                    t.pivot_table(index="D", columns=["features", "method"], values="value",
                                  aggfunc="median")))
    sp = df[(df.measurement == "speed") & (df.metric == "time_s") & df.value.notna()]
    if not sp.empty:
        out.append(("Speed: median time (s) by shape and implementation",
                    sp.pivot_table(index=["n_train", "d", "D", "dtype"], columns="method",
                                   values="value", aggfunc="median")))
    lr = df[(df.measurement == "learning") & df.metric.isin(
        ["test_error_rate", "test_rel_rmse", "train_time_s"])]
    if not lr.empty:
        out.append(("Learning (median): test error and train time by dataset, n_train and D",
                    lr.pivot_table(index=["dataset", "n_train", "D"], columns=["metric", "method"],
                                   values="value", aggfunc="median")))
    return out


FIGURES = {
    "error_vs_D": lambda df, root, args: fig_error_vs_D(df),
    "bounds_vs_D": lambda df, root, args: fig_bounds(df, args.get("delta")),
    "bounds_tail": lambda df, root, args: fig_tail(df, root, args.get("tail_D")),
    "learning_vs_D": lambda df, root, args: fig_learning_vs_D(df),
    "train_time_vs_n": lambda df, root, args: fig_train_time(df),
    "dimension": lambda df, root, args: fig_dimension(df),
    "maps": lambda df, root, args: fig_maps(df),
    "speed_vs_size": lambda df, root, args: fig_speed_vs_size(df),
    "speed_bars": lambda df, root, args: fig_speed_bars(df),
}


def make_report(sweep_dir, out_dir=None, tail_D=None, delta=None, pdf=True, dpi=110,
                tables=True):
    """Write results.csv, jobs.csv, summary.md and the figures; returns the summary path."""
    import pandas as pd

    root = Path(sweep_dir)
    df, jobs = collect(root)
    out = Path(out_dir) if out_dir else root / "report"
    out.mkdir(parents=True, exist_ok=True)
    if tables:
        write_atomic(df.drop(columns=["job_dir"]), out / "results.csv")
        write_atomic(jobs, out / "jobs.csv")
    plt = _plt()
    made, skipped = [], []
    for name, fn in FIGURES.items():
        try:
            fig, why = fn(df, root, dict(tail_D=tail_D, delta=delta))
        except Exception as exc:  # a figure must not sink the report
            log.exception("figure %s failed", name)
            fig, why = None, f"{name}: failed to draw ({type(exc).__name__}: {exc})"
        if fig is None:
            skipped.append(why)
            continue
        fig.savefig(out / f"{name}.png", dpi=dpi)
        if pdf:
            fig.savefig(out / f"{name}.pdf")
        plt.close(fig)
        made.append(name)
    n_fail = int((jobs.status != "complete").sum())
    lines = [f"# rffbench report: {root}", "",
             f"{df.run_id.nunique()} runs, {len(df)} records; jobs: "
             + ", ".join(f"{k} {v}" for k, v in jobs.status.value_counts().items())
             + ("" if len(jobs) else "(no Hydra job dirs)"), ""]
    if n_fail:
        lines += ["## Failed or incomplete jobs", "",
                  _md_table(jobs[jobs.status != "complete"].set_index("job_dir")), ""]
    lines += ["## Figures", ""] + [f"![{m}]({m}.png)" for m in made] + [""]
    if skipped:
        lines += ["Skipped (data absent):", ""] + [f"- {s}" for s in skipped] + [""]
    for title, table in pivots(df):
        table.columns = [" / ".join(map(str, c)) if isinstance(c, tuple) else str(c)
                         for c in table.columns]
        if isinstance(table.index, pd.MultiIndex):
            table.index = [" / ".join(map(str, i)) for i in table.index]
        lines += [f"## {title}", "", _md_table(table), ""]
    summary = out / "summary.md"
    summary.write_text("\n".join(lines))
    return summary, jobs


def _callback_base():
    from hydra.experimental.callback import Callback

    return Callback


class ReportCallback(_callback_base()):
    """Hydra callback: report the sweep when a multirun ends; exit 1 if a job failed."""

    def __init__(self, enabled=True):
        self.enabled = enabled

    def on_multirun_end(self, config, **kwargs):
        if not self.enabled:
            return
        sweep_dir = config.hydra.sweep.dir
        try:
            summary, jobs = make_report(sweep_dir)
        except RffbenchError as exc:
            print(f"rffbench report: error: {exc}", file=sys.stderr)
            raise SystemExit(1)
        print(f"rffbench report: {summary}")
        bad = jobs[jobs.status != "complete"]
        if len(bad):
            for row in bad.itertuples():
                print(f"rffbench: job {row.job_dir} {row.status}: {row.reason}", file=sys.stderr)
            raise SystemExit(1)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m rffbench.report",
                                 description="Report a sweep directory: results.csv, summary.md, "
                                             "figures")
    ap.add_argument("sweep_dir")
    ap.add_argument("--out", default=None, help="report directory (default SWEEP_DIR/report)")
    ap.add_argument("--tail-D", type=int, default=None, help="D of the empirical-tail figure "
                    "(default: the largest D with per-trial data)")
    ap.add_argument("--delta", type=float, default=None, help="delta of the bound figures "
                    "(default: the largest recorded)")
    ap.add_argument("--no-pdf", action="store_true", help="PNG only")
    args = ap.parse_args(argv)
    try:
        summary, jobs = make_report(args.sweep_dir, args.out, args.tail_D, args.delta,
                                    pdf=not args.no_pdf)
    except RffbenchError as exc:
        print(f"rffbench report: error: {exc}", file=sys.stderr)
        return 2
    print(summary.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
