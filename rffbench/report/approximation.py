"""The approximation measurement's report: the error_vs_D figure and the approximation
table (rffbench.measure.approximation records them).
"""
from __future__ import annotations

import numpy as np

from .comparison import table_map_comparison
from .figures import (
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
        sel, g = sheet.sel, sheet.g
        out = [proxy(color=sel.colors[f], marker="o", ms=3.5, label=g.name("features", f))
               for f in sorted(sheet.rows.features.unique(), key=str)]
        return out + [
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
#: the report's figures and tables of this measurement (rffbench.report.catalog)
FIGURES = [fig_error_vs_D]
TABLES = [table_approximation, table_map_comparison]
