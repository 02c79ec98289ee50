"""Summary tables: one row per combination of the conditions that vary, summarised over seeds.

Every table follows the grouping rule of :mod:`rffbench.report.grouping`:
its rows are the varying conditions (and the quantity shown), its columns
the swept axis or the quantities, each cell the median (or, with
``report.center=mean``, the mean and its interval) over the seeds of
the runs that share everything else; the caption says how many runs a cell
pools.  Cells pooling fewer runs than the others say ``(n=k)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .grouping import CENTER, fmt, pooled_text, summary


@dataclass
class Table:
    name: str
    title: str
    caption: str
    frame: object  # DataFrame of strings: n_keys row-label columns, then the values
    n_keys: int = 0
    #: the seeds' values behind each value cell (a DataFrame like ``frame``: a float array
    #: per cell, None where empty), for tables that test their cells (LaTeX's bold); None:
    #: not kept
    values: object = None


@dataclass
class Section:
    """A section of the report page (a paper's reproduction, a formula check): its text,
    tables, figures and CSV files."""

    name: str  # anchor and file stem
    title: str
    summary: str  # one line
    text: list = field(default_factory=list)  # paragraphs
    tables: list = field(default_factory=list)  # tables.Table
    figures: list = field(default_factory=list)  # figures.Drawn
    files: list = field(default_factory=list)  # (name, DataFrame) written as CSV


def make_table(name, title, what, g, rows, row_keys, col_keys):
    """A :class:`Table` of ``rows``: caption (what was pooled, rows, columns) and cells."""
    rk = [k for k in dict.fromkeys(row_keys) if k in rows.columns]
    frame, values = _pivots(rows, rk, col_keys)
    return Table(name, title, _caption(what, g, rows, rk, col_keys), frame, len(rk), values)


def _cell(stats, n, uniform):
    """A cell's text: its centre, with report.center=mean its interval in brackets (none
    with one seed), and (n=k) where it pools fewer runs than the others."""
    v, lo, hi = stats
    if v is None or (isinstance(v, float) and math.isnan(v)):
        text = "n/a"
    else:
        text = f"{v:.4g}" + (f" [{lo:.4g}, {hi:.4g}]" if CENTER.get() == "mean" and lo != hi
                             else "")
    return text if uniform else f"{text} (n={n})"


def pivot(rows, row_keys, col_keys):
    """Formatted table: the seeds' summary of ``value`` over the runs of each cell (the
    median, or the mean and its interval with report.center=mean); the row keys are its
    leading columns."""
    return _pivots(rows, row_keys, col_keys)[0]


def _pivots(rows, row_keys, col_keys):
    """(:func:`pivot`'s frame, the same frame with each value cell's seed values: a float
    array, None where there is no cell)."""
    import numpy as np
    import pandas as pd

    row_keys = [k for k in dict.fromkeys(row_keys) if k in rows.columns]
    keys = row_keys + list(col_keys)
    if keys:
        grp = rows.groupby(keys, dropna=False, sort=True)
        raw = grp.value.agg(lambda v: np.asarray(v.dropna(), dtype=float))
        n = grp.run_id.nunique()
    else:
        raw = pd.Series([np.asarray(rows.value.dropna(), dtype=float)], index=[0])
        n = pd.Series([rows.run_id.nunique()], index=[0])
    uniform = n.nunique() <= 1
    cells = pd.Series([_cell(summary(v), k, uniform) for v, k in zip(raw.values, n.values)],
                      index=raw.index)
    return _shape(cells, row_keys, col_keys, ""), _shape(raw, row_keys, col_keys, None)


def _shape(cells, row_keys, col_keys, empty):
    """A Series of cells by (row keys + column keys) as the table's frame: row-key columns,
    then a column per combination of the column keys (``empty`` where there is no cell)."""
    if col_keys:
        frame = cells.unstack(list(col_keys))
        frame = frame.astype(object).where(frame.notna(), empty) if empty is None \
            else frame.fillna(empty)
        frame.columns = [" / ".join(fmt(c) for c in (col if isinstance(col, tuple) else (col,)))
                         for col in frame.columns]
        if len(col_keys) == 1:
            frame.columns = [f"{col_keys[0]}={c}" for c in frame.columns]
    else:
        frame = cells.to_frame("value")
    if not row_keys:
        return frame.reset_index(drop=True)
    frame = frame.reset_index()
    for k in row_keys:
        frame[k] = frame[k].map(fmt)
    return frame


def row_keys(g, last=()):
    """The varying conditions (outermost first), then the quantities named in ``last``."""
    from .grouping import key_order

    conds = sorted({k for k in [*g.keys, *g.lines, *g.dependents] if k not in last}, key=key_order)
    return conds + list(last)


def _caption(what, g, rows, row_keys, col_keys):
    rk = row_keys
    parts = [what, "Each cell: " + pooled_text(rows, rk + list(col_keys), what="cell",
                                               band=False) + "."]
    parts.append(f"Rows: {' x '.join(rk) if rk else 'all runs'}"
                 + (f"; columns: {' x '.join(col_keys)}." if col_keys else "."))
    fixed = ", ".join(f"{k}={fmt(v)}" for k, v in g.fixed.items())
    if fixed:
        parts.append(f"Same for every run: {fixed}.")
    if rows.value.isna().any():
        parts.append("n/a: recorded without a value (not applicable or not available); the "
                     "reason is in the note column of results.csv.")
    return " ".join(parts)


__all__ = ["Table", "make_table", "pivot", "row_keys"]
