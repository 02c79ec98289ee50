"""The bounds measurement's report: bounds_vs_D, bounds_tail and dimension (against d,
with the approximation error), and the bounds table (rffbench.measure.bounds records
them).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..readers import read_table
from ..results import TRIALS_FILE
from ..theory import BOUNDS, POINTWISE_METHODS, UNIFORM_METHODS
from .figures import MAX_TALL_PANELS, Figure, Selection, band, grouped_by, log_axis, proxy
from .grouping import Grouping, center_words, fmt, fmt_list, pooled_text
from .tables import make_table, row_keys


# --------------------------------------------------------------------------
# what several figures draw
# --------------------------------------------------------------------------
def sup_rows(df):
    """The bounds measurement's records of the sup error (not of a distance class)."""
    return df[(df.measurement == "bounds") & df.dist.isna()]


def empirical_sup(df, delta=None):
    """The observed (1-delta) quantile of the sup error over redraws, at ``delta`` if
    given."""
    b = sup_rows(df)
    emp = b[(b.metric == "eps_empirical") & (b.method == "empirical") & b.value.notna()]
    return emp if delta is None else emp[np.isclose(emp.delta, delta)]


def bound_label(method):
    """A bound's legend entry: uniform, or a pointwise reference line for the sup."""
    info = BOUNDS[method]
    return (f"{info.label} (uniform bound)" if info.uniform else
            f"{info.label}: pointwise reference (one pair), not a bound on the sup")


def bound_lines(sheet, ax, sel, x):
    """Each bound's eps_bound (median over the runs) along ``x`` from the records
    ``sel``: uniform bounds as coloured lines, pointwise ones as grey reference lines.
    Returns the uniform methods drawn."""
    drawn = []
    for m in POINTWISE_METHODS + UNIFORM_METHODS:
        eb = sel[(sel.metric == "eps_bound") & (sel.method == m) & sel.value.notna()]
        if eb.empty:
            continue
        info = BOUNDS[m]
        s = eb.groupby(x).value.median().sort_index()
        (ln,) = ax.plot(s.index, s.values, linestyle=info.style, color=info.color,
                        marker="." if info.uniform else "x", ms=4,
                        lw=1.4 if info.uniform else 0.9, label=bound_label(m))
        ln.set_gid(("bound:" if info.uniform else "pointwise:") + m)
        sheet.keep(ln)
        if info.uniform:
            drawn.append(m)
    return drawn


def na_text(b, run_ids):
    """Which uniform bounds are n/a for these runs, where and why (one phrase per reason;
    numbers in the reasons are left out so that one reason reads once)."""
    import re

    na = b[b.run_id.isin(run_ids) & (b.metric == "eps_bound") & b.value.isna()
           & b.method.isin(UNIFORM_METHODS)]
    if na.empty:
        return ""
    na = na.assign(reason=na.note.fillna("").map(
        lambda t: re.sub(r",? (i\.e\.|but) [^;()]*", "", t).rstrip(". ")))
    ran = b[b.run_id.isin(run_ids)].groupby("features").D.unique()
    parts = []
    for (feat, reason), grp in na.groupby(["features", "reason"]):
        methods = ", ".join(BOUNDS[m].label for m in sorted(grp.method.unique()))
        Ds = sorted(grp.D.unique())
        where = "" if len(Ds) == len(ran[feat]) else f" at D={fmt_list(Ds)}"
        parts.append(f"{methods} for {feat}{where} ({reason})")
    return "Not drawn (n/a): " + "; ".join(parts) + "."


# --------------------------------------------------------------------------
# bounds vs D
# --------------------------------------------------------------------------
class BoundsVsD(Figure):
    """Top: the observed sup error and every bound's epsilon against D; bottom: the
    uniform bounds' tightness (bound / observed), violations shaded."""

    name, title = "bounds_vs_D", "Observed sup error and published bounds vs D"
    measurements, x, row_cols = ("bounds",), "D", ("delta",)
    max_panels, panel_axes, size, legend_ncol = MAX_TALL_PANELS, 2, dict(w=4.2, h=2.9), 2
    no_panel = "bound tightness vs D: no panel has bounds records at >= 2 values of D"

    def select(self, ctx):
        emp = empirical_sup(ctx.df, ctx.delta)
        if emp.empty or emp.D.nunique() < 2:
            return "bound tightness vs D: needs bounds records at >= 2 values of D"
        return Selection(rows=emp, b=sup_rows(ctx.df))

    def panel(self, sheet, axs, label, keys, rows):
        top, bot = axs
        b = sheet.sel.b
        delta = float(rows.delta.iloc[0])
        sel = b[b.run_id.isin(rows.run_id) & np.isclose(b.delta, delta)]
        sheet.keep(band(top, rows, "D", color="k", gid="observed:eps_empirical",
                        label="observed (1-delta) quantile of the sup over redraws ("
                              + center_words() + ")"))
        for m in bound_lines(sheet, top, sel, "D"):
            info = BOUNDS[m]
            tt = sel[(sel.metric == "tightness") & (sel.method == m) & sel.value.notna()]
            l2 = band(bot, tt, "D", color=info.color, ls=info.style, marker=".",
                      gid="tightness:" + m, lw=1.4)
            if (l2.get_ydata() < 1).any():
                sheet.notes.append(f"{info.label} at {label}")
        lo = min([0.5] + [ln.get_ydata().min() * 0.7 for ln in bot.get_lines()
                          if len(ln.get_ydata())])
        hi = max([2.0] + [ln.get_ydata().max() * 1.5 for ln in bot.get_lines()
                          if len(ln.get_ydata())])
        bot.axhspan(1e-12, 1.0, color="tab:red", alpha=0.10, lw=0)
        bot.axhline(1.0, color="tab:red", lw=0.8)
        bot.text(0.98, 0.03, "violated (< 1)", transform=bot.transAxes, ha="right",
                 va="bottom", color="tab:red", fontsize=7)
        bot.set_ylim(lo, hi)
        if not bot.get_lines()[:-1]:
            bot.text(0.5, 0.55, "no uniform bound applies", transform=bot.transAxes,
                     ha="center", fontsize=8, color="0.3")
        Ds = sorted(rows.D.unique())
        top.set(title=label, ylabel="epsilon")
        bot.set(xlabel="D (output dimension)", ylabel="tightness eps_bound / eps_observed")
        for ax in (top, bot):
            log_axis(ax, "x", Ds)
        log_axis(top, "y")
        log_axis(bot, "y")

    def handles(self, sheet):
        return list(sheet.legend.values()) + [
            proxy(color="tab:red", lw=6, alpha=0.25,
                  label="tightness < 1: a uniform bound below the observed error (violated)")]

    def describe(self, sheet):
        return ("Top: the (1-delta) quantile over redraws of the map of the largest error over "
                "all pairs of the measurement points, and each bound's epsilon at that delta. "
                "Bottom: tightness of the uniform bounds (bound / observed per run, "
                + center_words() + "); Hoeffding and "
                "Bernstein hold for one pair at a time and are drawn only as grey reference "
                "lines, not as bounds on the sup.")

    def extra(self, sheet):
        violated = sheet.notes
        return [("VIOLATED: " + "; ".join(violated) + ".") if violated else
                "No uniform bound is violated."]

    def details(self, sheet):
        return [sheet.g.dropped_text(), na_text(sheet.sel.b, sheet.rows.run_id)]


# --------------------------------------------------------------------------
# empirical tail of the sup vs the bounds' tails
# --------------------------------------------------------------------------
class BoundsTail(Figure):
    """The fraction of redraws whose sup error is at least epsilon against each
    applicable uniform bound's probability."""

    name, title = "bounds_tail", "Empirical tail of the sup error vs the bounds' tails"
    measurements, size, legend_ncol = ("bounds",), dict(w=3.9, h=3.0), 3

    def select(self, ctx):
        b = sup_rows(ctx.df)
        emp = empirical_sup(ctx.df)
        if ctx.tail_D is not None:
            emp = emp[emp.D == ctx.tail_D]
        emp = emp.drop_duplicates("run_id")
        has = [rid for rid in emp.run_id if (Path(ctx.run_dirs[rid]) / TRIALS_FILE).exists()]
        emp = emp[emp.run_id.isin(has)]
        if emp.empty:
            return "empirical tail: needs bounds records with their " + TRIALS_FILE + (
                f" at D={ctx.tail_D}" if ctx.tail_D is not None else "")
        applies = b[(b.metric == "eps_bound") & b.method.isin(UNIFORM_METHODS)
                    & b.value.notna()]
        with_bound = emp[emp.run_id.isin(applies.run_id)]
        without = sorted(set(emp.features) - set(with_bound.features))
        if with_bound.empty:
            return ("empirical tail: no map with an applicable uniform bound ("
                    + ", ".join(without) + ")")
        return Selection(rows=with_bound, b=b, applies=applies, without=without)

    def panel(self, sheet, axs, label, keys, rows):

        from .. import theory
        from ..features import FEATURE_MAPS

        (ax,), ctx, sel = axs, sheet.ctx, sheet.sel
        b = sel.b
        sups, T = [], 0
        shades = np.linspace(0.0, 0.55, max(1, len(rows)))
        for shade, r in zip(shades, rows.sort_values("seed").itertuples()):
            tr = read_table(Path(ctx.run_dirs[r.run_id]) / TRIALS_FILE, ("quantity", "error"))
            sup = np.sort(tr[tr.quantity == "sup"].error.to_numpy())
            T = max(T, len(sup))
            sups.append(sup)
            surv = 1.0 - np.arange(len(sup)) / len(sup)
            (ln,) = ax.step(sup, surv, where="post", color=str(shade), lw=1.3,
                            label="observed P[sup >= eps] over the redraws"
                            + (", one line per seed" if len(rows) > 1 else ""))
            ln.set_gid(f"observed:seed={fmt(r.seed)}")
            sheet.legend.setdefault("observed", ln)
        r0 = rows.sort_values("seed").iloc[0]
        rec = b[b.run_id == r0.run_id]
        diam_rows = rec[rec.metric == "diam"]
        used = diam_rows[diam_rows.note.fillna("").str.contains("used by the bounds")]
        diam = float((used if not used.empty else diam_rows).value.iloc[0])
        sigma_p2 = float(rec[rec.metric == "sigma_p2"].value.iloc[0])
        # a name from a records file: built-ins and installed plug-ins only (never an import path)
        cls = FEATURE_MAPS.installed(r0.features)
        fam = cls.tags.variance if cls is not None else None
        all_sup = np.concatenate(sups)
        eb = sel.applies[sel.applies.run_id == r0.run_id]
        hi = max(all_sup.max() * 3, float(eb.value.max()) * 1.5 if not eb.empty else 0)
        eps = np.geomspace(max(all_sup.min() / 2, 1e-6), max(hi, 0.1), 400)
        for bnd in theory.uniform_bounds(fam, int(r0.d), sigma_p2, diam, map_name=r0.features):
            if bnd.prob is None or not bnd.uniform:
                continue
            info = BOUNDS[bnd.method]
            p = np.array([min(bnd.prob(e, int(r0.D)), 1.0) for e in eps])
            (bl,) = ax.plot(eps, p, linestyle=info.style, color=info.color, lw=1.3,
                            label=bound_label(bnd.method))
            bl.set_gid("bound:" + bnd.method)
            sheet.keep(bl)
            mk = eb[eb.method == bnd.method]
            ax.plot(mk.value, mk.delta, "o", ms=4, mfc="none", color=info.color)
        deltas = sorted(rows_delta(b, rows.run_id))
        for dl in deltas:
            ax.axhline(dl, color="0.6", lw=0.6, ls=":")
        ax.set_ylim(min([0.5 / T] + [dl / 2 for dl in deltas]), 1.5)
        ax.set(title=label or f"{r0.features}, D={fmt(r0.D)}", xlabel="epsilon",
               ylabel="P[sup error >= epsilon]")
        log_axis(ax, "y")
        log_axis(ax, "x")

    def handles(self, sheet):
        return list(sheet.legend.values()) + [
            proxy(color="0.3", marker="o", mfc="none", ls="none",
                  label="recorded eps_bound at each delta (dotted lines)")]

    def describe(self, sheet):
        return ("Fraction of the redraws of the map whose largest error over the measurement "
                "points is at least epsilon (step lines), against each applicable uniform "
                "bound's probability at this D; circles: the recorded eps_bound at each delta. "
                "Bound curves use the constants (diam, sigma_p^2) of the first seed's run.")

    def pooled(self, sheet):
        n_tr = sheet.rows.drop_duplicates("run_id")
        return ("Each step line: one run (" + pooled_text(n_tr, [*sheet.g.keys, "seed"],
                                                          what="line", band=False)
                + "), not pooled.")

    def details(self, sheet):
        without = sheet.sel.without
        return [f"Not drawn: {', '.join(without)} (no uniform bound applies)."
                if without else ""]


def rows_delta(b, run_ids):
    d = b[b.run_id.isin(run_ids) & (b.metric == "eps_empirical") & b.delta.notna()].delta
    return set(d.unique())


# --------------------------------------------------------------------------
# input dimension
# --------------------------------------------------------------------------
class Dimension(Figure):
    """The sup error with its bounds and the Frobenius error with its expectation,
    against the input dimension d."""

    name, title = "dimension", "Error and bounds vs the input dimension d"
    x, max_panels, size, legend_ncol = "d", MAX_TALL_PANELS, dict(w=4.2, h=2.9), 2
    #: two values of d make a two-point line: the other figures show them side by side
    min_x = 3
    no_panel = ("dimension: no panel has records at >= 3 values of d (two values are compared "
                "side by side in the panels of error_vs_D and bounds_vs_D)")

    def select(self, ctx):
        import pandas as pd

        df = ctx.df
        emp = empirical_sup(df, ctx.delta)
        fro = df[(df.measurement == "approximation") & (df.metric == "rel_fro_error")
                 & df.value.notna()]
        runs = pd.concat([emp, fro]).drop_duplicates("run_id")
        if runs.empty or runs.d.nunique() < self.min_x:
            return self.no_panel
        deltas = sorted(emp.delta.unique(), reverse=True) or [np.nan]
        base = pd.concat([runs.assign(delta=dl) for dl in deltas], ignore_index=True)
        kinds = [k for k, part in (("sup", emp), ("fro", fro)) if not part.empty]
        return Selection(
            rows=base, emp=emp, fro=fro, kinds=kinds, b=sup_rows(df),
            measurements=[m for m, part in (("bounds", emp), ("approximation", fro))
                          if not part.empty],
            row_cols=["delta"] if not emp.empty else [],
            theory=df[(df.measurement == "approximation")
                      & (df.metric == "expected_rel_fro_error") & df.value.notna()])

    def axes_per_panel(self, sel):
        return len(sel.kinds)

    def panel(self, sheet, axs, label, keys, rows):
        sel = sheet.sel
        ax_of = dict(zip(sel.kinds, axs))
        ds = sorted(rows.d.unique())
        if "sup" in ax_of:
            ax = ax_of["sup"]
            delta = float(rows.delta.iloc[0])
            s = sel.emp[sel.emp.run_id.isin(rows.run_id) & np.isclose(sel.emp.delta, delta)]
            sheet.keep(band(ax, s, "d", color="k", gid="observed:eps_empirical",
                            label="observed sup error: (1-delta) quantile over redraws ("
                                  + center_words() + ")"))
            b = sel.b
            bound_lines(sheet, ax, b[b.run_id.isin(rows.run_id) & np.isclose(b.delta, delta)],
                        "d")
            ax.set(title=label, ylabel=f"sup error, delta={fmt(delta)}")
            log_axis(ax, "x", ds)
            log_axis(ax, "y")
        if "fro" in ax_of:
            ax = ax_of["fro"]
            f = sel.fro[sel.fro.run_id.isin(rows.run_id)]
            sheet.keep(band(ax, f, "d", color="tab:blue", gid="observed:rel_fro_error",
                            label=f"observed relative Frobenius error ({center_words()})"))
            t = sel.theory[sel.theory.run_id.isin(rows.run_id)]
            if not t.empty:
                tv = t.groupby("d").value.median().sort_index()
                (tl,) = ax.plot(tv.index, tv.values, "--", color="tab:blue", lw=1.1,
                                label="expected relative Frobenius error (exact variance)")
                tl.set_gid("expected:rel_fro_error")
                sheet.keep(tl)
            ax.set(ylabel="relative Frobenius error", title=None if "sup" in ax_of else label)
            log_axis(ax, "x", ds)
            log_axis(ax, "y")
        axs[-1].set_xlabel("input dimension d")

    def describe(self, sheet):
        what = []
        if "sup" in sheet.sel.kinds:
            what.append("the (1-delta) quantile of the sup error over redraws with every "
                        "applicable bound (grey: pointwise reference lines, not bounds on the "
                        "sup)")
        if "fro" in sheet.sel.kinds:
            what.append("the relative Frobenius error of one draw with its exact expectation "
                        "(dashed)")
        return "Against d, " + " and ".join(what) + "."

    def pooled(self, sheet):
        import pandas as pd

        return ("Each point: " + pooled_text(pd.concat([sheet.sel.emp, sheet.sel.fro]),
                                             grouped_by(sheet.g)) + ".")

    def details(self, sheet):
        return [sheet.g.dropped_text(), na_text(sheet.sel.b, sheet.rows.run_id)]


def table_bounds(df, origins):
    b = df[(df.measurement == "bounds") & df.dist.isna()]
    emp = b[(b.metric == "eps_empirical") & (b.method == "empirical")]
    tight = b[(b.metric == "tightness") & b.method.isin(UNIFORM_METHODS) & b.value.notna()]
    if emp.empty:
        return None
    import pandas as pd

    rows = pd.concat([emp.assign(quantity="observed sup error ((1-delta) quantile)"),
                      tight.assign(quantity="tightness "
                                   + tight.method.map(lambda m: BOUNDS[m].label))])
    g = Grouping(rows, origins, ["bounds"], x="D", row_cols=["delta", "quantity"])
    cols = ["D"] if rows.D.nunique() > 1 else []
    rk = row_keys(g, last=["delta", "quantity"])
    return make_table("bounds", "Observed sup error and tightness of the uniform bounds",
                      "The (1-delta) quantile over redraws of the largest error over the "
                      "measurement points, and eps_bound / observed for every uniform bound "
                      "that applies (< 1: violated).", g, rows, rk, cols)


fig_bounds = BoundsVsD()
fig_tail = BoundsTail()
fig_dimension = Dimension()
#: the report's figures and tables of this measurement (rffbench.report.catalog)
FIGURES = [fig_bounds, fig_tail, fig_dimension]
TABLES = [table_bounds]
