"""Which map should I use: the map-comparison table of a sweep over D (the approximation
measurement's): for each kernel and dataset (every condition that varies but the map and D),
every map's Gram error at one D, the D and the time it needs to reach target errors, and
its rank, ties decided by significance.

* The error is the relative Frobenius error at D*, the largest D that every map of the
  group was run at, summarised over the seeds as the report summarises them (median and
  min-max, or the mean and its interval with ``report.center=mean``).
* The D for a target error: per seed, on the swept D, the first D whose error is at most the
  target, interpolated linearly in log D against log error from the D before it (the error
  falls as a power of D); summarised over the seeds the same way.  "<= D" where the smallest
  D already reaches it, "> D" where some seed does not reach it by the largest.
* The time for a target error: the map's fit plus transform time (the timing measurement's
  map_fit_time_s + map_transform_time_s) at that D, interpolated in log-log on the swept D
  per seed; n/a where the runs have no timing.
* The rank orders the maps by their error at D*; a map whose errors are not significantly
  different from the best of the maps ranked before it (Welch's t, two-sided, at the
  report's level) shares that rank.
"""
from __future__ import annotations

import numpy as np

from .grouping import INTERVAL, Grouping, fmt, key_order, pooled_text, summary, value_words
from .latex import same, value_text
from .tables import Table

#: the target relative Frobenius errors
TARGETS = (0.05, 0.01)
#: the timing records whose sum is a map's time (its fit and its transform)
MAP_TIME = ("map_fit_time_s", "map_transform_time_s")


def _at_target(D, err, target):
    """(D where ``err`` first reaches ``target`` along increasing ``D``, interpolated in
    log-log; "below" where the first D reaches it, None where no D does)."""
    order = np.argsort(D)
    D, err = np.asarray(D, float)[order], np.asarray(err, float)[order]
    hit = np.flatnonzero(err <= target)
    if not hit.size:
        return None
    i = hit[0]
    if i == 0:
        return "below"
    x0, x1, y0, y1 = np.log(D[i - 1]), np.log(D[i]), np.log(err[i - 1]), np.log(err[i])
    if y1 == y0:
        return float(D[i])
    return float(np.exp(x0 + (np.log(target) - y0) * (x1 - x0) / (y1 - y0)))


def _interp_loglog(D, y, at):
    """y at D = ``at`` by log-log interpolation on the sorted (D, y), None outside."""
    order = np.argsort(D)
    D, y = np.asarray(D, float)[order], np.asarray(y, float)[order]
    if not (D[0] <= at <= D[-1]) or (y <= 0).any():
        return None
    return float(np.exp(np.interp(np.log(at), np.log(D), np.log(y))))


def _reach(per_seed, D_lo, D_hi):
    """The cell of a target's D (or time) over the seeds' values (module docs)."""
    if any(v is None for v in per_seed):
        return f"> {fmt(D_hi)}", None
    if all(v == "below" for v in per_seed):
        return f"<= {fmt(D_lo)}", None
    if any(v == "below" for v in per_seed):
        return f"<= {fmt(D_lo)} (some seeds)", None
    vals = np.asarray(per_seed, float)
    return value_text(vals), vals


def _map_row(runs, D_star, times):
    """(error values at D*, {target: (D text, time text)}) of one map's runs."""
    at_star = runs[runs.D == D_star].value.to_numpy(float)
    cells = {}
    D_lo, D_hi = runs.D.min(), runs.D.max()
    for target in TARGETS:
        per_seed, per_time = [], []
        for seed, r in runs.groupby("seed"):
            d = _at_target(r.D, r.value, target)
            per_seed.append(d)
            t = times.get(seed)
            per_time.append(None if t is None or not isinstance(d, float)
                            else _interp_loglog(t[0], t[1], d))
        text, vals = _reach(per_seed, D_lo, D_hi)
        ok = vals is not None and all(v is not None for v in per_time)
        cells[target] = (text, value_text(np.asarray(per_time, float)) if ok else "n/a")
    return at_star, cells


def map_times(df, run_ids):
    """run_id -> the map's fit + transform time (the timing measurement's MAP_TIME records
    summed), for the runs among ``run_ids`` that have both."""
    t = df[(df.measurement == "timing") & df.metric.isin(MAP_TIME) & df.run_id.isin(run_ids)]
    return t.groupby("run_id").value.sum(min_count=len(MAP_TIME)).dropna()


def _times(df, runs):
    """{seed: (D array, fit + transform time array)} of the runs' timing records."""
    total = map_times(df, runs.run_id)
    timed = runs.drop_duplicates("run_id")
    timed = timed[timed.run_id.isin(total.index)].assign(time_s=lambda r: r.run_id.map(total))
    return {s: (g.D.to_numpy(float), g.time_s.to_numpy(float))
            for s, g in timed.groupby("seed") if g.D.nunique() >= 2}


def _ranks(errors, level):
    """Ranks by the errors' centres, a map sharing the rank of the best of the maps ranked
    before it when not significantly different from it (Welch's t)."""
    order = sorted(errors, key=lambda m: summary(errors[m])[0])
    ranks, head = {}, None
    for pos, m in enumerate(order, start=1):
        if head is not None and same(errors[m], errors[head], level):
            ranks[m] = ranks[head]
        else:
            ranks[m], head = pos, m
    return ranks


def table_map_comparison(df, origins):
    """The map-comparison table (module docs), or None where the sweep compares fewer than
    two maps or has one D."""
    import pandas as pd

    a = df[(df.measurement == "approximation") & (df.metric == "rel_fro_error")
           & df.value.notna()]
    if a.empty or a.D.nunique() < 2 or a.features.nunique() < 2:
        return None
    g = Grouping(a, origins, ["approximation"], x="D", lines=["features"])
    keys = sorted({k for k in [*g.keys, *g.lines, *g.dependents]
                   if k not in ("features", "D", "seed")}, key=key_order)
    level = INTERVAL.get()[1]
    rows, values = [], []
    for gkey, grp in (a.groupby(keys, dropna=False, sort=True) if keys else [((), a)]):
        gkey = gkey if isinstance(gkey, tuple) else (gkey,)
        common = set.intersection(*(set(r.D) for _, r in grp.groupby("features")))
        if not common:
            continue
        D_star = max(common)
        errors, cells = {}, {}
        for m, runs in grp.groupby("features"):
            errors[m], cells[m] = _map_row(runs, D_star, _times(df, runs))
        ranks = _ranks(errors, level)
        for m in sorted(errors, key=lambda m: (ranks[m], summary(errors[m])[0])):
            row = dict(zip(keys, map(fmt, gkey)), features=m, rank=str(ranks[m]),
                       **{"D*": fmt(D_star), "error at D*": value_text(errors[m])})
            for target in TARGETS:
                row[f"D for {target:g}"], row[f"time (s) for {target:g}"] = cells[m][target]
            rows.append(row)
            values.append({**{k: None for k in row}, "error at D*": errors[m]})
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    caption = (
        "Which map to use: each map's relative Frobenius error at D*, the largest D every map "
        "of its row group was run at, the D it needs to reach each target error (per seed, "
        "the first swept D at or below the target, interpolated in log D against log error "
        "from the D before it; '> D': some seed does not reach it by the largest D) and the "
        "fit + transform time at that D (interpolated the same way; n/a without timing "
        f"records). Each value: {value_words()}; "
        + pooled_text(a, [*keys, "features", "D"], what="value", band=False)
        + f". Rank: by the error at D*; a map whose "
        f"errors are not significantly different from the best map ranked before it (Welch's "
        f"t, two-sided, {1 - level:.0%} level) shares its rank.")
    return Table("map_comparison", "Which map: error at D*, D and time to a target error",
                 caption, frame, len(keys) + 1, pd.DataFrame(values, columns=frame.columns))


__all__ = ["TARGETS", "table_map_comparison"]
