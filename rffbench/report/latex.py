"""The report's tables as LaTeX files a paper takes as they are (``rffbench-report SWEEP
--tables latex``): one ``latex/NAME.tex`` per table, booktabs rules, each value with its
interval in one stated form, bold where it is the best of its comparable rows or not
significantly different from the best.

Comparable rows are the rows of a table that differ only in the map (``features`` and its
own parameters): the same kernel, dataset, metric, ...  In each value column the best is
the lowest centre for a quantity where lower is better (errors, times) and the highest for
one where higher is better (accuracies, speed-ups, fractions of a limit); a row whose
values are not significantly different from the best's by Welch's t test (two-sided, at
the report's level) is bold too.  A cell with fewer than two seeds can only tie by being
equal.  A table without a map column, or a metric with no better direction, has no bold,
and its caption says so.

Numbers are written plain (``0.0123``) or, with ``numbers="siunitx"``, as ``\\num{0.0123}``
(the document then needs ``\\usepackage{siunitx}``, version 3: a bold cell's numbers carry
the options that keep them bold); a document needs ``\\usepackage{booktabs}``.
"""
from __future__ import annotations

import re

import numpy as np

from .grouping import INTERVAL, summary, value_words

#: LaTeX number forms (--latex-numbers)
NUMBER_FORMS = ("plain", "siunitx")
#: words in a metric's name that make lower better / higher better
LOWER = ("error", "time", "rmse", "mse", "w2", "residual", "iterations", "bytes", "limit_time")
HIGHER = ("accuracy", "speedup", "fraction_of_limit", "gflops")
#: the columns that name a map (its rows are what bold compares)
MAP_COLUMN = "features"
_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}"}


def escape(text):
    """``text`` with LaTeX's special characters escaped."""
    return re.sub(r"[\\&%$#_{}~^]", lambda m: _SPECIAL[m.group(0)], str(text))


def direction(metric):
    """-1 where lower is better, +1 where higher is, 0 where neither is known."""
    m = str(metric).lower()
    if any(w in m for w in HIGHER):
        return 1
    return -1 if any(w in m for w in LOWER) else 0


#: siunitx (v3) keeps the surrounding bold only when told to
_BOLD_NUM = "[reset-text-series=false, text-series-to-math=true]"


def _number(v, numbers, bold):
    text = f"{v:.4g}"
    if numbers != "siunitx":
        return text
    return f"\\num{_BOLD_NUM if bold else ''}{{{text}}}"


def value_text(values, numbers="plain", bold=False):
    """A table value over the seeds: the summary's centre [low, high] (no bracket where they
    are equal), n/a where there is none; in LaTeX's number form and bold when asked."""
    c, lo, hi = summary(values)
    if c != c:  # NaN: no value
        return "n/a"
    text = _number(c, numbers, bold)
    if lo != hi:
        text += f" [{_number(lo, numbers, bold)}, {_number(hi, numbers, bold)}]"
    return f"\\textbf{{{text}}}" if bold else text


def same(a, b, level):
    """Whether two cells' seed values are not significantly different (Welch's t, two-sided
    at ``level``): with fewer than 2 values on a side, only equal means are."""
    from scipy.stats import ttest_ind

    if min(a.size, b.size) < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return bool(np.isclose(a.mean(), b.mean(), rtol=1e-12, atol=0))
    return bool(ttest_ind(a, b, equal_var=False).pvalue > 1 - level)


def bold_cells(table, level):
    """{(row position, column name)} of the cells set in bold (module docs)."""
    frame, values = table.frame, table.values
    keys = list(frame.columns[:table.n_keys])
    if values is None or MAP_COLUMN not in keys:
        return set()
    group_keys = [k for k in keys if k != MAP_COLUMN and not k.startswith(MAP_COLUMN + ".")]
    metric_of = frame["metric"] if "metric" in frame else None
    out = set()
    groups = frame.groupby(group_keys, sort=False).indices if group_keys else \
        {(): np.arange(len(frame))}
    for idx in groups.values():
        for col in frame.columns[table.n_keys:]:
            cells = [(i, values[col].iloc[i]) for i in idx
                     if values[col].iloc[i] is not None and len(values[col].iloc[i])]
            if len(cells) < 2:
                continue
            sign = direction(metric_of.iloc[cells[0][0]]) if metric_of is not None else 0
            if not sign:
                continue
            best = max(cells, key=lambda c: sign * summary(c[1])[0])
            out |= {(i, col) for i, v in cells if i == best[0] or same(v, best[1], level)}
    return out


def table_tex(table, numbers="plain"):
    """The LaTeX of one report table (module docs)."""
    if numbers not in NUMBER_FORMS:
        raise ValueError(f"numbers={numbers!r}: use one of {', '.join(NUMBER_FORMS)}")
    method, level, _ = INTERVAL.get()
    frame, values = table.frame, table.values
    bold = bold_cells(table, level)
    value_cols = list(frame.columns[table.n_keys:])
    lines = [r"\begin{table}", r"\centering",
             r"\begin{tabular}{" + "l" * table.n_keys + "r" * len(value_cols) + "}",
             r"\toprule",
             " & ".join(escape(c) for c in frame.columns) + r" \\", r"\midrule"]
    for pos in range(len(frame)):
        row = [escape(frame.iloc[pos, j]) for j in range(table.n_keys)]
        for col in value_cols:
            v = None if values is None else values[col].iloc[pos]
            row.append(escape(frame[col].iloc[pos]) if v is None or not len(v)
                       else value_text(v, numbers, (pos, col) in bold))
        lines.append(" & ".join(row) + r" \\")
    rule = (f"Bold: the best of the rows that differ only in the map, per column (lower is "
            f"better for errors and times, higher for accuracies and speed-ups), and every "
            f"value not significantly different from it (Welch's t, two-sided, "
            f"{1 - level:.0%} level)." if bold or MAP_COLUMN in frame.columns[:table.n_keys]
            else "No bold: the table compares no maps.")
    form = f"Each value: {value_words()}."
    caption = f"{table.title}. {table.caption} {form} {rule}"
    lines += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{escape(caption)}}}",
              f"\\label{{tab:{escape(table.name)}}}", r"\end{table}", ""]
    return "\n".join(lines)


def write_latex(tables, folder, numbers="plain"):
    """Each table as ``folder/NAME.tex``; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for t in tables:
        path = folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', t.name)}.tex"
        path.write_text(table_tex(t, numbers))
        paths.append(path)
    return paths


__all__ = ["NUMBER_FORMS", "bold_cells", "direction", "escape", "same", "table_tex",
           "value_text", "write_latex"]
