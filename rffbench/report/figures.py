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

import functools
import math
import textwrap
from dataclasses import dataclass

import numpy as np

from .grouping import Grouping, center_words, fmt, fmt_list, pooled_text, summary

METRIC_LABEL = {"test_error_rate": "test error rate", "test_accuracy": "test accuracy",
                "test_rel_rmse": "test RMSE / std(y_test)",
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
    from matplotlib.ticker import (
        FixedLocator,
        FuncFormatter,
        LogLocator,
        MaxNLocator,
        NullFormatter,
        NullLocator,
    )

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


@functools.lru_cache(maxsize=None)
def _range_ticks():
    """The locator class of ticks chosen for a range, not swept values (chosen again when
    the range changes); made on first use (matplotlib is imported lazily)."""
    from matplotlib.ticker import FixedLocator

    class RangeTicks(FixedLocator):
        """Ticks chosen for a range (not swept values)."""

    return RangeTicks


def _auto_locators():
    """The locators :func:`log_axis` chooses for a range (not the swept values)."""
    from matplotlib.ticker import LogLocator

    return LogLocator, _range_ticks()


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
        if len(stats) == 1:  # a band of one x is no area: its interval as a bar
            ax.vlines(stats.index, stats["lo"], stats["hi"], color=ln.get_color(),
                      alpha=0.5, lw=3, gid=BAND_GID)
    return ln


def map_variants(rows):
    """``(rows, own)``: the rows with ``features`` naming each map with its own parameters
    that vary among its rows (``nystrom (landmarks=kmeans)``) and the columns of the
    parameters that vary at all: a line or bar per variant of a map, never a panel per value
    or one line pooled over them.  Rows without a varying parameter are returned as they
    are."""
    import pandas as pd

    own = [c for c in rows.columns if c.startswith("features.")
           and rows[c].nunique(dropna=False) > 1]
    if not own:
        return rows, []
    # a parameter names a map's variants only where it varies among that map's rows (qmc's
    # sequence beside orf's layout: each constant for its map, no variant to tell apart)
    per_map = rows.groupby("features")[own].nunique(dropna=False)
    names = [f + "".join(f" ({c.split('.')[-1]}={fmt(v)})" for c, v in zip(own, vals)
                         if not pd.isna(v) and per_map.at[f, c] > 1)
             for f, *vals in zip(rows.features, *(rows[c] for c in own))]
    return rows.assign(features=names), own


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
        n = min(ncol, len(handles), fits)
        # the legend's rows are added to the figure's height: the panels keep theirs (a
        # ten-row legend squeezed a one-row figure's panels to slivers)
        fig.set_figheight(fig.get_figheight() + LEGEND_ROW_IN * -(-len(handles) // n))
        fig.legend(handles, [h.get_label() for h in handles], loc="outside lower center",
                   ncol=n, frameon=False)


#: the height of one row of a figure's legend (inches, at legend.fontsize 8)
LEGEND_ROW_IN = 0.2


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
    across the file, so that one value lines up down a column; unless some panels' x
    ranges do not overlap at all, which keep their own) and the y of the panels of
    one row that show the same quantity (same label); a linear y axis spans at least
    MIN_REL_SPAN of its largest value.  Fixed ticks (the swept values) become their union;
    automatic log ticks are chosen again for the final ranges (:func:`retick`, also when
    nothing is shared)."""
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.has_data()]
    if x:
        for scale in ("linear", "log"):
            group = [ax for ax in axes if ax.get_xscale() == scale]
            lims = [sorted(ax.get_xlim()) for ax in group]
            # panels on ranges that do not overlap (the swept sizes of different datasets)
            # keep their own: a shared range would squeeze each into a corner
            if lims and max(lo for lo, _ in lims) <= min(hi for _, hi in lims):
                _union(group, "x")
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
    retick(fig)


def retick(fig):
    """Choose the automatic log ticks again for each axis's final range (a panel's
    limits are final only once every element is drawn and the ranges are shared)."""
    auto = _auto_locators()
    for ax in fig.axes:
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if isinstance(axis.get_major_locator(), auto) and \
                    (ax.get_xscale() if which == "x" else ax.get_yscale()) == "log":
                log_axis(ax, which)


def _union(axes, which):
    """One range for ``axes`` (x or y), their fixed (swept) ticks the union of theirs."""
    from matplotlib.ticker import FixedLocator

    if not axes:
        return
    get = [(ax.get_xlim if which == "x" else ax.get_ylim) for ax in axes]
    lims = [sorted(g()) for g in get]
    lo, hi = min(a for a, _ in lims), max(b for _, b in lims)
    axis = [ax.xaxis if which == "x" else ax.yaxis for ax in axes]
    auto = _auto_locators()
    fixed = sorted({float(v) for a in axis for loc in [a.get_major_locator()]
                    if isinstance(loc, FixedLocator) and not isinstance(loc, auto)
                    for v in loc.locs})
    for ax, a in zip(axes, axis):
        inverted = (ax.xaxis_inverted() if which == "x" else ax.yaxis_inverted())
        (ax.set_xlim if which == "x" else ax.set_ylim)((hi, lo) if inverted else (lo, hi))
        loc = a.get_major_locator()
        if isinstance(loc, FixedLocator) and not isinstance(loc, auto) and fixed:
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


def grouped_by(g):
    """The columns a figure's grouping splits its rows by: its keys, lines and x."""
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


def size_axis(ctx, rows):
    """(column, label) of a figure's size axis: the frequencies where the sweep counts them
    (``D_unit=frequencies``: a map of [cos, sin] pairs has D = 2 n_freq, so D would put two
    maps' same sizes at two places), else the output dimension D (where a map's output
    columns are not its D, as binning's bins, the label says so)."""
    if ctx.config_values(rows.run_id, "D_unit", "output") == {"frequencies"}:
        return "n_freq", "n_freq (frequencies)"
    other = []  # maps whose output columns are not D (binning: D grids, one column per bin)
    if "n_columns" in rows.columns:
        odd = rows.n_columns.notna() & (rows.n_columns != rows.D)
        other = sorted(set(rows.features[odd]))
    return "D", "D (output dimension" + (f"; {', '.join(other)}: n_components, not its "
                                          "output columns" if other else "") + ")"


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
    #: panel keys that, when they vary, always split the figure into files (one per value)
    split_first: tuple = ()
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
        return "Each point: " + pooled_text(sheet.rows, grouped_by(sheet.g)) + "."

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
    for suffix, fixed, panels in g.files(spec.max_panels, spec.split_first):
        sheet = Sheet(ctx, sel, g, spec.arrange(panels))
        sheet.fig, axes = spec.new_figure(sheet)
        for axs, (label, keys, rows) in zip(axes, sheet.panels):
            spec.panel(sheet, axs, label, keys, rows)
        share_ranges(sheet.fig, x=spec.share_x, y=spec.share_y)
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


__all__ = ["draw", "Figure", "FigContext", "Drawn", "Selection", "STYLE", "band",
           "log_axis", "share_ranges", "fmt_list"]
