"""One grouping rule for every figure and table (docs/architecture.md, "The report").

A figure or a table never aggregates over a condition that varies in the
data, except ``seed``: the runs that differ only in their seed give the median
and the min-max band, or (``report.center=mean``, as papers that report means)
the mean and its confidence interval (``report.interval``, ``.level``, ``.resamples``:
:mod:`~rffbench.report.intervals`): :func:`summarising` sets which for a report.  Every other
condition that varies among the rows a figure or
table draws becomes a panel, a line, a table row or a separate file.

*Conditions* are the run's configuration keys (``config.json``, flattened:
``kernel.name``, ``dataset.d``, ``measure.bounds.trials``, ...), shown under
their record column where there is one (``kernel``, ``d``, ``n_train``, ...),
plus the threads the run really used and the row-level columns a figure names
(``delta``, ``metric``).  Not conditions: keys that only switch measurements
on or pick what is measured (``*.enabled``, ``measure.speed.parts``, ...), the
settings of measurements a figure does not draw, and the model's settings
outside the learning and speed figures.  Runs without ``config.json``
(written by an older rffbench) are grouped by their identity columns.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from dataclasses import asdict

import numpy as np

from ..compat import FALLBACK_COLUMNS

#: how runs that differ only in their seed are summarised: "median" (min-max band) or
#: "mean" (95% t interval); set for a whole report by :func:`summarising`
CENTER = contextvars.ContextVar("rffbench_report_center", default="median")
#: the interval of report.center=mean: (method, level, resamples), set for a whole report by
#: :func:`summarising`
INTERVAL = contextvars.ContextVar("rffbench_report_interval",
                                  default=("lognormal", 0.95, 2000))
#: run_id -> its flattened config (None: not recorded), for the captions' claims about
#: what a value pools (:func:`pooled_text`); set for a whole report by :func:`summarising`
CONFIGS = contextvars.ContextVar("rffbench_report_configs", default={})


@contextlib.contextmanager
def summarising(center, configs=None, interval=None):
    """Within this block figures and tables summarise seeds by ``center`` (the mean's
    interval: ``interval`` = (method, level, resamples), default INTERVAL's); ``configs``
    (run_id -> flattened config or None) let captions say what pooled runs differ in."""
    token = CENTER.set(center)
    ctoken = CONFIGS.set(configs or {})
    itoken = INTERVAL.set(tuple(interval) if interval else INTERVAL.get())
    try:
        yield
    finally:
        CENTER.reset(token)
        CONFIGS.reset(ctoken)
        INTERVAL.reset(itoken)


def summary(values):
    """(center, low, high) of the values of the runs that differ only in their seed: median,
    min, max; or the mean and its interval (INTERVAL; lognormal falls back to t where a
    value is not positive); low = high = the mean where there are too few values for an
    interval (one seed), so no band is drawn."""
    from .intervals import mean_interval

    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return math.nan, math.nan, math.nan
    if CENTER.get() == "median":
        return float(np.median(v)), float(v.min()), float(v.max())
    method, level, resamples = INTERVAL.get()
    if method == "lognormal" and v.min() <= 0:
        method = "t"
    m, lo, hi = mean_interval(v, method, level, resamples)
    return (m, m, m) if lo is None else (m, lo, hi)


def interval_words(seeds=()):
    """The mean's interval in words (captions): its level, method and exceptions, and its
    measured coverage at these numbers of ``seeds`` (intervals.coverage_words)."""
    method, level, resamples = INTERVAL.get()
    from .intervals import MIN_SEEDS, coverage_words

    name = {"lognormal": "lognormal (Cox) interval, t where a value is not positive",
            "t": "t interval", "percentile": f"percentile bootstrap ({resamples} resamples)",
            "bca": f"BCa bootstrap ({resamples} resamples)",
            "expanded": f"expanded percentile bootstrap ({resamples} resamples)"}[method]
    cover = coverage_words(method, level, seeds)[0]
    return (f"its {level:.0%} {name}; none under {MIN_SEEDS[method]} seeds"
            + (f"; {cover}" if cover else ""))


def value_words():
    """A table value with its bracket, in words: 'the median over the seeds [their min,
    max]' or 'the mean over the seeds [its 95% ... interval ...]'."""
    if CENTER.get() == "median":
        return "the median over the seeds [their min, max]"
    return f"the mean over the seeds [{interval_words()}]"


def center_words(band=True):
    """How a point summarises its seeds, in words (for legends and captions)."""
    if CENTER.get() == "median":
        return "median" + (", band min-max over seeds" if band else " over seeds")
    return "mean" + (f", band {interval_words()}" if band else " over seeds")


#: config key -> the record column that carries the same condition
KEY_COLUMN = {"kernel.name": "kernel", "features.name": "features", "dataset.name": "dataset",
              "dataset.d": "d", "D": "D", "D_n": "D", "dtype": "dtype", "experiment": "experiment",
              "seed": "seed", "kernel.nu": "nu", "threads": "threads", "device": "device",
              "dataset.n": "n_train", "dataset.n_max": "n_train", "dataset.test_size": "n_train"}
#: always a condition: the threads a run really used (timings depend on them)
ALWAYS = ["threads"]
#: order of facets (outermost first): panels, files and table rows follow it
ORDER = ["experiment", "dataset", "n_train", "kernel", "nu", "kernel.lengthscale", "features",
         "d", "D", "dtype", "device", "model.name", "model.lam", "delta", "metric"]
#: identity columns a caption lists when they are the same for every row drawn
DESCRIBE = ["experiment", "dataset", "n_train", "kernel", "features", "d", "D", "dtype",
            "device", "threads"]


def fmt(v):
    """A value for a label: integers without '.0', floats with %g, missing as 'none'."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "none"
    if isinstance(v, (float, np.floating)) and float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{v:g}"
    return str(v)


def fmt_list(vals, limit=8):
    vals = [fmt(v) for v in vals]
    if len(vals) <= limit:
        return ", ".join(vals)
    return ", ".join(vals[:limit]) + f", ... ({len(vals)})"


def key_order(key):
    return (ORDER.index(key), key) if key in ORDER else (len(ORDER), key)


def _relevant(origin, measurements):
    """Does config key ``origin`` condition the values of ``measurements``?"""
    if origin.endswith(".enabled") or origin in selection_keys() or \
            origin.startswith("report."):
        return False
    if origin.startswith("measure."):
        return origin.split(".")[1] in measurements
    for prefix, names in _conditioned().items():
        if origin.startswith(prefix):
            return bool(names & set(measurements))
    return True


def _measurements():
    """The measurement classes installed now, as a hashable key of the caches below (a
    plug-in installed since, rffbench.measure.refresh, makes a new key)."""
    from ..measure import measurement_classes

    return tuple(measurement_classes().items())


def selection_keys():
    """Config keys that pick what is measured, never a condition of a measured value:
    each measurement's ``selection_keys`` (rffbench.measure)."""
    return _selection_keys(_measurements())


@functools.lru_cache(maxsize=8)
def _selection_keys(classes):
    return frozenset(f"measure.{name}.{k}" for name, cls in classes for k in cls.selection_keys)


def _conditioned():
    """Prefix of config keys outside measure.* -> the measurements they condition (each
    measurement's ``conditioned_by``); other keys condition every measurement."""
    return _conditioned_by(_measurements())


@functools.lru_cache(maxsize=8)
def _conditioned_by(classes):
    out = {}
    for name, cls in classes:
        for prefix in cls.conditioned_by:
            out.setdefault(prefix, set()).add(name)
    return out


@functools.lru_cache(maxsize=None)
def _flat_defaults():
    """Flattened config key -> the schema's default, as config.json spells it."""
    from ..config import Config
    from .collect import flatten

    return flatten(asdict(Config()))


def with_added_defaults(config):
    """A run's flattened config with the keys added since it was written set to their
    defaults (what the run did): a sweep resumed after an upgrade is not split by a key
    that only the newer runs record.  Renamed values are read in their new spelling:
    dataset.standardize true / false is dataset.scale standardize / none, and
    measure.approximation.cross true is halves."""
    c = {**_flat_defaults(), **config}
    std = c.pop("dataset.standardize", None)
    if std is not None and "dataset.scale" not in config:
        c["dataset.scale"] = "standardize" if std else "none"
    if c.get("measure.approximation.cross") is True:
        c["measure.approximation.cross"] = "halves"
    return c


def attach_conditions(df, runs):
    """The records of complete runs + one column per config key that varies among
    them and has no record column; returns (frame, {condition column: config keys})."""
    import pandas as pd

    configs = {r.run_id: r.config for r in runs}
    if any(c is None for c in configs.values()):
        return df, {c: [c] for c in FALLBACK_COLUMNS + ALWAYS}
    configs = {rid: with_added_defaults(c) for rid, c in configs.items()}
    keys = sorted(set().union(*[c.keys() for c in configs.values()])) if configs else []
    origins = {c: [c] for c in ALWAYS}
    extra = {}
    for k in keys:
        if k == "seed":
            continue
        vals = {repr(configs[rid].get(k)) for rid in configs}
        if len(vals) < 2:
            continue
        col = KEY_COLUMN.get(k, k)
        origins.setdefault(col, []).append(k)
        if col not in df.columns:
            extra[k] = df.run_id.map({rid: configs[rid].get(k) for rid in configs})
    if extra:
        df = pd.concat([df, pd.DataFrame(extra, index=df.index)], axis=1)
    return df, origins


class Grouping:
    """The conditions that vary among ``rows`` and how they are laid out.

    ``x``: the column on the x axis (absorbs its own variation); ``lines``:
    columns drawn as lines or bars within a panel; ``row_cols``: row-level
    columns that are conditions for this figure (``delta``, ``metric``);
    everything else that varies, except ``seed``, is a panel key.
    """

    def __init__(self, rows, origins, measurements, x=None, lines=(), row_cols=(), exclude=()):
        self.rows = rows
        taken = {x, "seed", *lines, *exclude}
        cands = [c for c, keys in origins.items()
                 if c in rows.columns and any(_relevant(k, measurements) for k in keys)]
        cands += [c for c in row_cols if c in rows.columns]
        varying = sorted({c for c in cands if c not in taken
                          and rows[c].nunique(dropna=False) > 1}, key=key_order)
        self.x, self.lines = x, [c for c in lines if c in rows.columns]
        # a condition that is a function of another one (features.pairs of features,
        # D of dataset in a table-shaped sweep) is shown with it, not split again; never
        # with the x axis: a line along x would join runs of different conditions (the
        # datasets of a sweep whose D follows d)
        self.dependents = {}
        anchors = sorted({c for c in [*self.lines, *varying] if c is not None}, key=key_order)
        for k in reversed(varying):
            for j in anchors:
                if j != k and j not in self.dependents and \
                        rows.groupby(j, dropna=False)[k].nunique(dropna=False).max() == 1:
                    self.dependents[k] = j
                    break
        self.keys = [k for k in varying if k not in self.dependents]
        self.fixed = {c: rows[c].iloc[0] for c in DESCRIBE
                      if c in rows.columns and c not in self.keys and c != x
                      and c not in self.lines and rows[c].nunique(dropna=False) == 1}

        self.dropped = []

    # -- layout ---------------------------------------------------------
    def require_x(self, n=2):
        """Keep only the panels with at least ``n`` values on the x axis (the others are
        listed in ``dropped``); False when no panel is left."""
        import pandas as pd

        keep = []
        for vals, g in self._combos(self.keys):
            if g[self.x].nunique() >= n:
                keep.append(g)
            else:
                self.dropped.append(self.label(dict(zip(self.keys, vals))) or "all runs")
        if keep:
            self.rows = pd.concat(keep)
        return bool(keep)

    def dropped_text(self):
        return (f"Not drawn (one {self.x} only; see the tables): {'; '.join(self.dropped)}."
                if self.dropped else "")

    def _combos(self, keys, rows=None):
        rows = self.rows if rows is None else rows
        if not keys:
            return [((), rows)]
        out = []
        for k, g in rows.groupby(keys, sort=True, dropna=False):
            out.append((k if isinstance(k, tuple) else (k,), g))
        return out

    def panels(self, rows=None, keys=None):
        """[(label, {key: value}, rows)] for every combination of panel keys."""
        keys = self.keys if keys is None else keys
        return [(self.label(dict(zip(keys, vals))), dict(zip(keys, vals)), g)
                for vals, g in self._combos(keys, rows)]

    def files(self, max_panels, split_first=()):
        """[(file suffix, {key: value} of the file, panels)]: the panels split over as few
        files as possible (by a subset of the keys, outermost first on ties) so that each
        file has at most ``max_panels``; the keys of ``split_first`` that vary always split
        files (one file per kernel of the maps figure)."""
        import itertools

        best = None
        first = [k for k in split_first if k in self.keys]
        rest = [k for k in self.keys if k not in first]
        for r in range(len(rest) + 1):
            for more in itertools.combinations(rest, r):
                outer = tuple(k for k in self.keys if k in first or k in more)
                inner = [k for k in self.keys if k not in outer]
                groups = self._combos(list(outer))
                if max(len(self._combos(inner, g)) for _, g in groups) > max_panels:
                    continue
                rank = (len(groups), [key_order(k) for k in outer])
                if best is None or rank < best[0]:
                    best = (rank, list(outer), inner, groups)
            if best is not None and r >= 1 and best[0][0] == 1:
                break
        _, outer, inner, groups = best
        out = []
        for vals, g in groups:
            fixed = dict(zip(outer, vals))
            suffix = "__".join(f"{k}={fmt(v)}" for k, v in fixed.items())
            out.append((safe_name(suffix), fixed, self.panels(g, inner)))
        self.split_keys = outer
        return out

    def name(self, col, val, rows=None):
        """``val`` of column ``col`` with the conditions that follow from it."""
        rows = self.rows if rows is None else rows
        extra = []
        for k, j in self.dependents.items():
            if j != col or not (rows[col] == val).any():
                continue
            v = rows.loc[rows[col] == val, k].iloc[0]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue  # not set for this value (e.g. a parameter other maps do not have)
            short = k.split(".", 1)[1] if k.startswith(col + ".") or (
                col == "features" and k.startswith("features.")) else k
            extra.append(f"{short}={fmt(v)}")
        return fmt(val) + (f" ({', '.join(extra)})" if extra else "")

    def label(self, keyvals):
        """Panel title: key=value of each panel key, with the conditions that follow."""
        return ", ".join(f"{k}={self.name(k, v)}" for k, v in keyvals.items())

    # -- words ----------------------------------------------------------
    def layout_text(self, panel_keys=None, split_keys=()):
        panel_keys = [k for k in (self.keys if panel_keys is None else panel_keys)
                      if k not in split_keys]
        parts = []
        if split_keys:
            parts.append("one file per " + " x ".join(split_keys))
        if panel_keys:
            parts.append("panels: " + " x ".join(panel_keys))
        if self.lines:
            parts.append("lines: " + " x ".join(self.lines))
        follow = [f"{k} follows {j}" for k, j in self.dependents.items()]
        if follow:
            parts.append(", ".join(follow) + " (shown with it)")
        fixed = ", ".join(f"{k}={fmt(v)}" for k, v in self.fixed.items())
        text = "; ".join(parts)
        text = (text[:1].upper() + text[1:] + ".") if text else ""
        return text + (f" Same for every run drawn: {fixed}." if fixed else "")


def same_seed_text(rows, by):
    """What the runs a value pools with the same seed differ in, read from their configs
    (never claimed without them)."""
    configs = CONFIGS.get()
    keys, unknown = set(), False
    groups = rows.groupby([*by, "seed"], dropna=False) if by else rows.groupby("seed",
                                                                              dropna=False)
    for _, g in groups:
        rids = list(g.run_id.unique())
        if len(rids) < 2:
            continue
        cs = [configs.get(r) for r in rids]
        if any(c is None for c in cs):
            unknown = True
            continue
        for k in set().union(*[c.keys() for c in cs]):
            if len({repr(c.get(k)) for c in cs}) > 1:
                keys.add(k)
    if unknown:
        return ("; some pool runs with the same seed whose configurations were not recorded "
                "(written before config.json): they may differ in settings not shown")
    return ("; some pool runs with the same seed that differ only in "
            + fmt_list(sorted(keys)) + ", which this value does not depend on"
            if keys else "; some pool runs with the same seed and the same configuration")


def safe_name(text):
    return "".join(c if c.isalnum() or c in "=._-" else "_" for c in text)


def pooled_text(rows, by, what="point", band=True):
    """How many runs each plotted value pools, and over which seeds."""
    if rows.empty:
        return ""
    by = [c for c in by if c in rows.columns]
    g = rows.groupby(by, dropna=False) if by else None
    n = g.run_id.nunique() if g is not None else np.array([rows.run_id.nunique()])
    s = g.seed.nunique() if g is not None else np.array([rows.seed.nunique()])
    seeds = sorted(rows.seed.dropna().unique())
    seedtxt = (f"seed {fmt(seeds[0])}" if len(seeds) == 1 else f"seeds {fmt_list(seeds)}")
    lo, hi = int(np.min(n)), int(np.max(n))
    if hi == 1:
        return f"one run per {what} ({seedtxt})"
    runs = f"{lo}" if lo == hi else f"{lo} to {hi}"
    dup = not np.array_equal(np.asarray(n), np.asarray(s))
    mean = CENTER.get() == "mean"
    return (f"{'mean' if mean else 'median'} over the seeds: {runs} runs per {what} ({seedtxt})"
            + (same_seed_text(rows, by) if dup else "")
            + ((f"; band: {interval_words(np.unique(s))}" if mean else
                "; band: min to max over the seeds") if band else ""))
