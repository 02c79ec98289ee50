"""Summary tables: one row per combination of the conditions that vary, summarised over seeds.

Every table follows the grouping rule of :mod:`rffbench.report.grouping`:
its rows are the varying conditions (and the quantity shown), its columns
the swept axis or the quantities, each cell the median (or, with
``report.center=mean``, the mean) over the seeds of
the runs that share everything else; the caption says how many runs a cell
pools.  Cells pooling fewer runs than the others say ``(n=k)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..theory import BOUNDS, UNIFORM_METHODS
from .grouping import Grouping, fmt, pooled_text, summary


@dataclass
class Table:
    name: str
    title: str
    caption: str
    frame: object  # DataFrame of strings: n_keys row-label columns, then the values
    n_keys: int = 0


def make_table(name, title, what, g, rows, row_keys, col_keys):
    """A :class:`Table` of ``rows``: caption (what was pooled, rows, columns) and cells."""
    rk = [k for k in dict.fromkeys(row_keys) if k in rows.columns]
    return Table(name, title, _caption(what, g, rows, rk, col_keys), pivot(rows, rk, col_keys),
                 len(rk))


def _cell(v, n, uniform):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        text = "n/a"
    else:
        text = f"{v:.4g}"
    return text if uniform else f"{text} (n={n})"


def pivot(rows, row_keys, col_keys):
    """Formatted table: the seeds' summary of ``value`` over the runs of each cell (the
    median, or the mean with report.center=mean); the row keys are its leading columns."""
    import pandas as pd

    row_keys = [k for k in dict.fromkeys(row_keys) if k in rows.columns]
    keys = row_keys + list(col_keys)
    if keys:
        grp = rows.groupby(keys, dropna=False, sort=True)
        med, n = grp.value.agg(lambda v: summary(v)[0]), grp.run_id.nunique()
    else:
        med = pd.Series([summary(rows.value)[0]], index=[0])
        n = pd.Series([rows.run_id.nunique()], index=[0])
    uniform = n.nunique() <= 1
    cells = pd.Series([_cell(v, k, uniform) for v, k in zip(med.values, n.values)],
                      index=med.index)
    if col_keys:
        frame = cells.unstack(list(col_keys)).fillna("")
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


def _row_keys(g, last=()):
    """The varying conditions (outermost first), then the quantities named in ``last``."""
    from .grouping import _order

    conds = sorted({k for k in [*g.keys, *g.lines, *g.dependents] if k not in last}, key=_order)
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


def table_approximation(df, origins):
    a = df[(df.measurement == "approximation")
           & df.metric.isin(["rel_fro_error", "expected_rel_fro_error", "max_abs_error"])]
    if a.empty:
        return None
    g = Grouping(a, origins, ["approximation"], x="D", lines=["features"], row_cols=["metric"])
    cols = ["D"] if a.D.nunique() > 1 else []
    rk = _row_keys(g, last=["metric"])
    return make_table("approximation", "Gram-matrix error (approximation)",
                      "Observed relative Frobenius error, largest entry error, and the exact "
                      "expected relative Frobenius error (theory) of the map.", g, a, rk, cols)


def table_bounds(df, origins):
    b = df[(df.measurement == "bounds") & df.dist.isna()]
    emp = b[(b.metric == "eps_empirical") & (b.method == "empirical")]
    tight = b[(b.metric == "tightness") & b.method.isin(UNIFORM_METHODS) & b.value.notna()]
    if emp.empty:
        return None
    import pandas as pd

    rows = pd.concat([emp.assign(quantity="observed sup error ((1-delta) quantile)"),
                      tight.assign(quantity="tightness " + tight.method.map(lambda m: BOUNDS[m].label))])
    g = Grouping(rows, origins, ["bounds"], x="D", row_cols=["delta", "quantity"])
    cols = ["D"] if rows.D.nunique() > 1 else []
    rk = _row_keys(g, last=["delta", "quantity"])
    return make_table("bounds", "Observed sup error and tightness of the uniform bounds",
                      "The (1-delta) quantile over redraws of the largest error over the "
                      "measurement points, and eps_bound / observed for every uniform bound "
                      "that applies (< 1: violated).", g, rows, rk, cols)


def table_learning(df, origins):
    lr = df[(df.measurement == "learning")
            & df.metric.isin(["test_error_rate", "test_rel_rmse", "train_time_s",
                              "cg_iterations", "cg_residual"])]
    if lr.empty:
        return None
    g = Grouping(lr, origins, ["learning"], lines=["features"], exclude=["method", "metric"])
    rk = _row_keys(g)
    cols = ["metric", "method"]
    return make_table("learning", "Learning: test error and train time",
                      "Test error (classification: error rate; regression: RMSE / std(y_test)) "
                      "and training time of the model on features and of exact kernel ridge "
                      "(exact_krr; it does not depend on D or the map), and where exact KRR was "
                      "solved by conjugate gradients (model.exact_solver) its iterations and "
                      "final relative residual.", g, lr, rk, cols)


def table_speed(df, origins):
    sp = df[(df.measurement == "speed") & df.value.notna()
            & df.metric.isin(["time_s", "speedup_vs_sklearn", "fraction_of_limit"])]
    if sp.empty:
        return []
    sp = sp.assign(task=sp.method.str.split("/").str[0],
                   impl=sp.method.str.split("/", n=1).str[1])
    g = Grouping(sp, origins, ["speed"], exclude=["n_train", "d", "D", "method"])
    rk = _row_keys(g, last=["task", "n_train", "d", "D"])
    out = []
    for metric, title, what in (
            ("time_s", "Speed: time (s)", "Median time of interleaved warm repeats."),
            ("speedup_vs_sklearn", "Speed-up over scikit-learn", "scikit-learn's time / "
             "rffbench's."),
            ("fraction_of_limit", "Fraction of the measured limit", "limit / measured time "
             "(1 = at the limit).")):
        part = sp[sp.metric == metric]
        if part.empty:
            continue
        out.append(make_table(f"speed_{metric}", title, what, g, part, rk, ["impl"]))
    return out


def all_tables(df, origins):
    """Every registered measurement's tables of ``df`` (registry order)."""
    from ..measure import measurement_classes

    out = []
    for cls in measurement_classes().values():
        out += [t for t in cls().tables(df, origins) if t is not None]
    return out


__all__ = ["Table", "all_tables", "pivot"]
