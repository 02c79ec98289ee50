"""The report's *Reproductions* section: the sweep's runs against what papers publish
and prove.

For every paper of :data:`rffbench.published.PAPERS`, the runs whose configuration matches
its protocol (:meth:`~rffbench.published.Paper.match`) are grouped by the paper's point
(dataset, kernel, method, n); each point gets the published mean and ours with their 95%
intervals, the ratio and the verdict of :func:`rffbench.published.compare`, in a table,
a CSV (``reproduction_<paper>.csv``) and a figure that overlays the published points on
ours.  Runs of the paper's datasets and kernels that do not match are listed with the
reasons (e.g. standardised data), never compared.

Papers' formulas (:data:`FORMULA_CHECKS`: Sutherland & Schneider 2015's exact variances,
Choromanski et al. 2021's Lemma 2, Yu et al. 2016's ORF variance ratio) are set against
the ``variance`` measurement of the runs that have it, each with a figure, a table and a
per-pair z test.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..published import PAPERS, compare
from ..readers import DamagedFile, read_table
from .figures import METRIC_LABEL, Drawn, colors_for, finish, log_axis, new_figure, proxy
from .grouping import fmt_list
from .tables import Table

#: the point's key columns, in the table's order
POINT = ["dataset", "kernel", "method", "n"]


@dataclass
class Section:
    name: str  # anchor and file stem
    title: str
    summary: str  # one line
    text: list = field(default_factory=list)  # paragraphs
    tables: list = field(default_factory=list)  # tables.Table
    figures: list = field(default_factory=list)  # figures.Drawn
    files: list = field(default_factory=list)  # (name, DataFrame) written as CSV


def reproduction_sections(ctx, runs):
    """[Section] of every paper that this sweep's runs touch (match, or share a dataset and
    kernel with), then of every formula check whose runs it has."""
    out = []
    for paper in PAPERS.values():
        s = published_section(paper, ctx, runs)
        if s is not None:
            out.append(s)
    return out + formula_sections(ctx, runs)


def _identity(records):
    row = records.iloc[0]
    return {k: row[k] for k in ("dataset", "d", "kernel", "lengthscale", "n_train",
                                "features", "n_freq", "seed")}


def published_section(paper, ctx, runs):
    """The Section of one paper, or None when no run has its datasets and kernels."""
    import pandas as pd

    matched, unmatched, unmatched_runs = [], Counter(), 0
    for r in runs:
        ident = _identity(r.records)
        cfg = (ctx.configs or {}).get(r.run_id)
        if cfg is None:
            continue  # written by an rffbench without config.json: cannot be matched
        point, reasons = paper.match(cfg, ident)
        if point is None:
            if reasons:
                unmatched_runs += 1
                unmatched.update(reasons)
            continue
        rec = r.records
        v = rec[(rec.measurement == paper.measurement) & (rec.metric == paper.metric)
                & (rec.method.fillna("") == "") & rec.value.notna()]
        if v.empty:
            unmatched_runs += 1
            unmatched[f"no {paper.metric} record (measure.{paper.measurement} disabled?)"] += 1
            continue
        v = v.iloc[0]
        R = int(v.n_repeats) if not pd.isna(v.n_repeats) else 1
        matched.append(dict(point, run_id=r.run_id, seed=ident["seed"],
                            features=ident["features"], n_freq=int(ident["n_freq"]),
                            value=float(v.value), sd=float(v.spread) if R > 1 else 0.0, R=R))
    if not matched and not unmatched:
        return None
    sec = Section(name=f"reproduction_{paper.key}", title=paper.citation, summary="")
    src = paper.source
    sec.text.append(f"Published numbers: {src.get('source', paper.csv)}. "
                    f"{src.get('extracted', '')}")
    sec.text.append(f"Quantity: {src.get('quantity', paper.metric)}")
    if not matched:
        sec.summary = (f"no run follows the paper's protocol: {unmatched_runs} runs of its "
                       "datasets and kernels differ from it")
        sec.text.append("Not compared: " + _reasons_text(unmatched, unmatched_runs))
        return sec
    ours = pd.DataFrame(matched)
    pts = paper.points
    rows, tests = [], []
    for key, grp in ours.groupby(POINT, sort=True):
        p = pts[(pts.dataset == key[0]) & (pts.kernel == key[1]) & (pts.method == key[2])
                & (pts.n == key[3])].iloc[0]
        rows.append(dict(zip(POINT, key), features=grp.features.iloc[0],
                         n_freq=int(p.n_freq), pub_runs=int(p.runs),
                         pub_distinct=int(p.distinct)))
        tests.append(dict(published=float(p["mean"]), pub_sd=float(p.sd),
                          pub_n=int(p.distinct), means=grp.value, sds=grp.sd, redraws=grp.R,
                          group=(key[0], key[1])))
    res = pd.DataFrame([dict(r, **c) for r, c in zip(rows, compare(tests))])
    n_ag = int((res.verdict == "agrees").sum())
    n_df = int((res.verdict == "differs").sum())
    n_na = len(res) - n_ag - n_df
    sec.summary = (f"{len(res)} published points compared: {n_ag} agree, {n_df} differ"
                   + (f", {n_na} need >= 2 seeds" if n_na else ""))
    crit = res.crit.dropna()
    sig = res.groupby(["dataset", "kernel"]).sigma_between.first().dropna()
    sec.text.append(
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
    varied = _varied(ctx, ours.run_id, exclude=("seed", "features.", "kernel.", "D",
                                                "D_n", "experiment"))
    if varied:
        sec.text.append("Pooled in each point (they differ between its runs): "
                        + "; ".join(f"{k} ({fmt_list(sorted(v, key=str))})"
                                    for k, v in varied.items()) + ".")
    if unmatched_runs:
        sec.text.append("Not compared: " + _reasons_text(unmatched, unmatched_runs))
    differ = res[res.verdict == "differs"]
    notes = [f"{m}: {paper.notes[m]}" for m in sorted(set(res.method)) if m in paper.notes]
    if not differ.empty:
        sec.text.append("Where ours differ: " + "; ".join(
            f"{r.dataset} {r.kernel} {r.method} {paper.n_column}={r.n}: ours / published = "
            f"{r.ratio:.3f}, "
            f"published {r.published:.4g} outside [{r.pi_lo:.4g}, {r.pi_hi:.4g}]"
            for r in differ.itertuples()) + ". What differs in the implementation, per "
            "method: " + " ".join(notes or ["nothing known"]))
    elif notes:
        sec.text.append("Known implementation differences (within the test here): "
                        + " ".join(notes))
    sec.tables.append(_table(paper, res))
    sec.files.append((f"{sec.name}.csv", res))
    sec.figures += _figures(paper, res, sec.name)
    return sec


def _reasons_text(counter, n_runs):
    return (f"{n_runs} runs of the paper's datasets and kernels do not follow its protocol: "
            + "; ".join(f"{reason} ({k} runs)" for reason, k in counter.most_common()) + ".")


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
        "dataset": res.dataset, "kernel": res.kernel, "method": res.method,
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
        "verdict": res.verdict,
    })
    caption = (f"{paper.metric} per published point ({paper.citation}): the paper's mean over "
               "its runs and ours over the seeds (each seed: the mean over its redraws), "
               "with 95% t intervals; the verdict by the prediction-interval test above.")
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
        axr.axhline(1.0, color="0.4", lw=0.8)
        ax.set(title=f"dataset={ds}, kernel={kern}", ylabel="relative Frobenius error")
        axr.set(xlabel=paper.x_label, ylabel="published / ours")
        for a in (ax, axr):
            log_axis(a, "x", sorted(grp.n_freq.unique()))
        ax.set_yscale("log")
        log_axis(ax, "y")
    handles = [proxy(color=colors[m], lw=6, label=f"{m} ({_map_of(res, m)})") for m in methods]
    handles += [proxy(color="k", marker="o", ms=4, label="ours: mean over seeds, 95% CI"),
                proxy(color="k", ls="--", marker="s", mfc="none", ms=5,
                      label="published: mean over runs, 95% CI (3% right)"),
                proxy(color="0.5", lw=5, alpha=0.3, label="bottom: the test's interval for "
                                                          "published / ours")]
    if (res.verdict == "differs").any():
        handles.append(proxy(color="none", marker="o", ms=10, mfc="none", mec="tab:red",
                             mew=1.5, ls="none", label="verdict: differs"))
    finish(fig, f"Reproduction of {paper.key}: published vs rffbench", None, {}, handles,
           ncol=3)
    n_ag = int((res.verdict == "agrees").sum())
    cap = (f"Top: {METRIC_LABEL.get(paper.metric, paper.metric)} against {paper.x_label} per "
           "dataset and kernel (columns) and method (colour): ours (filled circles, solid) is "
           "the mean over the seeds of each seed's mean over its redraws, with its 95% t "
           "interval; the published point (hollow squares, dashed, drawn 3% to the right) is "
           "the paper's mean over its runs with its 95% t interval over the distinct runs. "
           "Bottom: published / ours per point (squares, methods side by side) and the "
           "prediction interval of the test (bars): a point agrees when its square is inside "
           f"its bar. {n_ag} of {len(res)} points agree"
           + ("; red rings mark the points that differ." if n_ag < len(res) else "."))
    return [Drawn(stem, fig, cap)]


def _map_of(res, method):
    f = res[res.method == method].features.unique()
    return ", ".join(sorted(f))




# ---------------------------------------------------------------------------
# what papers prove, against the variance measurement
# ---------------------------------------------------------------------------
#: family-wise false-alarm rate of the per-pair formula tests of a section
FORMULA_ALPHA = 0.01
#: a mean squared error at most this is zero up to rounding (an exact estimate)
EXACT_TOL = 1e-12


@dataclass(frozen=True)
class FormulaCheck:
    """A paper's formula shown against measure.variance: which runs it uses and how."""

    key: str
    citation: str
    claim: str
    maps: tuple
    kernels: tuple  # empty: every kernel
    pairs: str
    build: object  # (check, frame) -> (table, [Drawn], summary, paragraphs)


def variance_frame(ctx, runs):
    """(every pair of every run with variance records: variance_pairs.csv joined with the
    run's identity (features, kernel, D, n_freq, d, lengthscale, seed, dataset) and its
    pairs mode and map parameters, or None; the lines of the files that are damaged)."""
    import pandas as pd

    from ..results import VARIANCE_FILE

    parts, damaged = [], []
    for r in runs:
        rec = r.records
        if not ((rec.measurement == "variance") & (rec.metric == "mse_empirical")).any():
            continue
        path = ctx.run_dirs[r.run_id] / VARIANCE_FILE
        if not path.exists():
            continue
        try:
            t = read_table(path, ("pair", "r_minus", "r_plus", "dist", "mse", "mse_se",
                                  "mse_theory"))
        except (OSError, DamagedFile) as exc:  # a shared folder's file: left out, said why
            damaged.append(str(exc))
            continue
        ident = _identity(rec)
        cfg = (ctx.configs or {}).get(r.run_id, {})
        t = t.assign(run_id=r.run_id, features=ident["features"], kernel=ident["kernel"],
                     dataset=ident["dataset"], d=int(ident["d"]),
                     D=int(rec.D.iloc[0]), n_freq=int(ident["n_freq"]),
                     lengthscale=float(ident["lengthscale"]), seed=ident["seed"],
                     pairs=cfg.get("measure.variance.pairs", "grid"),
                     layout=cfg.get("features.params.layout", "blocks"),
                     R=int(rec[rec.metric == "mse_empirical"].n_repeats.iloc[0]))
        parts.append(t)
    return (pd.concat(parts, ignore_index=True) if parts else None), damaged


def formula_sections(ctx, runs):
    """[Section] of every FormulaCheck whose runs this sweep has (a run whose
    variance_pairs.csv is damaged is left out, its line in each section's text)."""
    V, damaged = variance_frame(ctx, runs)
    if V is None:
        return []
    out = []
    for chk in FORMULA_CHECKS:
        rows = V[V.features.isin(chk.maps) & (V.pairs == chk.pairs)]
        if chk.kernels:
            rows = rows[rows.kernel.isin(chk.kernels)]
        if rows.empty or rows.features.nunique() < len(chk.maps):
            continue
        built = chk.build(chk, rows)
        if built is None:
            continue
        table, figs, summary, paras = built
        sec = Section(name=f"formula_{chk.key}", title=chk.citation, summary=summary)
        sec.text.append(f"What the paper states: {chk.claim}")
        sec.text += paras
        sec.text += [f"Left out (damaged): {line}" for line in damaged]
        sec.tables.append(table)
        sec.figures += figs
        sec.files.append((f"{sec.name}.csv", rows))
        out.append(sec)
    return out


def _z_crit(n):
    from scipy.special import ndtri

    return float(ndtri(1 - FORMULA_ALPHA / (2 * max(n, 1))))


def _pair_verdicts(rows):
    """z-scores (measured - formula) / SE per pair and the Bonferroni verdicts."""
    has = rows.mse_theory.notna() & (rows.mse_se > 0) & ~(
        (rows.mse.abs() <= EXACT_TOL) & (rows.mse_theory.abs() <= EXACT_TOL))
    z = (rows.mse - rows.mse_theory) / rows.mse_se.where(rows.mse_se > 0)
    zc = _z_crit(int(has.sum()))
    # an exact estimator (positive features at x = -y): both zero up to rounding
    exact_zero = rows.mse_theory.notna() & (rows.mse.abs() <= EXACT_TOL) \
        & (rows.mse_theory.abs() <= EXACT_TOL)
    verdict = np.where(exact_zero | (has & (z.abs() <= zc)), "agrees",
                       np.where(has, "differs", "no formula"))
    return z, zc, verdict


def _test_text(zc, n):
    return (f"The test per pair: |measured - formula| <= {zc:.2f} standard errors of the "
            f"measured MSE (the spread of the squared errors over the redraws / sqrt(R)), "
            f"{zc:.2f} = the two-sided z at a family-wise false-alarm rate of "
            f"{FORMULA_ALPHA:g} over the {n} pairs with a formula (Bonferroni).")


def _lower(b, one, other):
    """(the map with the lower MSE by the formula, as measured: "tie" within the 95% CI of
    the difference) at one pair of a pivot row ``b`` (mse, mse_se, mse_theory per map)."""
    by_formula = one if b["mse_theory"][one] < b["mse_theory"][other] else other
    gap = b["mse"][one] - b["mse"][other]
    se = math.hypot(b["mse_se"][one], b["mse_se"][other])
    measured = "tie" if abs(gap) <= 1.96 * se else (one if gap < 0 else other)
    return by_formula, measured


def _cells(b, name, D, label=None):
    """The table cells of one map at one pair: D x the formula, D x the measured MSE +- 95%."""
    label = label or name
    return {f"{label} formula": f"{D * b['mse_theory'][name]:.4g}",
            f"{label} measured": f"{D * b['mse'][name]:.4g} +- {1.96 * D * b['mse_se'][name]:.2g}"}


def _build_ss2015(chk, rows):
    """D MSE against |x - y| / l for rff and rff_pairs at the same D, per kernel."""
    import pandas as pd

    z, zc, verdict = _pair_verdicts(rows)
    rows = rows.assign(z=z, verdict=verdict)
    panels = list(rows.groupby(["kernel", "D"], sort=True))
    fig, axes = new_figure(len(panels), ncols=min(3, len(panels)))
    colors = {"rff": "tab:blue", "rff_pairs": "tab:orange"}
    table = []
    wins = dict(agree=0, total=0)
    for (ax,), ((kern, D), grp) in zip(axes, panels):
        for f, g in grp.groupby("features"):
            g = g.sort_values("r_minus")
            c = colors.get(f, "k")
            (lt,) = ax.plot(g.r_minus, D * g.mse_theory, "--", color=c, lw=1.2)
            lt.set_gid(f"formula:{f}")
            ax.errorbar(g.r_minus, D * g.mse, yerr=1.96 * D * g.mse_se, fmt="o", ms=4,
                        color=c, capsize=2, gid=f"measured:{f}")
        ax.set(title=f"kernel={kern}, D={D}", xlabel="|x - y| / lengthscale",
               ylabel="D x mean squared error")
        both = grp.pivot_table(index="pair", columns="features",
                               values=["mse", "mse_se", "mse_theory", "r_minus", "k"])
        for pair, b in both.iterrows():
            if not {"rff", "rff_pairs"} <= set(b["mse"].index):
                continue
            f_win, m_win = _lower(b, "rff_pairs", "rff")
            wins["total"] += 1
            wins["agree"] += m_win in (f_win, "tie")
            table.append({"kernel": kern, "D": str(D), "|x-y| / l": f"{b['r_minus']['rff']:.3g}",
                          "k": f"{b['k']['rff']:.4g}", **_cells(b, "rff", D),
                          **_cells(b, "rff_pairs", D), "lower by the formula": f_win,
                          "lower measured": m_win})
    handles = [proxy(color=colors[f], marker="o", ls="none", label=f"{f}: measured, 95% CI")
               for f in ("rff", "rff_pairs")]
    handles += [proxy(color=colors[f], ls="--", label=f"{f}: exact (Sutherland & Schneider)")
                for f in ("rff", "rff_pairs")]
    finish(fig, "Sutherland & Schneider 2015: cos + offset vs [cos, sin] pairs at equal D",
           None, {}, handles, ncol=4)
    n_ag = int((rows.verdict == "agrees").sum())
    n_f = int((rows.verdict != "no formula").sum())
    cap = ("D x the mean squared error of the kernel estimate at pairs at |x - y| (in "
           "lengthscales) for rff (cos(w.x + b), D frequencies) and rff_pairs ([cos, sin], D/2 "
           "frequencies) at the same output dimension D: measured over the redraws (points, "
           f"95% CI) and the exact formulas (dashed). Panels: kernel x D; one run per map. "
           f"{n_ag} of {n_f} pairs agree with the formula.")
    frame = pd.DataFrame(table)
    tbl = Table(f"formula_{chk.key}", "Sutherland & Schneider 2015",
                "D x MSE per pair, formula and measured (95% CI); the lower map by the "
                "formula and as measured (tie: within the 95% CI of the difference).", frame,
                n_keys=3)
    summary = (f"{n_ag} of {n_f} pairs agree with the exact variance; the formula's winner "
               f"(rff_pairs or rff) is the measured one or a tie at {wins['agree']} of "
               f"{wins['total']} pairs")
    return tbl, [Drawn(f"formula_{chk.key}", fig, cap)], summary, [_test_text(zc, n_f)]


def _build_lemma2(chk, rows):
    """D MSE against |x + y| / l, one panel per |x - y| / l: positive vs trigonometric."""
    import pandas as pd

    rows = rows[rows.kernel == "gaussian"]
    if rows.r_plus.round(9).nunique() < 2:
        return None
    z, zc, verdict = _pair_verdicts(rows)
    rows = rows.assign(z=z, verdict=verdict, rm=rows.r_minus.round(6), rp=rows.r_plus.round(6))
    panels = list(rows.groupby(["D", "rm"], sort=True))
    fig, axes = new_figure(len(panels), ncols=min(4, len(panels)), h=3.6)
    colors = {"positive": "tab:green", "rff_pairs": "tab:orange"}
    table = []
    for (ax,), ((D, rm), grp) in zip(axes, panels):
        for f, g in grp.groupby("features"):
            g = g.sort_values("rp")
            c = colors.get(f, "k")
            ok = g.mse_theory > EXACT_TOL  # exact estimates (0) are not drawn on a log scale
            (lt,) = ax.plot(g.rp[ok], D * g.mse_theory[ok], "--", color=c, lw=1.2)
            lt.set_gid(f"formula:{f}")
            pos = g.mse > EXACT_TOL
            ax.errorbar(g.rp[pos], D * g.mse[pos], yerr=np.minimum(1.96 * D * g.mse_se[pos],
                                                                   0.999 * D * g.mse[pos]),
                        fmt="o", ms=4, color=c, capsize=2, gid=f"measured:{f}")
        ax.set_yscale("log")
        log_axis(ax, "y")
        ax.set(title=f"|x - y| = {rm:g} l, D={D}", xlabel="|x + y| / lengthscale",
               ylabel="D x mean squared error")
        piv = grp.pivot_table(index="rp", columns="features", values=["mse", "mse_se",
                                                                     "mse_theory", "k"])
        for rp, b in piv.iterrows():
            if not {"positive", "rff_pairs"} <= set(b["mse"].index):
                continue
            fw, mw = _lower(b, "positive", "rff_pairs")
            table.append({"D": str(D), "|x-y| / l": f"{rm:g}", "|x+y| / l": f"{rp:g}",
                          "k": f"{b['k']['positive']:.4g}", **_cells(b, "positive", D),
                          **_cells(b, "rff_pairs", D, "trig"), "lower by the formula": fw,
                          "lower measured": mw})
    handles = [proxy(color=colors[f], marker="o", ls="none", label=f"{f}: measured, 95% CI")
               for f in ("positive", "rff_pairs")]
    handles += [proxy(color=colors["positive"], ls="--", label="positive: exp(4 u.v) - k^2"),
                proxy(color=colors["rff_pairs"], ls="--", label="trigonometric: (1 - k^2)^2")]
    finish(fig, "Choromanski et al. 2021, Lemma 2: positive vs trigonometric features", None,
           {}, handles, ncol=4)
    n_ag = int((rows.verdict == "agrees").sum())
    n_f = int((rows.verdict != "no formula").sum())
    frame = pd.DataFrame(table)
    agree_w = int(sum(r["lower by the formula"] == r["lower measured"]
                      or r["lower measured"] == "tie" for r in table))
    cap = ("D x the mean squared error of the Gaussian kernel's estimate against |x + y| (in "
           "lengthscales), one panel per |x - y|: positive random features (D features) and "
           "trigonometric ones (rff_pairs, D/2 frequencies) at the same D, measured (points, "
           "95% CI) and Lemma 2's formulas in D units (dashed): positive exp(4 u.v) - k^2 "
           "= k^2 (exp(|x + y|^2) - 1), trigonometric (1 - k^2)^2. At x = -y (|x + y| = 0) "
           "the positive estimate is exact (MSE 0, not drawn on the log scale). "
           f"{n_ag} of {n_f} pairs agree.")
    tbl = Table(f"formula_{chk.key}", "Choromanski et al. 2021, Lemma 2",
                "D x MSE per pair, formula and measured (95% CI); the lower map by the "
                "formula and as measured (tie: within the 95% CI of the difference).", frame,
                n_keys=3)
    summary = (f"{n_ag} of {n_f} pairs agree with Lemma 2's formulas; the lower map is the "
               f"formula's (or a tie) at {agree_w} of {len(table)} geometries")
    return tbl, [Drawn(f"formula_{chk.key}", fig, cap)], summary, [_test_text(zc, n_f)]


def _build_yu2016(chk, rows):
    """The ORF / RFF mean MSE ratio over the data pairs against D/d (n_freq / d)."""
    import pandas as pd

    rows = rows[(rows.kernel == "gaussian") & ((rows.features != "orf")
                                              | (rows.layout == "blocks"))]
    per = rows.groupby(["dataset", "d", "lengthscale", "n_freq", "features"]).agg(
        mse=("mse", "mean"), se=("mse_se", lambda s: float(np.sqrt(np.sum(s ** 2))) / len(s)),
        theory=("mse_theory", "mean"), pairs=("pair", "size")).reset_index()
    piv = per.pivot_table(index=["dataset", "d", "lengthscale", "n_freq"], columns="features",
                          values=["mse", "se", "theory"])
    if piv.empty or "orf" not in piv["mse"].columns or "rff_pairs" not in piv["mse"].columns:
        return None
    piv = piv.dropna()
    if piv.empty:
        return None
    from scipy.special import ndtri

    zc = float(ndtri(1 - FORMULA_ALPHA / (2 * len(piv))))
    table, res = [], []
    for (ds, d, ls, nf), b in piv.iterrows():
        r = b["mse"]["orf"] / b["mse"]["rff_pairs"]
        se = r * math.hypot(b["se"]["orf"] / b["mse"]["orf"],
                            b["se"]["rff_pairs"] / b["mse"]["rff_pairs"])
        rt = b["theory"]["orf"] / b["theory"]["rff_pairs"]
        ok = abs(r - rt) <= zc * se
        res.append(dict(dataset=ds, d=d, ls=ls, x=nf / d, ratio=r, se=se, theory=rt, ok=ok))
        table.append({"dataset": ds, "d": str(int(d)), "lengthscale": f"{ls:.4g}",
                      "n_freq / d": f"{nf / d:g}", "formula ratio": f"{rt:.4f}",
                      "measured ratio": f"{r:.4f} +- {1.96 * se:.2g}",
                      "verdict": "agrees" if ok else "differs"})
    res = pd.DataFrame(res)
    panels = list(res.groupby(["dataset", "d"], sort=True))
    fig, axes = new_figure(len(panels), ncols=min(3, len(panels)))
    for (ax,), ((ds, d), g) in zip(axes, panels):
        g = g.sort_values("x")
        (lt,) = ax.plot(g.x, g.theory, "--", color="tab:purple", lw=1.3)
        lt.set_gid("formula:ratio")
        ax.errorbar(g.x, g.ratio, yerr=1.96 * g.se, fmt="o", ms=4, color="tab:purple",
                    capsize=2, gid="measured:ratio")
        ax.axhline(1.0, color="0.6", lw=0.8)
        ax.set_xscale("log")
        log_axis(ax, "x", sorted(g.x.unique()))
        ax.set(title=f"dataset={ds} (d={int(d)}), lengthscale={g.ls.iloc[0]:.3g}",
               xlabel="n_freq / d (frequencies per input dimension)",
               ylabel="MSE(orf) / MSE(rff_pairs)")
    handles = [proxy(color="tab:purple", marker="o", ls="none", label="measured, 95% CI"),
               proxy(color="tab:purple", ls="--", label="exact ORF variance / Var(rff_pairs)")]
    finish(fig, "Yu et al. 2016: ORF / RFF variance ratio against D/d", None, {}, handles,
           ncol=2)
    n_ag = int(res.ok.sum())
    cap = ("The ratio of the mean squared errors of orf (orthogonal blocks) and rff_pairs "
           "(i.i.d.) averaged over pairs of training points, at the same number of frequencies, "
           "against n_freq / d; the lengthscale is the mean distance to the 50th nearest "
           "neighbour (the paper's rule, kernel.lengthscale=knn50) when the runs used it. "
           "Measured: points with 95% CIs (delta method over the two maps' standard errors); "
           f"formula: the exact ORF variance over the same pairs (dashed). {n_ag} of {len(res)} "
           "ratios agree.")
    tbl = Table(f"formula_{chk.key}", "Yu et al. 2016", "The MSE ratio orf / rff_pairs per "
                "n_freq / d: formula and measured (95% CI).", pd.DataFrame(table), n_keys=4)
    summary = (f"{n_ag} of {len(res)} ratios agree with the exact ORF variance (test: within "
               f"{zc:.2f} standard errors, Bonferroni at {FORMULA_ALPHA:g})")
    para = ("The formula: for m frequencies in orthogonal blocks of d, Var = (m V1 + "
            "sum_blocks b (b - 1) C(z)) / m^2 with V1 = (1 - exp(-z^2))^2 / 2 and C(z) the "
            "covariance of two orthogonal rows, computed exactly (rffbench.theory."
            "orf_pair_covariance; its leading term in 1/d is -exp(-z^2) z^4 / (2 d), the "
            "variance reduction of the paper's Theorem 1). Below one block (n_freq < d) the "
            "ratio falls with n_freq; from n_freq = d on, whole blocks are independent and it "
            "stays at 1 + (d - 1) C / V1.")
    return tbl, [Drawn(f"formula_{chk.key}", fig, cap)], summary, [para]


FORMULA_CHECKS = (
    FormulaCheck("sutherland2015", "Sutherland & Schneider, \"On the Error of Random Fourier "
                 "Features\", UAI 2015", "the exact variance of each estimate, Var[rff] = "
                 "(1 + k(2 delta)/2 - k^2) / D and Var[rff_pairs] = (1 + k(2 delta) - 2 k^2) / D "
                 "at equal output dimension D: the pairs are better exactly where k^2 > "
                 "k(2 delta) / 2 (always for the Gaussian kernel, not for heavy-tailed kernels "
                 "far apart)", ("rff", "rff_pairs"), (), "grid", _build_ss2015),
    FormulaCheck("choromanski2021", "Choromanski et al., \"Rethinking Attention with "
                 "Performers\", ICLR 2021, Lemma 2", "the mean squared errors of the "
                 "trigonometric and the positive estimators of the softmax / Gaussian kernel: "
                 "positive (1/m) exp(|x + y|^2) SM^2 (1 - exp(-|x + y|^2)), trigonometric "
                 "(1/(2m)) exp(|x|^2 + |y|^2) SM^-2 (1 - exp(-|x - y|^2))^2 (SM = exp(x.y)): "
                 "positive features are better where the kernel value is small, trigonometric "
                 "ones where |x + y| is large", ("positive", "rff_pairs"), ("gaussian",), "grid",
                 _build_lemma2),
    FormulaCheck("yu2016", "Yu, Suresh, Choromanski, Holtmann-Rice & Kumar, \"Orthogonal Random "
                 "Features\", NIPS 2016", "orthogonal random features have a lower variance "
                 "than i.i.d. ones for the Gaussian kernel, by -exp(-z^2) z^4 / (2 d) per pair "
                 "of frequencies to leading order (Theorem 1), so the variance ratio falls "
                 "with D/d up to D = d", ("orf", "rff_pairs"), ("gaussian",), "data",
                 _build_yu2016),
)


__all__ = ["Section", "reproduction_sections", "published_section", "formula_sections",
           "FORMULA_CHECKS"]
