"""The speed measurement's report: speed_vs_size, speed_bars and the speed tables
(rffbench.measure.speed records them).
"""
from __future__ import annotations

from .figures import Figure, Selection, colors_for, grouped_by, log_axis, plt, proxy
from .grouping import Grouping, fmt, pooled_text
from .tables import make_table, row_keys


# --------------------------------------------------------------------------
# speed
# --------------------------------------------------------------------------
def _ours(impl):
    """rffbench's own implementation (not numpy's reference nor a scikit-learn peer)?"""
    return impl != "numpy" and not impl.startswith("sklearn")


def _impl(method):
    return method.split("/", 1)[1] if "/" in method else method


def unstable_cells(df):
    """The speed records' cells (run_id, method) marked unstable: their worker processes'
    medians differ by more than ``measure.speed.unstable_ratio`` (rffbench.measure.speed)."""
    u = df[(df.measurement == "speed") & (df.metric == "unstable") & (df.value == 1)]
    return set(zip(u.run_id, u.method))


def unstable_text(rows, cells):
    """The caption's words for the unstable cells among ``rows`` ('' when none)."""
    hit = rows[[(r, m) in cells for r, m in zip(rows.run_id, rows.method)]]
    if hit.empty:
        return ""
    names = sorted({f"{_impl(m)} (N={fmt(n)}, d={fmt(d)}, D={fmt(D)}, {t})"
                    for m, n, d, D, t in zip(hit.method, hit.n_train, hit.d, hit.D, hit.dtype)})
    return (" UNSTABLE (hollow markers): the worker processes' medians of "
            + "; ".join(names) + " differ by more than measure.speed.unstable_ratio: the "
            "machine, not the code, decided them (their per-process medians are in the time "
            "records' notes).")


class SpeedVsSize(Figure):
    """Transform time of each implementation against the number of rows N."""

    name, title = "speed_vs_size", "Transform time vs N"
    measurements, x, lines = ("speed",), "n_train", ("method",)
    no_panel = "speed vs size: needs transform times at >= 2 values of N for one (d, D)"

    def select(self, ctx):
        df = ctx.df
        t = df[(df.measurement == "speed") & (df.metric == "time_s") & df.value.notna()
               & df.method.str.startswith("transform/")]
        if t.empty:
            return "speed vs size: needs transform times"
        return Selection(rows=t, colors=colors_for(t.method.unique()),
                         unstable=unstable_cells(df))

    def layout(self, sheet):
        return dict(ncols=min(3, len(sheet.panels)), w=4.4, h=3.3)

    def panel(self, sheet, axs, label, keys, rows):
        (ax,) = axs
        for m, grp in rows.groupby("method"):
            s = grp.groupby("n_train").value.median().sort_index()
            impl = _impl(m)
            ours = _ours(impl)
            (ln,) = ax.plot(s.index, s.values, "-o" if ours else "--s", ms=3.5,
                            color=sheet.sel.colors[m], label=impl + ("" if ours else
                                                                     " (reference)"))
            ln.set_gid(f"observed:time_s:{impl}")
            sheet.keep(ln)
            bad = grp[[(r, m) in sheet.sel.unstable for r, m in zip(grp.run_id, grp.method)]]
            if not bad.empty:  # marked where a user looks, not only in the records
                u = s[s.index.isin(bad.n_train)]
                ax.plot(u.index, u.values, "o", ms=9, mfc="none", mec="k", mew=1.1, zorder=5)
        ax.set(title=label, xlabel="N (rows transformed)", ylabel="transform time (s)")
        log_axis(ax, "x", sorted(rows.n_train.unique()))
        log_axis(ax, "y")

    def describe(self, sheet):
        return ("Each time: the median of the worker processes' medians of interleaved warm "
                "repeats of each transform (every call's output released before the next); "
                "dashed: plain numpy and scikit-learn."
                + unstable_text(sheet.rows, sheet.sel.unstable))

    def pooled(self, sheet):
        return "Each point: " + pooled_text(sheet.rows, grouped_by(sheet.g), band=False) + "."


class SpeedBars(Figure):
    """Per shape and implementation: the speed-up over scikit-learn and the fraction of
    the machine's limit, as bars."""

    name = "speed_bars"
    title = "rffbench speed: speed-up over scikit-learn and fraction of the machine's limit"
    measurements, lines, exclude, max_panels = ("speed",), ("method",), ("n_train", "d", "D"), 1
    share_x = share_y = False  # one axes per metric, the shapes as rows

    def select(self, ctx):
        df = ctx.df
        sp = df[(df.measurement == "speed") & df.metric.isin(["speedup_vs_sklearn",
                                                              "fraction_of_limit"])
                & df.value.notna()]
        if sp.empty:
            return "speed bars: needs speed records"
        sp = sp.assign(task=sp.method.str.split("/").str[0], impl=sp.method.map(_impl))
        return Selection(rows=sp, colors=colors_for(sp.impl.unique()),
                         unstable=unstable_cells(df),
                         metrics=[m for m in ("speedup_vs_sklearn", "fraction_of_limit")
                                  if m in set(sp.metric)])

    def new_figure(self, sheet):
        """One row of bars per (task, shape, implementation), one axes per metric."""
        rows = sheet.rows
        shapes = rows.groupby(["task", "n_train", "d", "D"]).impl.unique()
        shapes = shapes.sort_index(level=["task", "d", "D", "n_train"])
        sheet.ypos, sheet.ylabels, sheet.yticks, y = {}, [], [], 0.0
        for (task, n, d, D), impls in shapes.items():
            start = y
            for impl in sorted(impls):
                sheet.ypos[(task, n, d, D, impl)] = y
                y += 1
            sheet.yticks.append((start + y - 1) / 2)
            sheet.ylabels.append(f"{task}\nN={fmt(n)} d={fmt(d)} D={fmt(D)}")
            y += 0.8
        metrics = sheet.sel.metrics
        fig, axes = plt().subplots(1, len(metrics), squeeze=False, layout="constrained",
                                   figsize=(6.0 * len(metrics), 0.9 + 0.24 * y))
        return fig, [list(axes[0])]

    def panel(self, sheet, axs, label, keys, rows):
        for ax, metric in zip(axs, sheet.sel.metrics):
            part = rows[rows.metric == metric]
            med = part.groupby(["task", "n_train", "d", "D", "impl"]).value.median()
            shaky = {k for k, g in part.groupby(["task", "n_train", "d", "D", "impl"])
                     if any((r, m) in sheet.sel.unstable for r, m in zip(g.run_id, g.method))}
            vals = []
            for key, v in med.items():
                yy = sheet.ypos[key]
                if metric == "speedup_vs_sklearn":
                    ax.barh(yy, v - 1.0, left=1.0, height=0.85, color=sheet.sel.colors[key[-1]])
                else:
                    ax.barh(yy, v, height=0.85, color=sheet.sel.colors[key[-1]])
                mark = " unstable" if key in shaky else ""
                ax.text(v, yy, f" {v:.3g}{mark}" if v >= 1 or metric != "speedup_vs_sklearn"
                        else f"{v:.3g}{mark} ", va="center", fontsize=7,
                        ha="left" if v >= 1 or metric != "speedup_vs_sklearn" else "right")
                vals.append(v)
            ax.axvline(1.0, color="k", lw=0.9)
            ax.set_yticks(sheet.yticks, sheet.ylabels)
            ax.invert_yaxis()
            ax.grid(True, axis="y", alpha=0)
            if metric == "speedup_vs_sklearn":
                ax.set_xscale("log")
                ax.set_xlim(min(vals + [1.0]) / 1.6, max(vals + [1.0]) * 2.2)
                log_axis(ax, "x")
                ax.set(xlabel="speed-up over scikit-learn (x, log; < 1: slower)",
                       title="time of scikit-learn / time of rffbench")
            else:
                ax.set_xlim(0, max(vals + [1.0]) * 1.18)
                ax.set(xlabel="fraction of the measured limit (1 = at the limit)",
                       title="limit time / measured time")

    def handles(self, sheet):
        present = sorted(set(sheet.rows.impl), key=str)
        return [proxy(color=sheet.sel.colors[i], lw=6, label=i) for i in present]

    def legend_columns(self, sheet):
        return min(6, sheet.rows.impl.nunique())

    def describe(self, sheet):
        return ("Per shape (task, N, d, D) and implementation: scikit-learn's time divided by "
                "rffbench's, and the limit measured in the same loop divided by the measured "
                "time (a map's or a Gram's time into a kept output of its own), each "
                "ratio taken within a worker process, then their median (no interval: "
                "2 or 3 worker processes are too few for one; how far they agree is the "
                "process_ratio table's)."
                + unstable_text(sheet.rows, sheet.sel.unstable).replace(
                    "(hollow markers)", "(bars labelled 'unstable')"))

    def pooled(self, sheet):
        return ("Each bar: " + pooled_text(sheet.rows, [*sheet.g.keys, "task", "n_train", "d",
                                                        "D", "impl", "metric"], what="bar",
                                           band=False) + ".")

    def details(self, sheet):
        return []


def blas_text(rows):
    """The BLAS each implementation's times ran on, from the records' ``blas`` (the worker
    processes', a peer's own): ' BLAS: ...' for a caption, or '' where none is recorded."""
    rows = rows[rows.blas.notna()]
    if rows.empty:
        return ""
    by = rows.groupby("blas").impl.unique()
    most = max(by.index, key=lambda k: len(by[k]))
    parts = []
    for k in sorted(by.index, key=lambda k: k == most):
        who = ("every implementation" if len(by) == 1 else "every other implementation"
               if k == most else ", ".join(sorted(map(str, by[k]))))
        parts.append(f"{who}: {k}")
    return " BLAS: " + "; ".join(parts) + "."


def reach_text(part):
    """The cells of a fraction-of-the-limit table below WITHIN_REACH, grouped by what holds
    them there (rffbench.measure.speed.known_bound: measured in docs/performance.md), for
    its caption; '' when none is below."""
    from ..measure.speed import WITHIN_REACH, held_of, known_bound

    low = part[part.value < WITHIN_REACH]
    if low.empty:
        return ""
    notes = low["note"] if "note" in low else [""] * len(low)
    why = [held_of(note) or known_bound(f"{t}/{i}", int(d))
           for t, i, d, note in zip(low.task, low.impl, low.d, notes)]
    low = low.assign(why=[w or "not yet measured" for w in why])
    groups = []
    for w, g in low.groupby("why", sort=False):
        ds = ", ".join(str(int(v)) for v in sorted(g.d.unique()))
        groups.append(f"{', '.join(sorted(g.impl.unique()))} at d = {ds} ({len(g)}): {w}")
    return (f" Below {WITHIN_REACH:g} of the limit, {len(low)} of {len(part)} cells, each held "
            "there by what docs/performance.md measured part by part: " + "; ".join(groups)
            + ".")


def beyond_text(part, df):
    """The cells of a fraction-of-the-limit table above 1, for its caption: those within
    their worker processes' spread (the fraction no further above 1 than the processes'
    medians are apart, ``process_ratio``), and those beyond it, where the code ran faster
    than the limit's rates, measured in the same workers, allow: a limit that is not a
    bound there.  '' when none is above 1."""
    high = part[part.value > 1.0]
    if high.empty:
        return ""
    pr = df[(df.measurement == "speed") & (df.metric == "process_ratio")]
    ratio = dict(zip(zip(pr.run_id, pr.method), pr.value))
    blas = "measure.speed.blas"
    several = blas in part and part[blas].nunique() > 1
    within, beyond = [], []
    for _, row in high.iterrows():
        spread = ratio.get((row["run_id"], row["method"]), 1.0)
        name = (f"{row['impl']} (N={fmt(row['n_train'])}, d={fmt(row['d'])}, "
                f"D={fmt(row['D'])}, {row['dtype']}"
                + (f", {blas}={row[blas]}" if several else "") + f") {row['value']:.3g}")
        (within if row["value"] <= spread else beyond).append((name, spread))
    text = f" Above 1, {len(high)} of {len(part)} cells."
    if within:
        text += (" Within their worker processes' spread: "
                 + "; ".join(f"{n} (processes {s:.2f}x apart)" for n, s in within) + ".")
    if beyond:
        text += (" Beyond it: " + "; ".join(f"{n} (processes {s:.2f}x apart)"
                                            for n, s in beyond)
                 + ": there the code ran faster than the limit's rates, measured in the same "
                 "workers, allow; the limit is not a bound in those workers "
                 "(docs/performance.md).")
    return text


def table_speed(df, origins):
    sp = df[(df.measurement == "speed") & df.value.notna()
            & df.metric.isin(["time_s", "speedup_vs_sklearn", "fraction_of_limit",
                              "first_touch_s", "process_ratio"])]
    if sp.empty:
        return []
    sp = sp.assign(task=sp.method.str.split("/").str[0],
                   impl=sp.method.str.split("/", n=1).str[1])
    g = Grouping(sp, origins, ["speed"], exclude=["n_train", "d", "D", "method"])
    rk = row_keys(g, last=["task", "n_train", "d", "D"])
    out = []
    for metric, title, what in (
            ("time_s", "Speed: time (s)", "Median of the worker processes' medians of "
             "interleaved warm repeats."),
            ("speedup_vs_sklearn", "Speed-up over scikit-learn", "scikit-learn's time / "
             "rffbench's, within each worker process, then their median (no interval: too "
             "few processes for one; their agreement: the process_ratio table)."),
            ("fraction_of_limit", "Fraction of the measured limit", "limit / measured time "
             "(1 = at the limit; a map's or a Gram's time into a kept output of its own, "
             "timed in the same loop)."),
            ("process_ratio", "Speed: agreement of the worker processes", "max / min of the "
             "worker processes' medians of each time (1 = they agree; above "
             "measure.speed.unstable_ratio the time is marked unstable)."),
            ("first_touch_s", "Speed: a fresh output's allocation and first touch (s)",
             "A parallel pass over a new output minus the same pass over a kept one, in the "
             "same workers: the memory's share of a fresh-output time.")):
        part = sp[sp.metric == metric]
        if part.empty:
            continue
        if metric == "time_s":
            what += unstable_text(part, unstable_cells(df)).replace(" (hollow markers)", "")
            what += blas_text(part)
        if metric == "fraction_of_limit":
            what += reach_text(part) + beyond_text(part, df)
        out.append(make_table(f"speed_{metric}", title, what, g, part, rk, ["impl"]))
    return out


fig_speed_vs_size = SpeedVsSize()
fig_speed_bars = SpeedBars()
#: the report's figures and tables of this measurement (rffbench.report.catalog)
FIGURES = [fig_speed_vs_size, fig_speed_bars]
TABLES = [table_speed]
