"""Report figures: specs of what each figure shows, run by one driver
(docs/architecture.md, "The report").

A figure is a :class:`Figure`: it selects its records (or says why there are none),
names its x axis, its lines and the rows that become panels, draws one panel, and
describes itself for the caption.  :func:`draw` does the rest for every figure: the
grouping rule (:class:`~rffbench.report.grouping.Grouping`: what varies becomes a
panel, a line or a file, never pooled), the split into files when the panels would
not fit one readable figure, the legend (each element once, as first drawn) and the
caption (what is drawn, the layout, what each point pools, what was left out).
Calling a spec, ``spec(ctx)``, returns ``(list of Drawn, reason)``.  Lines carry a
``gid`` (``observed:<metric>``, ``expected:<metric>``, ``bound:<method>``,
``pointwise:<method>``, ``exact_krr``) so that tests can read the plotted values back.
Bound labels, colours and line styles are :data:`rffbench.theory.BOUNDS`.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..measure.learning import CG_TRAIN_NOTE
from ..readers import read_table
from ..results import TRIALS_FILE
from ..theory import BOUNDS, POINTWISE_METHODS, UNIFORM_METHODS
from .grouping import Grouping, center_words, fmt, fmt_list, pooled_text, summary

METRIC_LABEL = {"test_error_rate": "test error rate", "test_rel_rmse": "test RMSE / std(y_test)",
                "rel_fro_error": "relative Frobenius error ||K - ZZ'||_F / ||K||_F",
                "eps_empirical": "sup error max |z(x)'z(y) - k(x,y)|"}
STYLE = {"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "legend.fontsize": 8,
         "xtick.labelsize": 8, "ytick.labelsize": 8, "figure.titlesize": 10,
         "axes.grid": True, "grid.alpha": 0.25}
#: panels per file before a figure is split over several files
MAX_PANELS = 12
#: panels per file of the figures whose panels are two axes tall
MAX_TALL_PANELS = 8


@dataclass
class Drawn:
    name: str  # file stem
    fig: object
    caption: str  # the sentences a paper would print: what is drawn, what a point pools
    details: str = ""  # the layout, what was left out and why (printed apart, smaller)


@dataclass
class FigContext:
    df: object  # records of complete runs + condition columns
    origins: dict  # condition column -> config keys
    run_dirs: dict  # run_id -> run directory
    delta: float = None
    tail_D: int = None
    configs: dict = None  # run_id -> flattened config (None: runs without config.json)

    def config_values(self, run_ids, key, default=None):
        """The set of values of config ``key`` over ``run_ids`` (default where absent)."""
        if not self.configs:
            return {default}
        return {(self.configs.get(r) or {}).get(key, default) for r in set(run_ids)}


def plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


def new_figure(n_panels, n_rows_per_panel=1, ncols=None, w=4.0, h=3.1, extra_h=0.0):
    """A constrained-layout figure with ``n_panels`` panels (each ``n_rows_per_panel``
    axes tall); returns (fig, list of per-panel axes lists)."""
    p = plt()
    ncols = ncols or min(n_panels, 4)
    if n_panels == 1 and n_rows_per_panel == 1:
        h = max(h, 4.2)
    nrows = -(-n_panels // ncols)
    # at least 9 in wide: the legend below must fit a one- or two-panel figure
    fig, axes = p.subplots(nrows * n_rows_per_panel, ncols, squeeze=False, layout="constrained",
                           figsize=(max(w * ncols, 9.0), h * nrows * n_rows_per_panel + extra_h))
    panels = []
    for i in range(nrows * ncols):
        r, c = divmod(i, ncols)
        col = [axes[r * n_rows_per_panel + k, c] for k in range(n_rows_per_panel)]
        if i < n_panels:
            panels.append(col)
        else:
            for ax in col:
                ax.set_visible(False)
    return fig, panels


def log_axis(ax, which="y", values=None):
    """A log axis with readable tick labels: at the swept values when there are few,
    else at the densest of 1-2-3-5 / 1-2-5 / 1 per decade (or every integer multiple when
    the range is under a decade) that labels at most :data:`MAX_LOG_TICKS` values in the
    axis's current range; :func:`share_ranges` calls it again once the range is final."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, \
        NullFormatter, NullLocator

    RangeTicks = _range_ticks()
    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    label = FuncFormatter(lambda v, _: tick_text(v))
    vals = sorted({float(v) for v in (values if values is not None else []) if v > 0})
    if vals and len(vals) <= 12:  # the swept values, written as they were given
        axis.set_major_locator(FixedLocator(vals))
        axis.set_major_formatter(FuncFormatter(lambda v, _: fmt(float(f"{v:.6g}"))))
        axis.set_minor_locator(NullLocator())
        return
    lo, hi = sorted(ax.get_ylim() if which == "y" else ax.get_xlim())
    lo, hi = max(lo, 1e-300), max(hi, 1e-300)
    ticks = log_ticks(lo, hi)
    if ticks is None:  # under a factor of ~2: a few round values across the range
        ticks = [v for v in MaxNLocator(nbins=4).tick_values(lo, hi) if lo <= v <= hi]
        axis.set_major_locator(RangeTicks(ticks))
    else:
        axis.set_major_locator(LogLocator(base=10, subs=ticks, numticks=MAX_LOG_TICKS))
    axis.set_major_formatter(label)
    axis.set_minor_locator(LogLocator(base=10, subs=np.arange(2, 10) * 1.0))
    axis.set_minor_formatter(NullFormatter())


_RANGE_TICKS = []


def _range_ticks():
    """The locator class of ticks chosen for a range, not swept values (chosen again when
    the range changes); made once, on first use (matplotlib is imported lazily)."""
    if not _RANGE_TICKS:
        from matplotlib.ticker import FixedLocator

        class RangeTicks(FixedLocator):
            """Ticks chosen for a range (not swept values)."""

        _RANGE_TICKS.append(RangeTicks)
    return _RANGE_TICKS[0]


def tick_text(v):
    """A log tick's label: 0.05, 20, 4096; powers beyond 1e-3..1e5 as 1e6, 2e-5."""
    v = float(f"{v:.6g}")
    if v and not 1e-3 <= abs(v) < 1e5:
        mant, exp = f"{v:.1e}".split("e")
        if float(mant) * 10.0 ** int(exp) == v:  # one or two significant digits
            return f"{fmt(float(mant))}e{int(exp)}"
    return fmt(v)


#: most labelled ticks on a log axis (more crowd their labels: 0.1 / 0.09 / 0.08 ...)
MAX_LOG_TICKS = 7
LOG_SUBS = [(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0), (1.0, 2.0, 3.0, 5.0), (1.0, 2.0, 5.0),
            (1.0,)]


def log_ticks(lo, hi):
    """The subs per decade of :func:`log_axis` for the range [lo, hi]: the densest set
    that puts two to MAX_LOG_TICKS ticks inside; None when even every integer multiple
    puts fewer than two (a range under about a factor of two); one per decade (which
    LogLocator thins) over many decades."""
    def count(subs):
        return sum(lo * (1 - 1e-9) <= s * 10.0 ** k <= hi * (1 + 1e-9)
                   for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
                   for s in subs)

    counts = [count(subs) for subs in LOG_SUBS]
    fits = [subs for subs, n in zip(LOG_SUBS, counts) if 2 <= n <= MAX_LOG_TICKS]
    if fits:
        return fits[0]
    return None if counts[0] < 2 else LOG_SUBS[-1]


#: the gid of a band of seeds (band()): its legend words are dropped where none is drawn
BAND_GID = "band:seeds"


def band(ax, rows, x, label=None, color=None, ls="-", marker="o", gid=None, lw=1.6):
    """The seeds' summary (grouping.summary: median and min-max band, or mean and t
    interval) along x; returns the line."""
    import pandas as pd

    stats = pd.DataFrame({k: summary(g.value) for k, g in rows.groupby(x)},
                         index=["center", "lo", "hi"]).T.sort_index()
    (ln,) = ax.plot(stats.index, stats["center"], linestyle=ls, marker=marker, ms=3.5,
                    label=label, color=color, lw=lw)
    if gid:
        ln.set_gid(gid)
    if (stats["hi"] > stats["lo"]).any():
        ax.fill_between(stats.index, stats["lo"], stats["hi"], color=ln.get_color(),
                        alpha=0.18, lw=0, gid=BAND_GID)
    return ln


def colors_for(values):
    """One distinct colour per value: tab10 up to 10 values, then tab20 (dark and light
    of each hue), then tab20 + tab20b: never two values in one colour up to 40."""
    import matplotlib

    values = sorted(values, key=str)
    if len(values) <= 10:
        cmap = list(matplotlib.colormaps["tab10"].colors)
    else:
        cmap = list(matplotlib.colormaps["tab20"].colors) + (
            list(matplotlib.colormaps["tab20b"].colors) if len(values) > 20 else [])
    return {v: cmap[i % len(cmap)] for i, v in enumerate(values)}


def finish(fig, title, g, fixed, handles, ncol=4):
    """The figure's title (with the file's conditions) and one legend below the panels
    listing every drawn element (each handle's label)."""
    fig.suptitle(title + (f" ({g.label(fixed)})" if fixed else ""))
    ncols = max(1, len({round(ax.get_position().x0, 3) for ax in fig.axes}))
    width = max(20, int(fig.get_figwidth() / ncols * 72 / 6.0))  # characters per panel
    for ax in fig.axes:  # long panel titles wrap instead of running into the next panel
        t = ax.get_title()
        if len(t) > width:
            ax.set_title("\n".join(textwrap.wrap(t, width)), fontsize="medium")
    if handles:
        longest = max(len(h.get_label()) for h in handles)
        fits = max(1, int(fig.get_figwidth() * 72 / (longest * 5.6 + 40)))
        fig.legend(handles, [h.get_label() for h in handles], loc="outside lower center",
                   ncol=min(ncol, len(handles), fits), frameon=False)


def proxy(**kw):
    from matplotlib.lines import Line2D

    return Line2D([], [], **kw)


def file_name(base, suffix):
    return f"{base}__{suffix}" if suffix else base


#: a linear y axis spans at least this fraction of its largest value, so that noise in
#: the fourth decimal does not fill a panel and read as a trend
MIN_REL_SPAN = 0.1


def share_ranges(fig, x=True, y=True):
    """Panels that share an axis share its range: every panel's x (the same quantity
    across the file, so that one value lines up down a column) and the y of the panels of
    one row that show the same quantity (same label); a linear y axis spans at least
    MIN_REL_SPAN of its largest value.  Fixed ticks (the swept values) become their union;
    automatic log ticks are chosen again for the final range."""
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.has_data()]
    if x:
        for scale in ("linear", "log"):
            _union([ax for ax in axes if ax.get_xscale() == scale], "x")
    if y:
        for ax in axes:
            if ax.get_yscale() == "linear" and ax.get_ylabel():
                lo, hi = ax.get_ylim()
                need = MIN_REL_SPAN * max(abs(lo), abs(hi))
                if hi - lo < need:
                    c = (lo + hi) / 2
                    lo2 = c - need / 2
                    lo2 = 0.0 if lo >= 0 > lo2 else lo2
                    ax.set_ylim(lo2, lo2 + need)
        rows = {}
        for ax in axes:
            spec = ax.get_subplotspec()
            if ax.get_ylabel() and spec is not None:
                rows.setdefault((spec.rowspan.start, ax.get_ylabel(), ax.get_yscale()),
                                []).append(ax)
        for grp in rows.values():
            _union(grp, "y")
            for ax in sorted(grp, key=lambda a: a.get_subplotspec().colspan.start)[1:]:
                ax.set_ylabel("")  # one label per row: the leftmost panel's


def retick(fig):
    """Choose the automatic log ticks again for each axis's final range (a panel's
    limits are final only once every element is drawn)."""
    from matplotlib.ticker import LogLocator

    auto = (LogLocator, _range_ticks())
    for ax in fig.axes:
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if isinstance(axis.get_major_locator(), auto) and \
                    (ax.get_xscale() if which == "x" else ax.get_yscale()) == "log":
                log_axis(ax, which)


def _union(axes, which):
    from matplotlib.ticker import FixedLocator, LogLocator

    if not axes:
        return
    get = [(ax.get_xlim if which == "x" else ax.get_ylim) for ax in axes]
    lims = [sorted(g()) for g in get]
    lo, hi = min(a for a, _ in lims), max(b for _, b in lims)
    axis = [ax.xaxis if which == "x" else ax.yaxis for ax in axes]
    auto = (LogLocator, _range_ticks())
    fixed = sorted({float(v) for a in axis for loc in [a.get_major_locator()]
                    if isinstance(loc, FixedLocator) and not isinstance(loc, auto)
                    for v in loc.locs})
    for ax, a in zip(axes, axis):
        inverted = (ax.xaxis_inverted() if which == "x" else ax.yaxis_inverted())
        (ax.set_xlim if which == "x" else ax.set_ylim)((hi, lo) if inverted else (lo, hi))
        loc = a.get_major_locator()
        if isinstance(loc, auto):
            log_axis(ax, which)
        elif isinstance(loc, FixedLocator) and fixed:
            a.set_major_locator(FixedLocator(fixed))


def settle_words(text, banded, single):
    """A legend entry or caption as drawn: the words on the seeds' band (center_words())
    only where a band is drawn, and none where each point is one run."""
    full, short = center_words(True), center_words(False)
    if banded:
        return text
    if not single:
        return text.replace(full, short)
    for words in (full, short):
        for pat in (f" ({words})", f": {words}", f", {words}"):
            text = text.replace(pat, "")
    return text


def _by(g):
    return [*g.keys, *g.lines] + ([g.x] if g.x else [])


def rows_all(panels):
    import pandas as pd

    return pd.concat([rows for _, _, rows in panels])


# --------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------
class Sheet:
    """One file of a figure while it is drawn: the selection, the grouping, the panels
    of this file, the legend (label -> first handle drawn), the exact-KRR lines drawn
    (their label -> line style; ``cg``: some were fitted by conjugate gradients) and what
    the panels noted for the caption."""

    def __init__(self, ctx, sel, g, panels):
        self.ctx, self.sel, self.g, self.panels = ctx, sel, g, panels
        self.legend = {}
        self.exact = {}
        self.cg = False
        self.notes = []

    def keep(self, handle):
        """Put a drawn element in the legend (once per label); returns it."""
        self.legend.setdefault(handle.get_label(), handle)
        return handle

    @property
    def rows(self):
        """The rows of every panel of this file."""
        return rows_all(self.panels)


class Selection(dict):
    """What :meth:`Figure.select` found: ``rows`` (what is grouped) and anything else the
    spec needs later, as attributes."""

    __getattr__ = dict.__getitem__


class Figure:
    """A figure spec (module docs).  Subclasses set the class attributes and implement
    :meth:`select`, :meth:`panel` and :meth:`describe`."""

    #: file stem and title
    name: str = None
    title: str = None
    #: the measurements whose config keys condition the values
    measurements: tuple = ()
    #: the x column (None: no x axis), the columns drawn as lines in a panel, extra
    #: columns that may split panels, columns never treated as conditions
    x: str = None
    lines: tuple = ()
    row_cols: tuple = ()
    exclude: tuple = ()
    #: panels per file, axes per panel (a panel two axes tall: 2), new_figure's sizes
    max_panels: int = MAX_PANELS
    panel_axes: int = 1
    size: dict = {}
    legend_ncol: int = 4
    #: values of x a panel needs (0: no minimum), and the reason given when none has them
    min_x: int = 2
    no_panel: str = ""
    #: share_ranges: every panel's x range (False: categorical x), the y range of a row
    share_x: bool = True
    share_y: bool = True

    def __call__(self, ctx):
        return draw(self, ctx)

    def select(self, ctx):
        """A :class:`Selection` (``rows`` to group), or the reason nothing is drawn."""
        raise NotImplementedError

    def grouping(self, ctx, sel):
        """The Grouping of the selected rows; the selection may override any of the
        grouping attributes (``x``, ``lines``, ``row_cols``, ``exclude``,
        ``measurements``) when they depend on the data."""
        def get(key):
            return sel.get(key, getattr(self, key))

        return Grouping(sel.rows, ctx.origins, list(get("measurements")), x=get("x"),
                        lines=list(get("lines")), row_cols=list(get("row_cols")),
                        exclude=tuple(get("exclude")))

    def arrange(self, panels):
        """The panels of a file in drawing order (default: the grouping's)."""
        return panels

    def axes_per_panel(self, sel):
        return self.panel_axes

    def layout(self, sheet):
        """new_figure's size keywords for this file."""
        return dict(self.size)

    def new_figure(self, sheet):
        """(figure, one list of axes per panel)."""
        return new_figure(len(sheet.panels), self.axes_per_panel(sheet.sel),
                          **self.layout(sheet))

    def legend_columns(self, sheet):
        return self.legend_ncol

    def panel(self, sheet, axs, label, keys, rows):
        """Draw one panel on its axes ``axs`` (a list of ``axes_per_panel``)."""
        raise NotImplementedError

    def handles(self, sheet):
        """The legend's elements (default: each drawn element once, in drawing order)."""
        return list(sheet.legend.values())

    def describe(self, sheet):
        """The caption's first sentences: what is drawn."""
        raise NotImplementedError

    def pooled(self, sheet):
        """The caption's sentence on what each point pools."""
        return "Each point: " + pooled_text(sheet.rows, _by(sheet.g)) + "."

    def extra(self, sheet):
        """The caption's last sentences: what the figure shows that a reader must know
        (a violated bound, a crossover)."""
        return []

    def details(self, sheet):
        """What was left out and why, printed apart from the caption (after the layout)."""
        return [sheet.g.dropped_text()]


def draw(spec, ctx):
    """Run a figure spec: ``(list of Drawn, "")`` or ``([], reason)``."""
    sel = spec.select(ctx)
    if isinstance(sel, str):
        return [], sel
    g = spec.grouping(ctx, sel)
    if g.x is not None and spec.min_x and not g.require_x(spec.min_x):
        return [], spec.no_panel
    out = []
    for suffix, fixed, panels in g.files(spec.max_panels):
        sheet = Sheet(ctx, sel, g, spec.arrange(panels))
        sheet.fig, axes = spec.new_figure(sheet)
        for axs, (label, keys, rows) in zip(axes, sheet.panels):
            spec.panel(sheet, axs, label, keys, rows)
        share_ranges(sheet.fig, x=spec.share_x, y=spec.share_y)
        retick(sheet.fig)
        banded = any(a.get_gid() == BAND_GID for ax in sheet.fig.axes
                     for a in (*ax.collections, *ax.patches))
        single = "seed" in sheet.rows and sheet.rows.seed.nunique() <= 1

        def settle(text):
            return settle_words(text, banded, single)

        handles = spec.handles(sheet)
        for h in handles:
            h.set_label(settle(h.get_label()))
        finish(sheet.fig, spec.title, g, fixed, handles, ncol=spec.legend_columns(sheet))
        cap = " ".join(filter(None, [spec.describe(sheet), spec.pooled(sheet),
                                     *spec.extra(sheet)]))
        details = " ".join(filter(None, [g.layout_text(None, g.split_keys),
                                         *spec.details(sheet)]))
        out.append(Drawn(file_name(spec.name, suffix), sheet.fig, settle(cap), details))
    return out, ""


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


EXACT_STYLES = ["-", "--", ":", "-."]


def exact_keys(g, follows):
    """The conditions that follow the line columns ``follows`` (kernel=... with the map)."""
    return [k for k, a in g.dependents.items() if a in follows]


def exact_groups(g, exact, follows):
    """Exact KRR depends on the kernel and the data, not on D or the map: one line per
    condition that follows the figure's lines (``follows``: those line columns), never
    pooled over them.  Yields (key tuple, its label, line style, rows)."""
    keys = exact_keys(g, follows)
    groups = exact.groupby(keys, dropna=False) if keys else [((), exact)]
    for i, (vals, rows) in enumerate(groups):
        vals = vals if isinstance(vals, tuple) else (vals,)
        yield vals, g.label(dict(zip(keys, vals))), EXACT_STYLES[i % len(EXACT_STYLES)], rows



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
        obs = a[(a.metric == "rel_fro_error") & a.value.notna()]
        # the x axis: D, or the number of frequencies where the sweep counts them (D_unit)
        x = "n_freq" if ctx.config_values(obs.run_id, "D_unit", "output") == \
            {"frequencies"} else "D"
        if obs.empty or obs[x].nunique() < 2:
            return "approximation error vs D: needs rel_fro_error records at >= 2 values of D"
        return Selection(rows=obs, x=x, exclude=("D",) if x == "n_freq" else (),
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
        ax.set(title=label, xlabel="D (output dimension)" if x == "D" else
               "frequencies n_freq (D_unit=frequencies; D per map: n_freq or 2 n_freq)",
               ylabel="relative Frobenius error")
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
                + (" x: the number of frequencies (D_unit=frequencies)."
                   if sel.x == "n_freq" else "") + each)

    def pooled(self, sheet):
        return "Each point: " + pooled_text(sheet.sel.rows, _by(sheet.g)) + "."


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
            t = tt.groupby("D").value.median().sort_index()
            (l2,) = bot.plot(t.index, t.values, linestyle=info.style, color=info.color,
                             marker=".", ms=4, lw=1.4)
            l2.set_gid("tightness:" + m)
            if (t < 1).any():
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
                "Bottom: tightness of the uniform bounds (bound / observed); Hoeffding and "
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
        fam = getattr(FEATURE_MAPS.installed(r0.features), "variance", None)
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
# learning
# --------------------------------------------------------------------------
def learning_rows(df, metrics):
    return df[(df.measurement == "learning") & df.metric.isin(metrics)]


class LearningVsD(Figure):
    """Test error of the model on D features against D, exact kernel ridge as a red line."""

    name, title = "learning_vs_D", "Test error vs D"
    measurements, x, lines, row_cols = ("learning",), "D", ("features", "method"), ("metric",)
    no_panel = "learning vs D: no panel has learning records at >= 2 values of D"

    def select(self, ctx):
        lr = learning_rows(ctx.df, ["test_error_rate", "test_rel_rmse"])
        feat = lr[(lr.method != "exact_krr") & lr.value.notna()]
        if feat.empty or feat.D.nunique() < 2:
            return "learning vs D: needs learning records at >= 2 values of D"
        return Selection(rows=feat, exact=lr[lr.method == "exact_krr"],
                         colors=colors_for(set(zip(feat.features, feat.method))))

    def panel(self, sheet, axs, label, keys, rows):
        (ax,), sel, g = axs, sheet.sel, sheet.g
        metric = rows.metric.iloc[0]
        for (f, m), grp in rows.groupby(["features", "method"]):
            band(ax, grp, "D", label=f"{g.name('features', f)} + {m}", color=sel.colors[(f, m)],
                 gid=f"observed:{metric}:{f}+{m}")
        ex = sel.exact[sel.exact.run_id.isin(rows.run_id) & (sel.exact.metric == metric)]
        for _, text, ls, exg in exact_groups(g, ex, self.lines):
            per_seed = exg.dropna(subset=["value"]).groupby("seed").value.median()
            if per_seed.empty:
                sheet.notes += sorted(set(exg.note.dropna()) - set(sheet.notes))
                continue
            if per_seed.nunique() > 1:
                ax.axhspan(per_seed.min(), per_seed.max(), color="tab:red", alpha=0.18, lw=0,
                           gid=BAND_GID)
            exl = ax.axhline(per_seed.median(), color="tab:red", lw=1.2, ls=ls)
            exl.set_gid("exact_krr" + (f":{text}" if text else ""))
            sheet.exact.setdefault(text, ls)
        ax.set(title=label, xlabel="D (output dimension)", ylabel=METRIC_LABEL[metric])
        log_axis(ax, "x", sorted(rows.D.unique()))

    def handles(self, sheet):
        colors, g, drawn = sheet.sel.colors, sheet.g, sheet.rows
        present = set(zip(drawn.features, drawn.method))
        out = [proxy(color=colors[k], marker="o", ms=3.5,
                     label=f"{g.name('features', k[0])} + {k[1]}")
               for k in sorted(colors, key=str) if k in present]
        return out + [proxy(color="tab:red", lw=1.2, ls=ls, label="exact kernel ridge"
                            + (f", {text}" if text else "") + f" ({center_words()})")
                      for text, ls in sheet.exact.items()]

    def describe(self, sheet):
        keys = exact_keys(sheet.g, self.lines)
        return (f"Test error of the model on D random features ({center_words()}) and of exact "
                "kernel ridge (red), which does not depend on D or the map: its line pools the "
                "exact results of the panel's runs, identical per seed"
                + (f"; one red line per {', '.join(keys)} (it follows the map here)"
                   if keys else "") + ".")

    def details(self, sheet):
        return [sheet.g.dropped_text(), ("Exact kernel ridge not drawn where it was "
                                         + "; ".join(sorted(sheet.notes)) + ".")
                if sheet.notes else ""]


def pd_empty():
    import pandas as pd

    return pd.Series(dtype=float)


def crossover(n, t_feat, t_exact):
    """n_train where the exact time first exceeds the feature model's (log-linear
    interpolation between the two swept sizes around the sign change), or None."""
    n, t_feat, t_exact = (np.asarray(a, float) for a in (n, t_feat, t_exact))
    r = np.log(t_exact) - np.log(t_feat)
    for i in range(1, len(n)):
        if r[i - 1] < 0 <= r[i]:
            f = -r[i - 1] / (r[i] - r[i - 1])
            return float(np.exp(np.log(n[i - 1]) + f * (np.log(n[i]) - np.log(n[i - 1]))))
    return None


class TrainTime(Figure):
    """Train time of the model on features and of exact kernel ridge against n_train,
    with the crossover where exact kernel ridge becomes slower."""

    name, title = "train_time_vs_n", "Train time: model on random features vs exact kernel ridge"
    measurements, x, lines = ("learning",), "n_train", ("D", "features", "method")
    size = dict(w=4.6, h=3.4)
    no_panel = "train time vs n_train: no panel has train times at >= 2 values of n_train"

    def select(self, ctx):
        t = learning_rows(ctx.df, ["train_time_s"])
        t = t[t.value.notna()]
        feat, ex = t[t.method != "exact_krr"], t[t.method == "exact_krr"]
        if feat.empty or ex.empty or feat.n_train.nunique() < 2:
            return ("train time vs n_train: needs train_time_s of exact KRR and a feature "
                    "model at >= 2 values of n_train")
        return Selection(rows=feat, exact=ex,
                         colors=colors_for(set(zip(feat.D, feat.features, feat.method))))

    def panel(self, sheet, axs, label, keys, rows):
        (ax,), sel, g = axs, sheet.sel, sheet.g
        exact = {}
        for vals, text, ls, eg in exact_groups(g, sel.exact[sel.exact.run_id.isin(rows.run_id)],
                                               self.lines):
            e = eg.groupby("n_train").value.median().sort_index()
            (el,) = ax.plot(e.index, e.values, marker="o", color="k", ms=4, lw=1.6, ls=ls)
            el.set_gid("exact_krr" + (f":{text}" if text else ""))
            # the solver changes along the line (model.exact_solver=auto): cg points are
            # squares, never mistaken for a Cholesky fit
            cg_n = sorted(set(eg[eg.note.fillna("").str.startswith(CG_TRAIN_NOTE)].n_train))
            if cg_n:
                (cl,) = ax.plot(cg_n, e[cg_n].values, ls="none", marker="s", ms=6,
                                mfc="white", mec="k", mew=1.3)
                cl.set_gid("exact_krr_cg" + (f":{text}" if text else ""))
                sheet.cg = True
            exact[vals] = e
            sheet.exact.setdefault(text, ls)
        follows = exact_keys(g, self.lines)
        cross = []
        for (D, f, m), grp in rows.groupby(["D", "features", "method"]):
            e = exact.get(tuple(grp[k].iloc[0] for k in follows), pd_empty())
            s = grp.groupby("n_train").value.median().sort_index()
            (ln,) = ax.plot(s.index, s.values, "-o", ms=3.5, color=sel.colors[(D, f, m)])
            ln.set_gid(f"observed:train_time_s:D={fmt(D)}")
            common = s.index.intersection(e.index)
            x = crossover(np.asarray(common, float), s[common].values, e[common].values)
            if x is not None:
                ax.axvline(x, color=ln.get_color(), lw=0.9, ls=":")
                cross.append(f"D={fmt(D)}: {x:.0f}")
            elif len(common) and (s[common].values < e[common].values).all():
                cross.append(f"D={fmt(D)}: faster at every n_train")
            elif len(common) and (s[common].values >= e[common].values).all():
                cross.append(f"D={fmt(D)}: slower at every n_train")
        if cross:
            sheet.notes.append(f"{label or 'all'}: " + ", ".join(cross))
        ax.set(title=(label + "\n" if label else "") + "crossover n_train: "
               + ("; ".join(cross) if cross else "none in range"),
               xlabel="n_train (training rows)", ylabel="train time (s)")
        log_axis(ax, "x", sorted(rows.n_train.unique()))
        log_axis(ax, "y")

    def handles(self, sheet):
        colors, drawn = sheet.sel.colors, sheet.rows
        present = set(zip(drawn.D, drawn.features, drawn.method))
        out = [proxy(color="k", marker="o", ms=4, ls=ls, label="exact kernel ridge"
                     + (f", {text}" if text else ""))
               for text, ls in sheet.exact.items()]
        if sheet.cg:
            out.append(proxy(color="k", marker="s", ms=6, mfc="white", ls="none",
                             label="exact kernel ridge by conjugate gradients (no Gram)"))
        out += [proxy(color=colors[k], marker="o", ms=3.5, label=f"{k[1]} + {k[2]}, D={fmt(k[0])}")
                for k in sorted((k for k in colors if k in present), key=str)]
        return out + [proxy(color="0.4", ls=":", label="crossover (log-linear interpolation)")]

    def describe(self, sheet):
        return ("Training time (map + accumulate + solve, or Gram + Cholesky + solve) vs the "
                "number of training rows, log-log; dotted: where exact kernel ridge becomes "
                "slower. Exact kernel ridge does not depend on D or the map: its line is the "
                "median over the panel's runs of every D and map (one fit, shared by the runs "
                "of a sweep)." + (
                    " Its solver changes along the line: circles are the Cholesky "
                    "factorisation of the n x n Gram, squares conjugate gradients with a "
                    "Nystrom preconditioner, K never stored (preconditioner + iterations to "
                    "model.cg_tol; the iterations are in the learning table)."
                    if sheet.cg else ""))

    def pooled(self, sheet):
        return ("Each point of a feature model: " + pooled_text(sheet.rows, _by(sheet.g),
                                                                 band=False) + ".")

    def extra(self, sheet):
        return [("Crossovers: " + "; ".join(sheet.notes) + ".") if sheet.notes else ""]


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
                                             _by(sheet.g)) + ".")

    def details(self, sheet):
        return [sheet.g.dropped_text(), na_text(sheet.sel.b, sheet.rows.run_id)]


# --------------------------------------------------------------------------
# maps side by side
# --------------------------------------------------------------------------
MAP_METRICS = [("approximation", "rel_fro_error", None, "Gram error ||K - ZZ'||_F / ||K||_F"),
               ("bounds", "eps_empirical", "empirical", "sup error, (1-delta) quantile"),
               ("learning", "test_error_rate", "feature", "test error rate (model on features)"),
               ("learning", "test_rel_rmse", "feature", "test RMSE / std (model on features)"),
               ("timing", "map_transform_time_s", None, "transform time, training set (s)")]


def _panel_rank(text, order):
    for i, o in enumerate(order):
        if text.startswith(o):
            return (i, text)
    return (len(order), text)


class Maps(Figure):
    """Every map's value of each metric side by side (one panel per metric), at one D."""

    name, title = "maps", "Feature maps side by side"
    x, row_cols, max_panels, legend_ncol, min_x = "features", ("quantity",), 6, 2, 0
    share_x = share_y = False  # x: the maps by name; each panel its own metric

    def select(self, ctx):
        import pandas as pd

        df = ctx.df
        parts = []
        for meas, metric, method, label in MAP_METRICS:
            sel = df[(df.measurement == meas) & (df.metric == metric) & df.dist.isna()
                     & df.value.notna()]
            if method == "empirical":
                sel = empirical_sup(df, ctx.delta)
                sel = sel.assign(quantity=[f"{label}, delta={fmt(v)}" for v in sel.delta])
            elif method == "feature":
                sel = sel[sel.method != "exact_krr"].assign(quantity=label)
            else:
                sel = sel.assign(quantity=label)
            if sel.features.nunique() >= 2:
                parts.append(sel)
        if not parts:
            return "maps side by side: needs a metric of >= 2 feature maps"
        rows = pd.concat(parts, ignore_index=True)
        if rows.D.nunique() > 1:
            return ("maps side by side: D varies in this sweep (the maps are compared at each "
                    "D by error_vs_D, bounds_vs_D and learning_vs_D)")
        return Selection(rows=rows, measurements=sorted(rows.measurement.unique()))

    def arrange(self, panels):
        order = [lab for _, _, _, lab in MAP_METRICS]
        return sorted(panels, key=lambda p: _panel_rank(p[2].quantity.iloc[0], order))

    def layout(self, sheet):
        return dict(ncols=min(2, len(sheet.panels)), w=5.4, h=3.0)

    def panel(self, sheet, axs, label, keys, sel):
        (ax,), g = axs, sheet.g
        med = sel.groupby("features").value.agg(lambda v: summary(v)[0]).sort_values()
        pos = {f: i for i, f in enumerate(med.index)}
        ax.scatter(sel.features.map(pos), sel.value, s=14, alpha=0.6, color="tab:blue",
                   label="one run (seed)")
        ax.scatter(range(len(med)), med.values, marker="_", s=320, color="k",
                   label=center_words(band=False), gid="median")
        ax.set_xticks(range(len(med)), [g.name("features", f) for f in med.index],
                      rotation=30, ha="right")
        ax.grid(True, axis="x", alpha=0)
        ax.set(title=label.replace("quantity=", ""))
        ax.set_yscale("log")
        log_axis(ax, "y")

    def handles(self, sheet):
        return [proxy(color="tab:blue", marker="o", ls="none", alpha=0.6, label="one run (seed)"),
                proxy(color="k", marker="_", ms=14, ls="none", label=center_words(band=False))]

    def describe(self, sheet):
        return (f"Each panel one metric, maps sorted by their {center_words(False)[:4]}; "
                "learning panels show the model on features (exact kernel ridge is in the "
                "learning table).")

    def pooled(self, sheet):
        return ("Each bar: " + pooled_text(sheet.rows, _by(sheet.g), what="bar", band=False)
                + ".")

    def details(self, sheet):
        return []


# --------------------------------------------------------------------------
# speed
# --------------------------------------------------------------------------
def _ours(impl):
    """rffbench's own implementation (not numpy's reference nor a scikit-learn peer)?"""
    return impl != "numpy" and not impl.startswith("sklearn")


def _impl(method):
    return method.split("/", 1)[1] if "/" in method else method


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
        return Selection(rows=t, colors=colors_for(t.method.unique()))

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
        ax.set(title=label, xlabel="N (rows transformed)", ylabel="transform time (s)")
        log_axis(ax, "x", sorted(rows.n_train.unique()))
        log_axis(ax, "y")

    def describe(self, sheet):
        return ("Median over interleaved warm repeats of each transform; dashed: plain numpy "
                "and scikit-learn.")

    def pooled(self, sheet):
        return "Each point: " + pooled_text(sheet.rows, _by(sheet.g), band=False) + "."


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
            vals = []
            for key, v in med.items():
                yy = sheet.ypos[key]
                if metric == "speedup_vs_sklearn":
                    ax.barh(yy, v - 1.0, left=1.0, height=0.85, color=sheet.sel.colors[key[-1]])
                else:
                    ax.barh(yy, v, height=0.85, color=sheet.sel.colors[key[-1]])
                ax.text(v, yy, f" {v:.3g}" if v >= 1 or metric != "speedup_vs_sklearn"
                        else f"{v:.3g} ", va="center", fontsize=7,
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
                "time (medians of interleaved warm repeats).")

    def pooled(self, sheet):
        return ("Each bar: " + pooled_text(sheet.rows, [*sheet.g.keys, "task", "n_train", "d",
                                                        "D", "impl", "metric"], what="bar",
                                           band=False) + ".")

    def details(self, sheet):
        return []


# --------------------------------------------------------------------------
# the figures, by name
# --------------------------------------------------------------------------
fig_error_vs_D = ErrorVsD()
fig_bounds = BoundsVsD()
fig_tail = BoundsTail()
fig_dimension = Dimension()
fig_learning_vs_D = LearningVsD()
fig_train_time = TrainTime()
fig_maps = Maps()
fig_speed_vs_size = SpeedVsSize()
fig_speed_bars = SpeedBars()

#: figures that compare measurements (each measurement's own come from its class)
CROSS_FIGURES = {"maps": fig_maps}


def all_figures():
    """{name: figure} of every figure: each registered measurement's
    (:meth:`rffbench.measure.Measurement.figures`, in the registry's order), then the
    figures across measurements.  A figure is called with the FigContext."""
    from ..measure import measurement_classes

    out = {}
    for cls in measurement_classes().values():
        out.update(cls().figures())
    out.update(CROSS_FIGURES)
    return out


__all__ = ["all_figures", "draw", "Figure", "FigContext", "Drawn", "STYLE", "crossover",
           "fmt_list"]
