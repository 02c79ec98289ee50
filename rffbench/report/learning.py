"""The learning measurement's report: learning_vs_D, train_time_vs_n and the learning
table (rffbench.measure.learning records them).
"""
from __future__ import annotations

import numpy as np

from ..measure.learning import CG_TRAIN_NOTE
from .figures import (
    BAND_GID,
    METRIC_LABEL,
    Figure,
    Selection,
    band,
    colors_for,
    grouped_by,
    log_axis,
    map_variants,
    proxy,
    size_axis,
)
from .grouping import Grouping, center_words, fmt, pooled_text
from .tables import make_table, row_keys

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
        feat, own = map_variants(lr[(lr.method != "exact_krr") & lr.value.notna()])
        if feat.empty or feat.D.nunique() < 2:
            return "learning vs D: needs learning records at >= 2 values of D"
        x, x_label = size_axis(ctx, feat)
        return Selection(rows=feat, exact=lr[lr.method == "exact_krr"], x=x, x_label=x_label,
                         exclude=(("D",) if x == "n_freq" else ()) + tuple(own),
                         colors=colors_for(set(zip(feat.features, feat.method))))

    def panel(self, sheet, axs, label, keys, rows):
        (ax,), sel, g = axs, sheet.sel, sheet.g
        metric = rows.metric.iloc[0]
        for (f, m), grp in rows.groupby(["features", "method"]):
            band(ax, grp, sel.x, label=f"{g.name('features', f)} + {m}",
                 color=sel.colors[(f, m)], gid=f"observed:{metric}:{f}+{m}")
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
        ax.set(title=label, xlabel=sel.x_label, ylabel=METRIC_LABEL[metric])
        log_axis(ax, "x", sorted(rows[sel.x].unique()))

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
        return ("Each point of a feature model: " + pooled_text(sheet.rows, grouped_by(sheet.g),
                                                                 band=False) + ".")

    def extra(self, sheet):
        return [("Crossovers: " + "; ".join(sheet.notes) + ".") if sheet.notes else ""]


def table_learning(df, origins):
    lr = df[(df.measurement == "learning")
            & df.metric.isin(["test_error_rate", "test_rel_rmse", "train_time_s",
                              "cg_iterations", "cg_residual"])]
    if lr.empty:
        return None
    g = Grouping(lr, origins, ["learning"], lines=["features"], exclude=["method", "metric"])
    rk = row_keys(g)
    cols = ["metric", "method"]
    return make_table("learning", "Learning: test error and train time",
                      "Test error (classification: error rate; regression: RMSE / std(y_test)) "
                      "and training time of the model on features and of exact kernel ridge "
                      "(exact_krr; it does not depend on D or the map), and where exact KRR was "
                      "solved by conjugate gradients (model.exact_solver) its iterations and "
                      "final relative residual.", g, lr, rk, cols)


fig_learning_vs_D = LearningVsD()
fig_train_time = TrainTime()
#: the report's figures and tables of this measurement (rffbench.report.catalog)
FIGURES = [fig_learning_vs_D, fig_train_time]
TABLES = [table_learning]
