"""The posterior measurement's report: the posterior_vs_n figure and the posterior table
(rffbench.measure.posterior records them).
"""
from __future__ import annotations

from .figures import Figure, Selection, band, colors_for, log_axis, map_variants, proxy
from .grouping import Grouping, center_words
from .tables import make_table, row_keys

#: the report's x: the training points each run's posterior conditions on
N_COLUMN = "n_conditioned"
SAMPLER_WORDS = {"weight_space": "weight-space sampler", "decoupled": "decoupled sampler"}


def with_n(df):
    """The posterior records with each run's ``n_conditioned`` as a column (recorded by
    the run, whichever key set it: measure.posterior.n_train, or the data's size)."""
    p = df[df.measurement == "posterior"]
    n = p[p.metric == N_COLUMN].drop_duplicates("run_id").set_index("run_id").value
    return p.assign(**{N_COLUMN: p.run_id.map(n)})


class PosteriorVsN(Figure):
    """W2 between each sampler's Gaussian and the exact posterior against the number of
    training points, a panel per sampler (and D), a line per map."""

    name, title = "posterior_vs_n", "Posterior samples: distance from the exact posterior vs n"
    measurements, lines, row_cols = ("posterior",), ("features",), ("method",)
    no_panel = "posterior vs n: no panel has w2 at >= 2 values of n"

    def select(self, ctx):
        p = with_n(ctx.df)
        w = p[(p.metric == "w2") & p.value.notna()]
        if w.empty or w[N_COLUMN].nunique() < 2:
            return "posterior vs n: needs w2 records (measure.posterior) at >= 2 values of n"
        obs, own = map_variants(w)
        return Selection(rows=obs, x=N_COLUMN,
                         exclude=("measure.posterior.n_train", *own),
                         colors=colors_for(obs.features.unique()))

    def panel(self, sheet, axs, label, keys, rows):
        (ax,), sel, g = axs, sheet.sel, sheet.g
        for feat, grp in rows.groupby("features"):
            sheet.keep(band(ax, grp, N_COLUMN, label=g.name("features", feat),
                            color=sel.colors[feat], gid=f"observed:w2:{feat}"))
        ax.set(title=label, xlabel="n (training points the posterior conditions on)",
               ylabel="W2 to the exact posterior")
        log_axis(ax, "x", sorted(rows[N_COLUMN].unique()))
        log_axis(ax, "y")

    def handles(self, sheet):
        return list(sheet.legend.values()) + [
            proxy(color="k", marker="o", ms=3.5, label="2-Wasserstein distance of the "
                                                        "sampler's Gaussian at the test "
                                                        "points: " + center_words())]

    def describe(self, sheet):
        samplers = sorted(set(sheet.rows.method))
        return ("The 2-Wasserstein distance between the Gaussian each sampler's draws "
                "follow at the test points (given one draw of the map) and the exact GP "
                "posterior, against the number of training points, log-log; panels: "
                + " and ".join(SAMPLER_WORDS.get(s, s) for s in samplers)
                + ". The weight-space sampler is Bayesian linear regression on the features "
                "(its feature count is in each record's note: D + n with the matched cost); "
                "the decoupled one draws its prior from the D features and updates it "
                "with the exact kernel.")


def table_posterior(df, origins):
    p = with_n(df)
    rows = p[p.metric.isin(["w2", "starvation_ratio", "expected_cov_rel_fro_error",
                            "cov_rel_fro_error", "posterior_sd_rms"])]
    if rows.empty:
        return None
    rows = rows.assign(quantity=rows.method + ": " + rows.metric)
    cols = [N_COLUMN] if rows[N_COLUMN].nunique() > 1 else []
    g = Grouping(rows, origins, ["posterior"], x=cols[0] if cols else None,
                 lines=["features"], row_cols=["quantity"],
                 exclude=("measure.posterior.n_train", "method", "metric"))
    return make_table("posterior", "Posterior samples (posterior)",
                      "Per sampler: the 2-Wasserstein distance to the exact posterior at the "
                      "test points, the relative Frobenius error of its covariance and, for "
                      "the decoupled sampler with i.i.d. frequencies, its expectation over "
                      "draws of the map; starvation_ratio: the sampler's variance over the "
                      "exact one far from the data (below 1: variance starvation); "
                      "exact: posterior_sd_rms, sqrt(tr Sigma / m), the scale a W2 compares "
                      "with (sqrt(m) posterior_sd_rms is the W2 of a sampler without spread "
                      "that draws the exact mean).",
                      g, rows, row_keys(g, last=["quantity"]), cols)


fig_posterior_vs_n = PosteriorVsN()
#: the report's figures and tables of this measurement (rffbench.report.catalog)
FIGURES = [fig_posterior_vs_n]
TABLES = [table_posterior]
