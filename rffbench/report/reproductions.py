"""The report's *Reproductions* section: the sweep's runs against what papers publish
and prove.

For every paper of :data:`rffbench.published.PAPERS`, the runs whose configuration matches
its protocol (:meth:`~rffbench.published.Paper.match`) are grouped by the paper's point
(dataset, kernel, method, n); each point gets the published mean and ours with their 95%
intervals, the ratio and the verdict of :func:`rffbench.published.compare`, in a table,
a CSV (``reproduction_<paper>.csv``) and a figure that overlays the published points on
ours.  Runs of the paper's datasets and kernels that do not match are listed with the
reasons (e.g. standardised data), never compared.

Papers' formulas set against the ``variance`` measurement come after them: they are that
measurement's report (:mod:`rffbench.report.variance`).
"""
from __future__ import annotations

import math
import re
from collections import Counter

from ..published import INCONCLUSIVE_RATIO, PAPERS, POWER, compare
from .collect import run_identity
from .figures import METRIC_LABEL, Drawn, colors_for, finish, log_axis, new_figure, proxy
from .grouping import fmt_list
from .tables import Section, Table
from .variance import formula_sections

#: the point's key columns, in the table's order
POINT = ["dataset", "kernel", "method", "n"]
#: metric -> the record of its exact expectation on the run's rows, where the map has one
#: (shown beside the published mean: a check of the paper against the formula)
FORMULA = {"rel_fro_error": "expected_rel_fro_error"}
#: the figures' short y labels
YLABEL = {"rel_fro_error": "relative Frobenius error", "test_accuracy": "test accuracy"}


def reproduction_sections(ctx, runs):
    """[Section] of every paper that this sweep's runs touch (match, or run one of its maps on
    its datasets and kernels), then of every formula check whose runs it has."""
    out = []
    for paper in PAPERS.values():
        s = published_section(paper, ctx, runs)
        if s is not None:
            out.append(s)
    return out + formula_sections(ctx, runs)


def published_section(paper, ctx, runs):
    """The Section of one paper, or None when no run matches it and none runs one of its
    maps on its datasets and kernels (a sweep of other maps has nothing to compare)."""
    import pandas as pd

    matched, unmatched, unmatched_runs, near = _matched(paper, ctx, runs)
    if not matched and not near:
        return None  # none of its data, or none of its maps: nothing to compare or explain
    sec = Section(name=f"reproduction_{paper.key}", title=paper.citation, summary="")
    src = paper.source
    sec.text.append(f"Published numbers: {src.get('source', paper.csv)}. "
                    f"{src.get('extracted', '')}")
    sec.text.append(f"Quantity: {src.get('quantity', paper.metric)}")
    if paper.protocol_note:
        sec.text.append(f"Protocol: {paper.protocol_note}")
    if not matched:
        sec.summary = (f"no run follows the paper's protocol: {unmatched_runs} runs of its "
                       "datasets and kernels differ from it")
        sec.text.append("Not compared: " + _reasons_text(unmatched, unmatched_runs))
        return sec
    ours = pd.DataFrame(matched)
    res = compared(paper, ours)
    sec.summary, fams = _summary(res)
    sec.text.append(_test_text(paper, res))
    sec.text.append(_power_text(res, fams))
    varied = _varied(ctx, ours.run_id, exclude=("seed", "features.", "kernel.", "D",
                                                "D_n", "experiment"))
    if varied:
        sec.text.append("Pooled in each point (they differ between its runs): "
                        + "; ".join(f"{k} ({fmt_list(sorted(v, key=str))})"
                                    for k, v in varied.items()) + ".")
    if unmatched_runs:
        sec.text.append("Not compared: " + _reasons_text(unmatched, unmatched_runs))
    for ds, (theirs, how) in paper.substitutes.items():
        if (res.ours_data == ds).any():
            sec.text.append(f"Other data: the paper's {theirs} points are compared with runs "
                            f"on dataset={ds} ({_agree(res[res.ours_data == ds])}). {how}.")
    for ds, note in paper.data_notes.items():
        if (res.dataset == ds).any():
            sec.text.append(f"Data, {ds} ({_agree(res[res.dataset == ds])}): {note}.")
    differ = res[res.verdict == "differs"]
    notes = [f"{m}: {paper.notes[m]}" for m in sorted(set(res.method)) if m in paper.notes]
    if not differ.empty:
        sec.text.append("Where ours differ (each: the published mean outside its prediction "
                        "interval; the table has every point): " + "; ".join(
            _differ_text(key, g, paper.n_column)
            for key, g in differ.groupby(["dataset", "kernel", "method"], sort=True))
            + ". What differs in the implementation, per method: "
            + " ".join(notes or ["nothing known"]))
    elif notes:
        sec.text.append("Known implementation differences (within the test here): "
                        + " ".join(notes))
    sec.tables.append(_table(paper, res))
    sec.files.append((f"{sec.name}.csv", res))
    sec.figures += _figures(paper, res, sec.name)
    return sec


def _matched(paper, ctx, runs):
    """The runs that follow the paper's protocol, as rows (:func:`point_rows`); the reasons
    the others are not compared (a Counter: another protocol, or the protocol without a
    record of the paper's quantity), how many they are, and how many of those run one of
    the paper's maps (a section then says why they are not compared)."""
    matched, unmatched, unmatched_runs = [], Counter(), 0
    maps = {m.features for m in paper.methods}
    near = 0  # unmatched runs of one of the paper's maps: worth saying why they differ
    for r in runs:
        cfg = (ctx.configs or {}).get(r.run_id)
        if cfg is None:
            continue  # written by an rffbench without config.json: cannot be matched
        ident = run_identity(r.records)
        points, reasons = paper.match(cfg, ident)
        rows = []
        if points:
            rows, reasons = point_rows(paper, points, ident, r.records, r.run_id)
            matched += rows
        if not rows and reasons:  # another protocol, or the protocol without the record
            unmatched_runs += 1
            unmatched.update(reasons)
            near += ident["features"] in maps
    return matched, unmatched, unmatched_runs, near


def run_rows(paper, cfg, records, run_id, value_of=None):
    """(rows, reasons): one run's rows for the paper's points it follows the protocol of
    (published point, run, seed, our value, its spread and redraws, the variance formula's
    value), or [] and why not.  ``cfg``: the run's flattened config; ``records``: its
    records; ``value_of``: other records whose value stands for this run's at the same
    points (a map made wrong on purpose, matched as the right one: tests/contracts/
    test_mutants.py)."""
    ident = run_identity(records)
    points, reasons = paper.match(cfg, ident)
    if not points:
        return [], reasons
    return point_rows(paper, points, ident, records if value_of is None else value_of, run_id)


def point_rows(paper, points, ident, rec, run_id):
    """(rows, reasons) of a run that follows the protocol at ``points`` (its identity
    ``ident``, its records ``rec``): [] and why when it has no record of the paper's
    quantity."""
    import pandas as pd

    metric = paper.record_metric or paper.metric  # our record of the paper's quantity
    v = rec[(rec.measurement == paper.measurement) & (rec.metric == metric)
            & (rec.method.fillna("") == paper.record_method) & rec.value.notna()]
    if v.empty:
        return [], [f"no {metric} record (measure.{paper.measurement} disabled?)"]
    v = v.iloc[0]
    R = int(v.n_repeats) if not pd.isna(v.n_repeats) else 1
    formula = rec[(rec.measurement == paper.measurement) & (rec.metric == FORMULA.get(
        paper.metric, "")) & (rec.method.fillna("") == "theory") & rec.value.notna()]
    return [dict(point, run_id=run_id, seed=ident["seed"], features=ident["features"],
                 n_freq=int(ident["n_freq"]), value=paper.ours(float(v.value)),
                 sd=float(v.spread) if R > 1 else 0.0, R=R,
                 formula=float(formula.value.iloc[0]) if len(formula) else math.nan)
            for point in points], []


def compared(paper, ours):
    """One row per published point with its runs' values (``ours``): the point, the test's
    verdict, its detectable ratio and its family's (rffbench.published.compare)."""
    import pandas as pd

    pts = paper.points
    rows, tests = [], []
    for key, grp in ours.groupby(POINT, sort=True):
        p = pts[(pts.dataset == key[0]) & (pts.kernel == key[1]) & (pts.method == key[2])
                & (pts.n == key[3])].iloc[0]
        rows.append(dict(zip(POINT, key), features=grp.features.iloc[0],
                         ours_data=fmt_list(sorted(set(grp.ours_data))),
                         n_freq=int(p.n_freq), pub_runs=int(p.runs),
                         pub_distinct=int(p.distinct), formula=grp.formula.mean()))
        tests.append(dict(published=float(p["mean"]), pub_sd=float(p.sd),
                          pub_n=int(p.distinct), means=grp.value, sds=grp.sd, redraws=grp.R,
                          group=(key[0], key[1]), samples=paper.samples))
    res = pd.DataFrame([dict(r, **c) for r, c in zip(rows, compare(tests))])
    for col in ("family_verdict", "family_ratio", "family_lo", "family_hi", "family_points",
                "family_detectable", "family_q", "family_q_crit"):
        if col not in res:  # no point with a test (each needs >= 2 seeds)
            res[col] = math.nan
    return res


def _summary(res):
    """The section's summary line (the points' and the families' verdicts) and the families
    (dataset, kernel) with a verdict."""
    n_ag = int((res.verdict == "agrees").sum())
    n_in = int((res.verdict == "inconclusive").sum())
    n_df = int((res.verdict == "differs").sum())
    n_na = len(res) - n_ag - n_in - n_df
    fams = res.dropna(subset=["family_verdict"]).groupby(["dataset", "kernel"], sort=True) \
        .first()
    summary = (f"{len(res)} published points compared: {n_ag} agree, {n_in} inconclusive "
               f"(could not detect {INCONCLUSIVE_RATIO:g}x), {n_df} differ"
               + (f", {n_na} need >= 2 seeds" if n_na else "")
               + f"; {len(fams)} families (dataset, kernel): " + ", ".join(
                   f"{int((fams.family_verdict == v).sum())} {w}"
                   for v, w in (("agrees", "agree"), ("inconclusive", "inconclusive"),
                                ("differs", "differ"))))
    return summary, fams


def _test_text(paper, res):
    """The words for the section's test: the one-sample prediction interval, or Welch's
    test where every published run drew its own sample."""
    crit = res.crit.dropna()
    if paper.samples == "each":
        return (f"The test: {paper.samples_why}, and the two means are compared as "
                "independent samples: Welch's t = (published - ours) / "
                "sqrt(sd_pub^2 / n_pub + sd_ours^2 / S) (sd_ours: the spread of our seeds' "
                "means), with its Welch-Satterthwaite degrees of freedom; a point agrees when "
                "|t| is within the t quantile at a 5% family-wise error over the "
                f"{len(crit)} points (Bonferroni; "
                + (f"{crit.min():.2f}-{crit.max():.2f}" if len(crit) else "n/a")
                + " here). The prediction interval column is that range for the published "
                "mean; the other intervals are 95% t intervals of each mean.")
    sig = res.groupby(["dataset", "kernel"]).sigma_between.first().dropna()
    return (
        "The test: a published point is the mean over the paper's runs on one sample of the "
        "data; ours are S seeds (S samples), each the mean over R redraws of the map. On the "
        "log scale, the published mean agrees when |log published - mean log ours| <= z* "
        "sqrt(V), V = sigma_B^2 + (sigma_B^2 + w) / S + (se_pub / published)^2: sigma_B is "
        "the relative sample-to-sample spread, pooled over the points of a dataset and "
        "kernel (our seeds' spread minus the redraws' noise w), se_pub the published mean's "
        "standard error over its distinct runs"
        + (f", z* = {crit.iloc[0]:.2f} the two-sided normal quantile at a 5% family-wise "
           f"error over the {len(crit)} points (Bonferroni)" if len(crit) else "")
        + ". The prediction interval column is that range for the published mean; the other "
        "intervals are 95% t intervals of each mean."
        + (" Measured sample-to-sample spreads: " + "; ".join(
            f"{ds} {k}: {v:.1%}" for (ds, k), v in sig.items()) + "." if len(sig) else ""))


def _power_text(res, fams):
    """The words for what the verdicts could detect, and the families' tests."""
    det = res.detectable.dropna()
    words = (f"What each verdict could detect: the detectable column is the smallest ratio "
             f"ours / published (either way) its test finds with {POWER:.0%} probability at "
             f"its sample sizes; a point within its interval that could not detect "
             f"{INCONCLUSIVE_RATIO:g}x is inconclusive, not agreeing"
             + (f" (here {det.min():.3g}x to {det.max():.3g}x)." if len(det) else "."))
    if fams.empty:
        return words
    return words + (
        " Each family's points are also tested together (their common ratio, its variance "
        "counting the sample-to-sample part as shared by the family's points, and Cochran's "
        "Q of the points around it, 2 tests per family at a 5% family-wise error): "
        + "; ".join(f"{ds} {k}: common ratio {r.family_ratio:.3f} [{r.family_lo:.3f}, "
                    f"{r.family_hi:.3f}] over {r.family_points} points, detectable "
                    f"{r.family_detectable:.3g}x, Q {r.family_q:.3g} (critical "
                    f"{r.family_q_crit:.3g}): {r.family_verdict}"
                    if r.family_points >= 2 else
                    f"{ds} {k}: one point, its verdict ({r.family_verdict})"
                    for (ds, k), r in fams.iterrows()) + ".")


def _agree(points):
    """'k of n agree (i inconclusive)' of some compared points."""
    n_in = int((points.verdict == "inconclusive").sum())
    return (f"{int((points.verdict == 'agrees').sum())} of {len(points)} agree"
            + (f", {n_in} inconclusive" if n_in else ""))


def _differ_text(key, g, n_column):
    """One method's points that differ, in a few words: its n and ours / published."""
    ds, kernel, method = key
    lo, hi = f"{g.ratio.min():.3f}", f"{g.ratio.max():.3f}"
    ratio = lo if lo == hi else f"{lo}-{hi}"
    return (f"{ds} {kernel} {method} {n_column}={fmt_list(sorted(g.n.tolist()))}: "
            f"ours / published = {ratio}")


#: a reason "key=value rest": reasons that differ only in the value are told once
_REASON = re.compile(r"^(?P<key>[\w.]+)=(?P<value>\S+) (?P<rest>.*)$", re.S)


def _reasons_text(counter, n_runs):
    """The reasons runs are not compared, most common first; reasons that differ only in
    their value (lengthscale=5.37, lengthscale=5.39, ...) are one reason with its values."""
    groups = {}  # (key, rest) or the whole reason -> [values, runs]
    for reason, k in counter.items():
        m = _REASON.match(reason)
        key = (m["key"], m["rest"]) if m else (reason, None)
        g = groups.setdefault(key, [[], 0])
        g[0] += [m["value"]] if m else []
        g[1] += k
    parts = []
    for (key, rest), (values, k) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        text = key if rest is None else f"{key}={fmt_list(sorted(values, key=_num))} {rest}"
        parts.append(f"{text} ({k} runs)")
    return (f"{n_runs} runs of the paper's datasets and kernels do not follow its protocol: "
            + "; ".join(parts) + ".")


def _num(text):
    """Sort key of a value's text: numbers by value, then the rest by text."""
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def _varied(ctx, run_ids, exclude=()):
    """Config keys (other than ``exclude`` prefixes) whose values differ among the runs."""
    if not ctx.configs:
        return {}
    configs = [ctx.configs[r] for r in set(run_ids) if r in ctx.configs]
    keys = set().union(*[c.keys() for c in configs]) if configs else set()
    out = {}
    for k in sorted(keys):
        if k.startswith(tuple(exclude)) or k.startswith("report.") or k.startswith("hydra"):
            continue
        vals = {repr(c.get(k)) for c in configs}
        if len(vals) > 1:
            out[k] = {c.get(k) for c in configs}
    return out


def _ci(mean, lo, hi):
    if not all(map(math.isfinite, (lo, hi))):
        return f"{mean:.4g}"
    return f"{mean:.4g} [{lo:.4g}, {hi:.4g}]"


def _table(paper, res):
    import pandas as pd

    frame = pd.DataFrame({
        "dataset": [_data_label(r) for r in res.itertuples()], "kernel": res.kernel,
        "method": res.method,
        "rffbench map": res.features, paper.n_column: res.n.map(str),
        "n_freq": res.n_freq.map(str),
        "published mean [95% CI]": [_ci(r.published, r.pub_lo, r.pub_hi)
                                    for r in res.itertuples()],
        "published runs (distinct)": [f"{r.pub_runs} ({r.pub_distinct})"
                                      for r in res.itertuples()],
        "ours mean [95% CI]": [_ci(r.ours, r.ours_lo, r.ours_hi) for r in res.itertuples()],
        "seeds x redraws": [f"{r.seeds} x {r.redraws // max(r.seeds, 1)}"
                            for r in res.itertuples()],
        "ours / published": res.ratio.map(lambda v: f"{v:.3f}"),
        "prediction interval": [_ci(r.ours, r.pi_lo, r.pi_hi).split(" ", 1)[-1]
                                if math.isfinite(r.pi_lo) else "n/a" for r in res.itertuples()],
        "detectable": res.detectable.map(lambda v: f"{v:.3g}x" if math.isfinite(v) else "n/a"),
        "verdict": res.verdict,
        "family": res.family_verdict.fillna("n/a"),
    })
    if res.formula.notna().any():  # the exact expectation where the map has one
        at = frame.columns.get_loc("ours / published")
        frame.insert(at, "formula (RMS)", res.formula.map(
            lambda v: f"{v:.4g}" if math.isfinite(v) else "n/a"))
        frame.insert(at + 1, "published / formula", (res.published / res.formula).map(
            lambda v: f"{v:.3f}" if math.isfinite(v) else "n/a"))
    caption = (f"{paper.metric} per published point ({paper.citation}): the paper's mean over "
               "its runs and ours over the seeds (each seed: the mean over its redraws), "
               "with 95% t intervals; the verdict by the test above, detectable the smallest "
               f"ratio (either way) its test finds with {POWER:.0%} probability (inconclusive: "
               f"within, but above {INCONCLUSIVE_RATIO:g}x), family the verdict of the point's "
               "dataset and kernel tested together."
               + (" formula (RMS): sqrt(E err^2) from the exact per-pair variances on our "
                  "rows, averaged over the seeds, where the map has one (n/a: none); a mean "
                  "error sits a little below it (Jensen)." if res.formula.notna().any()
                  else ""))
    return Table(f"reproduction_{paper.key}", f"Reproduction: {paper.key}", caption, frame,
                 n_keys=4)


def _figures(paper, res, stem):
    """One figure, a column per (dataset, kernel).  Top: the metric against the paper's x
    (log-log), ours (filled, solid, 95% CI over seeds) and published (hollow, dashed, 95% CI
    over its runs) per method in one colour.  Bottom: published / ours per point with the
    test's prediction interval (the bar): it agrees when the marker is inside its bar."""
    cols = list(res.groupby(["dataset", "kernel"], sort=True))
    fig, axes = new_figure(len(cols), n_rows_per_panel=2, ncols=min(3, len(cols)), w=5.0,
                           h=3.4)
    methods = sorted(res.method.unique())
    colors = colors_for(methods)
    offset = {m: 1.0 + 0.035 * (i - (len(methods) - 1) / 2) for i, m in enumerate(methods)}
    for (ax, axr), ((ds, kern), grp) in zip(axes, cols):
        for m, g in grp.groupby("method"):
            g = g.sort_values("n_freq")
            x = g.n_freq.to_numpy(float)
            col = colors[m]
            (lo,) = ax.plot(x, g.ours, "-", marker="o", ms=3.5, color=col, lw=1.3)
            lo.set_gid(f"ours:{m}")
            ax.errorbar(x, g.ours, yerr=[g.ours - g.ours_lo, g.ours_hi - g.ours], fmt="none",
                        ecolor=col, elinewidth=0.9, capsize=2)
            (lp,) = ax.plot(x * 1.03, g.published, "--", marker="s", ms=4.5, mfc="none",
                            color=col, lw=0.9)
            lp.set_gid(f"published:{m}")
            ax.errorbar(x * 1.03, g.published, yerr=[g.published - g.pub_lo,
                                                     g.pub_hi - g.published],
                        fmt="none", ecolor=col, elinewidth=0.7, capsize=2)
            xr = x * offset[m]
            axr.vlines(xr, g.pi_lo / g.ours, g.pi_hi / g.ours, color=col, lw=5, alpha=0.3)
            bad = g.verdict == "differs"
            (lr,) = axr.plot(xr, g.published / g.ours, "s", ms=4, color=col, mfc="none")
            lr.set_gid(f"ratio:{m}")
            if bad.any():
                axr.plot(xr[bad.to_numpy()], (g.published / g.ours)[bad], "o", ms=10,
                         mfc="none", mec="tab:red", mew=1.5, gid=f"differs:{m}")
            weak = (g.verdict == "inconclusive").to_numpy()
            if weak.any():
                axr.plot(xr[weak], (g.published / g.ours)[weak], "o", ms=10, mfc="none",
                         mec="0.55", mew=1.2, ls="none", gid=f"inconclusive:{m}")
        axr.axhline(1.0, color="0.4", lw=0.8)
        fam = grp.family_verdict.dropna()
        if len(fam):
            axr.set_title(f"family (its points together): {fam.iloc[0]}", fontsize=9)
        ax.set(title=f"dataset={_data_label(grp.iloc[0])}, kernel={kern}",
               ylabel=YLABEL.get(paper.metric, paper.metric))
        axr.set(xlabel=paper.x_label, ylabel="published / ours")
        for a in (ax, axr):
            log_axis(a, "x", sorted(grp.n_freq.unique()))
        ax.set_yscale("log")
        log_axis(ax, "y")
    handles = _legend(res, colors, methods)
    finish(fig, f"Reproduction of {paper.key}: published vs rffbench", None, {}, handles,
           ncol=3)
    return [Drawn(stem, fig, _caption(paper, res))]


def _legend(res, colors, methods):
    """The figure's legend: each method's colour, ours and published, the test's interval,
    and the rings of the points that differ or are inconclusive where there are any."""
    handles = [proxy(color=colors[m], lw=6, label=f"{m} ({_map_of(res, m)})") for m in methods]
    handles += [proxy(color="k", marker="o", ms=4, label="ours: mean over seeds, 95% CI"),
                proxy(color="k", ls="--", marker="s", mfc="none", ms=5,
                      label="published: mean over runs, 95% CI (3% right)"),
                proxy(color="0.5", lw=5, alpha=0.3, label="bottom: the test's interval for "
                                                          "published / ours")]
    if (res.verdict == "differs").any():
        handles.append(proxy(color="none", marker="o", ms=10, mfc="none", mec="tab:red",
                             mew=1.5, ls="none", label="verdict: differs"))
    if (res.verdict == "inconclusive").any():
        handles.append(proxy(color="none", marker="o", ms=10, mfc="none", mec="0.55",
                             mew=1.2, ls="none", label=f"inconclusive: could not detect "
                                                       f"{INCONCLUSIVE_RATIO:g}x"))
    return handles


def _caption(paper, res):
    """The figure's caption: what each panel draws and how many points agree."""
    n_ag = int((res.verdict == "agrees").sum())
    n_in = int((res.verdict == "inconclusive").sum())
    cap = (f"Top: {METRIC_LABEL.get(paper.metric, paper.metric)} against {paper.x_label} per "
           "dataset and kernel (columns) and method (colour): ours (filled circles, solid) is "
           "the mean over the seeds of each seed's mean over its redraws, with its 95% t "
           "interval; the published point (hollow squares, dashed, drawn 3% to the right) is "
           "the paper's mean over its runs with its 95% t interval over the distinct runs. "
           "Bottom: published / ours per point (squares, methods side by side) and the "
           "prediction interval of the test (bars): a point agrees when its square is inside "
           f"its bar. {n_ag} of {len(res)} points agree, {n_in} inconclusive (inside, but "
           f"their test could not detect {INCONCLUSIVE_RATIO:g}x)"
           + ("; red rings mark the points that differ" if (res.verdict == "differs").any()
              else "")
           + ("; grey rings the inconclusive ones" if n_in else "")
           + ". Above each bottom panel: its family's verdict (the dataset and kernel's points "
             "tested together).")
    return cap


def _data_label(row):
    """The paper's dataset, and ours where the runs stand in with other data."""
    return row.dataset if row.ours_data == row.dataset else \
        f"{row.dataset} (ours: {row.ours_data})"


def _map_of(res, method):
    f = res[res.method == method].features.unique()
    return ", ".join(sorted(f))


__all__ = ["reproduction_sections", "published_section"]
