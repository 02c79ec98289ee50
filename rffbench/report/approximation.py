"""The approximation measurement's report: the error_vs_D figure and the approximation
table (rffbench.measure.approximation records them).
"""
from __future__ import annotations

import numpy as np

from .comparison import map_times, table_map_comparison
from .figures import (
    BAND_GID,
    Figure,
    Selection,
    band,
    colors_for,
    grouped_by,
    log_axis,
    map_variants,
    proxy,
    size_axis,
)
from .grouping import Grouping, center_words, fmt_list, pooled_text, summary
from .tables import make_table, row_keys


def map_handles(sheet):
    """A legend entry per map drawn, in its colour (error_vs_D, error_vs_time)."""
    sel, g = sheet.sel, sheet.g
    return [proxy(color=sel.colors[f], marker="o", ms=3.5, label=g.name("features", f))
            for f in sorted(sheet.rows.features.unique(), key=str)]


# --------------------------------------------------------------------------
# approximation error vs D
# --------------------------------------------------------------------------
class ErrorVsD(Figure):
    """Relative Frobenius error of the Gram matrix against D, each map a line with its
    exact expected error (dashed) and a 1/sqrt(D) slope."""

    name, title = "error_vs_D", "Approximation error vs D"
    measurements, lines = ("approximation",), ("features",)
    no_panel = "approximation error vs D: no panel has rel_fro_error at >= 2 values of D"

    def select(self, ctx):
        df = ctx.df
        a = df[(df.measurement == "approximation")
               & df.metric.isin(["rel_fro_error", "expected_rel_fro_error"])]
        obs, own = map_variants(a[(a.metric == "rel_fro_error") & a.value.notna()])
        x, x_label = size_axis(ctx, obs)
        if obs.empty or obs[x].nunique() < 2:
            return "approximation error vs D: needs rel_fro_error records at >= 2 values of D"
        return Selection(rows=obs, x=x, x_label=x_label,
                         exclude=(("D",) if x == "n_freq" else ()) + tuple(own),
                         colors=colors_for(obs.features.unique()),
                         theory=a[(a.metric == "expected_rel_fro_error") & a.value.notna()])

    def panel(self, sheet, axs, label, keys, rows):
        (ax,), sel, g = axs, sheet.sel, sheet.g
        x = sel.x
        first = []
        for feat, grp in rows.groupby("features"):
            ln = band(ax, grp, x, label=g.name("features", feat), color=sel.colors[feat],
                      gid=f"observed:rel_fro_error:{feat}")
            x0 = grp[x].min()
            first.append((x0, summary(grp[grp[x] == x0].value)[0]))
            theo = sel.theory[sel.theory.run_id.isin(grp.run_id)]
            if not theo.empty:
                t = theo.groupby(x).value.median().sort_index()
                (tl,) = ax.plot(t.index, t.values, "--", color=ln.get_color(), lw=1.1)
                tl.set_gid(f"expected:rel_fro_error:{feat}")
        Ds = np.array(sorted(rows[x].unique()), float)
        D0, y0 = min(first)
        (rl,) = ax.plot(Ds, y0 * np.sqrt(D0 / Ds), color="0.55", lw=0.9)
        rl.set_gid("reference:1/sqrt(D)")
        ax.set(title=label, xlabel=sel.x_label, ylabel="relative Frobenius error")
        log_axis(ax, "x", Ds)
        log_axis(ax, "y")

    def handles(self, sheet):
        sel = sheet.sel
        return map_handles(sheet) + [
            proxy(color="k", label="observed ||K - ZZ'||_F / ||K||_F: " + center_words()),
            proxy(color="k", ls="--", lw=1.1, label="expected error (exact variance formula)"),
            proxy(color="0.55", lw=0.9, label=f"1/sqrt({sel.x}) slope through the first "
                                              "point")]

    def describe(self, sheet):
        sel, drawn = sheet.sel, sheet.rows
        no_theory = sorted(set(sel.rows.features) - set(sel.theory.features))
        modes = sheet.ctx.config_values(drawn.run_id, "measure.approximation.cross", False)
        what = {frozenset({"halves"}): "of K(X, Y) between two disjoint halves of the "
                                       "measurement points",
                frozenset({"independent"}): "of K(X, Y) between two independent samples of "
                                            "training points",
                frozenset({False}): "on the measurement points"}.get(
            frozenset(modes), "on the measurement points or K(X, Y) of two samples (it "
                              "differs between runs: see the note column)")
        redraws = drawn[drawn.metric == "rel_fro_error"].n_repeats.dropna()
        each = (f" Each run's value is the mean over its {fmt_list(sorted(redraws.unique()))} "
                "redraws of the map on the same points." if len(redraws) else "")
        return (f"Relative Frobenius error of the Gram matrix {what}, log-log; dashed: the "
                "exact expected error of the map (RMS over redraws)"
                + (f", not available for {', '.join(no_theory)}" if no_theory else "") + "."
                + (" x: the number of frequencies (D_unit=frequencies; D per map: n_freq or "
                   "2 n_freq)."
                   if sel.x == "n_freq" else "") + each)

    def pooled(self, sheet):
        return "Each point: " + pooled_text(sheet.sel.rows, grouped_by(sheet.g)) + "."


# --------------------------------------------------------------------------
# approximation error vs time
# --------------------------------------------------------------------------
class ErrorVsTime(Figure):
    """Relative Frobenius error against the map's fit + transform time, each map a line
    through its D, each point with its interval on both axes."""

    name, title = "error_vs_time", "Approximation error vs the map's time"
    measurements, lines = ("approximation", "timing"), ("features",)
    no_panel = "approximation error vs time: no panel has errors and times at >= 2 values of D"

    def select(self, ctx):
        df = ctx.df
        obs, own = map_variants(df[(df.measurement == "approximation")
                                   & (df.metric == "rel_fro_error") & df.value.notna()])
        total = map_times(df, obs.run_id)
        rows = obs[obs.run_id.isin(total.index)]
        if rows.empty or rows.D.nunique() < 2:
            return ("approximation error vs time: needs rel_fro_error and the timing "
                    "measurement's fit and transform times at >= 2 values of D")
        return Selection(rows=rows.assign(time_s=rows.run_id.map(total)), x="D",
                         exclude=tuple(own), colors=colors_for(rows.features.unique()))

    def panel(self, sheet, axs, label, keys, rows):
        (ax,) = axs
        for feat, grp in rows.groupby("features"):
            pts = np.array([[*summary(g.time_s), *summary(g.value)]
                            for _, g in grp.groupby("D")])  # per D: t, lo, hi, e, lo, hi
            color = sheet.sel.colors[feat]
            (ln,) = ax.plot(pts[:, 0], pts[:, 3], marker="o", ms=3.5, lw=1.4, color=color,
                            label=sheet.g.name("features", feat))
            ln.set_gid(f"observed:error_vs_time:{feat}")
            if (pts[:, 2] > pts[:, 1]).any() or (pts[:, 5] > pts[:, 4]).any():
                bars = ax.errorbar(pts[:, 0], pts[:, 3], xerr=[pts[:, 0] - pts[:, 1],
                                                               pts[:, 2] - pts[:, 0]],
                                   yerr=[pts[:, 3] - pts[:, 4], pts[:, 5] - pts[:, 3]],
                                   fmt="none", ecolor=color, elinewidth=0.9, capsize=2,
                                   alpha=0.7)
                for part in bars.lines[2]:
                    part.set_gid(BAND_GID)
        ax.set(title=label, xlabel="map fit + transform time, training set (s)",
               ylabel="relative Frobenius error")
        log_axis(ax, "x")
        log_axis(ax, "y")

    def handles(self, sheet):
        return map_handles(sheet)

    def describe(self, sheet):
        return ("Relative Frobenius error of the Gram matrix (approximation) against the "
                "map's fit + transform time on the training set (timing: each run's median "
                "over its repeats), log-log; each map a line through its D, in order of D. "
                "Down and left is better: a map below another at the same time is more "
                "accurate for its cost."
                + (" The bars on both axes are each point's band (below)."
                   if sheet.rows.seed.nunique() > 1 else ""))

    def pooled(self, sheet):
        return "Each point (one D): " + pooled_text(sheet.rows, grouped_by(sheet.g)) + "."


def table_approximation(df, origins):
    a = df[(df.measurement == "approximation")
           & df.metric.isin(["rel_fro_error", "expected_rel_fro_error", "max_abs_error"])]
    if a.empty:
        return None
    g = Grouping(a, origins, ["approximation"], x="D", lines=["features"], row_cols=["metric"])
    cols = ["D"] if a.D.nunique() > 1 else []
    rk = row_keys(g, last=["metric"])
    return make_table("approximation", "Gram-matrix error (approximation)",
                      "Observed relative Frobenius error, largest entry error, and the exact "
                      "expected relative Frobenius error (theory) of the map.", g, a, rk, cols)


fig_error_vs_D = ErrorVsD()
fig_error_vs_time = ErrorVsTime()
#: the report's figures and tables of this measurement (rffbench.report.catalog)
FIGURES = [fig_error_vs_D, fig_error_vs_time]
TABLES = [table_approximation, table_map_comparison]
