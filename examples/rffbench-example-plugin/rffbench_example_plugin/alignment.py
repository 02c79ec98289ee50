"""``alignment``: kernel-target alignment of the exact and the approximate Gram matrix.

The centred alignment of a Gram matrix K with the targets Y (Cortes, Mohri &
Rostamizadeh, "Algorithms for learning kernels based on centered alignment",
JMLR 2012):

    A(K, Y) = <K_c, Y_c Y_c^T>_F / (||K_c||_F ||Y_c Y_c^T||_F),   K_c = H K H,

H = I - 1 1^T / m the centring matrix, Y_c the centred targets (one-hot columns for
classes).  A is in [-1, 1]; it is invariant to the scale of K and, because of the
centring, to a constant added to K, so a map's ``kernel_offset_`` does not change it.
How well the features keep the kernel's alignment is a cheap proxy of how well a
linear model on them can do what the kernel machine does.

Records (measurement ``alignment``, on ``n_points`` training rows): ``alignment``
for the exact kernel (method ``exact``) and for the features' estimate (method
``features``), and ``alignment_gap`` = A(features) - A(exact).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rffbench.checks import Int, check_constraints
from rffbench.measure import Measurement
from rffbench.memory import Need
from rffbench.report.figures import Figure, Selection, band, colors_for, log_axis, proxy
from rffbench.report.grouping import center_words
from rffbench.results import record


@dataclass
class AlignmentConfig:
    """measure.alignment: kernel-target alignment, exact vs features (off by default)."""

    enabled: bool = False
    #: training rows used (capped at the training-set size)
    n_points: int = 500

    constraints = {"n_points": Int(2)}  # declared once: the check, the docs, the tests

    def __post_init__(self):
        check_constraints(self, "measure.alignment")


def centred_alignment(K, Y):
    """A(K, Y) of the module docs; Y of shape (m,) or (m, c)."""
    K = np.asarray(K, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64).reshape(K.shape[0], -1)
    Yc = Y - Y.mean(axis=0)
    Kc = K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()
    num = float(np.sum(Yc * (Kc @ Yc)))  # <K_c, Yc Yc^T> = tr(Yc^T K_c Yc)
    ky = np.linalg.norm(Yc.T @ Yc)  # ||Yc Yc^T||_F = ||Yc^T Yc||_F
    kk = np.linalg.norm(Kc)
    return num / (kk * ky) if kk > 0 and ky > 0 else float("nan")


def _targets(data, idx):
    y = data.y_train[idx]
    if data.task == "classification":
        return np.eye(int(data.y_train.max()) + 1)[y.astype(np.int64)]
    return y.astype(np.float64)


class Alignment(Measurement):
    """Kernel-target alignment (centred) of the exact Gram matrix and of the features'
    estimate on a subsample of the training set."""

    name = "alignment"
    Config = AlignmentConfig

    def check(self, ctx, cfg):
        if ctx.data.streamed:
            from rffbench.errors import ConfigError

            raise ConfigError("measure.alignment.enabled=true is not allowed with a streamed "
                              "file: it needs the training rows in memory")

    def needs(self, ctx, cfg):
        def nbytes(v):
            m = min(v["measure.alignment.n_points"], ctx.n_train)
            return 8.0 * (3 * m * m + m * (ctx.cfg.D + ctx.data.d))

        return [Need("the alignment measurement (two m x m Gram matrices and their centring)",
                     nbytes, {"measure.alignment.n_points": (cfg.n_points, 2)})]

    def run(self, ctx, cfg):
        data = ctx.data
        m = min(cfg.n_points, ctx.n_train)
        idx = np.sort(ctx.rng("alignment").choice(ctx.n_train, m, replace=False))
        X = np.ascontiguousarray(data.X_train[idx], dtype=np.float64)
        Y = _targets(data, idx)
        exact = centred_alignment(ctx.kernel.gram(X), Y)
        fmap = ctx.make_map().fit(ctx.fit_rows)
        approx = centred_alignment(fmap.kernel_estimate(X), Y)
        note = f"centred alignment on {m} training rows"
        return [record("alignment", "alignment", exact, method="exact", note=note),
                record("alignment", "alignment", approx, method="features", note=note),
                record("alignment", "alignment_gap", approx - exact, method="features",
                       note="A(features) - A(exact)")]

    def tables(self, df, origins):
        from rffbench.report.grouping import Grouping
        from rffbench.report.tables import make_table

        a = df[(df.measurement == "alignment") & (df.metric == "alignment")]
        if a.empty:
            return []
        g = Grouping(a, origins, ["alignment"], x="D", lines=["features", "method"])
        rk = [k for k in [*g.keys, *g.lines] if k != "D"] + ["method"]
        cols = ["D"] if a.D.nunique() > 1 else []
        return [make_table("alignment", "Kernel-target alignment (plug-in measurement)",
                           "Centred kernel-target alignment of the exact Gram matrix (exact) "
                           "and of the features' estimate (features).", g, a, rk, cols)]

    def figures(self):
        return {"alignment_vs_D": AlignmentVsD()}


class AlignmentVsD(Figure):
    """Alignment of the features' estimate against D, the exact kernel's as a line: a figure
    spec (rffbench.report.figures.Figure); the driver does the grouping, the files, the
    legend and the caption's layout and pooling sentences."""

    name, title = "alignment_vs_D", "Kernel-target alignment vs D"
    measurements, x, lines = ("alignment",), "D", ("features",)
    no_panel = "alignment vs D: no panel has alignment records at >= 2 values of D"

    def select(self, ctx):
        a = ctx.df[(ctx.df.measurement == "alignment") & (ctx.df.metric == "alignment")
                   & ctx.df.value.notna()]
        feat = a[a.method == "features"]
        if feat.empty or feat.D.nunique() < 2:
            return "alignment vs D: needs alignment records at >= 2 values of D"
        return Selection(rows=feat, exact=a[a.method == "exact"],
                         colors=colors_for(set(feat.features)))

    def panel(self, sheet, axs, label, keys, rows):
        (ax,), sel = axs, sheet.sel
        for f, grp in rows.groupby("features"):
            band(ax, grp, "D", label=sheet.g.name("features", f), color=sel.colors[f])
        ex = sel.exact[sel.exact.run_id.isin(rows.run_id)]
        if not ex.empty:
            ax.axhline(ex.groupby("seed").value.median().median(), color="black", lw=1.0,
                       ls="--")
        ax.set(title=label, xlabel="D (output dimension)", ylabel="centred alignment")
        log_axis(ax, "x", sorted(rows.D.unique()))

    def handles(self, sheet):
        return [proxy(color=c, marker="o", ms=3.5, label=sheet.g.name("features", f))
                for f, c in sorted(sheet.sel.colors.items())] + [
            proxy(color="black", lw=1.0, ls="--", label="exact kernel")]

    def describe(self, sheet):
        return (f"Centred kernel-target alignment of the features' estimate ({center_words()}) "
                "and of the exact kernel (dashed: median over the panel's runs, which share "
                "the kernel and the points).")
