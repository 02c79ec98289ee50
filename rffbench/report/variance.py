"""The ``variance`` measurement's report: what papers prove, set against the measured
variances of each pair (``variance_pairs.csv``).

Each :class:`FormulaCheck` of :data:`FORMULA_CHECKS` (Sutherland & Schneider 2015's exact
variances, Choromanski et al. 2021's Lemma 2, Yu et al. 2016's ORF variance ratio) whose
runs a sweep has becomes a section of the report's *Reproductions* (a figure, a table and
a per-pair z test).  The measurement has no figures or tables of the per-measurement kind
(``FIGURES``, ``TABLES`` are empty).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..readers import DamagedFile, read_table
from .collect import run_identity
from .figures import Drawn, finish, log_axis, new_figure, proxy
from .tables import Section, Table

#: the measurement's figures and tables of the catalog kind (rffbench.report.catalog): none;
#: its sections are the formula checks below
FIGURES = ()
TABLES = ()


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
        ident = run_identity(rec)
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




__all__ = ["FIGURES", "TABLES", "FORMULA_CHECKS", "FormulaCheck", "formula_sections",
           "variance_frame"]
