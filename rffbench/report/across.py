"""A figure across measurements: every map's value of each metric side by side, at one
D per kernel (the maps preset), one file per kernel.
"""
from __future__ import annotations

from .bounds import empirical_sup
from .figures import Figure, Selection, grouped_by, log_axis, map_variants, proxy
from .grouping import center_words, fmt, pooled_text, summary

# --------------------------------------------------------------------------
# maps side by side
# --------------------------------------------------------------------------
MAP_METRICS = [("approximation", "rel_fro_error", None, "Gram error ||K - ZZ'||_F / ||K||_F"),
               ("bounds", "eps_empirical", "empirical", "sup error, (1-delta) quantile"),
               ("learning", "test_error_rate", "feature", "test error rate (model on features)"),
               ("learning", "test_rel_rmse", "feature", "test RMSE / std (model on features)"),
               ("timing", "map_transform_time_s", None, "transform time, training set (s)")]


def _panel_rank(text, order):
    for i, o in enumerate(order):
        if text.startswith(o):
            return (i, text)
    return (len(order), text)


class Maps(Figure):
    """Every map's value of each metric side by side (one panel per metric), at one D."""

    name, title = "maps", "Feature maps side by side"
    x, row_cols, max_panels, legend_ncol, min_x = "map", ("quantity",), 6, 2, 0
    split_first = ("kernel",)  # one file per kernel: its maps side by side
    share_x = share_y = False  # x: the maps by name; each panel its own metric

    def select(self, ctx):
        import pandas as pd

        df = ctx.df
        parts = []
        for meas, metric, method, label in MAP_METRICS:
            sel = df[(df.measurement == meas) & (df.metric == metric) & df.dist.isna()
                     & df.value.notna()]
            if method == "empirical":
                sel = empirical_sup(df, ctx.delta)
                sel = sel.assign(quantity=[f"{label}, delta={fmt(v)}" for v in sel.delta])
            elif method == "feature":
                sel = sel[sel.method != "exact_krr"].assign(quantity=label)
            else:
                sel = sel.assign(quantity=label)
            if sel.features.nunique() >= 2:
                parts.append(sel)
        if not parts:
            return "maps side by side: needs a metric of >= 2 feature maps"
        rows = pd.concat(parts, ignore_index=True)
        if rows.groupby("kernel").D.nunique().max() > 1:
            return ("maps side by side: D varies for a kernel in this sweep (the maps are "
                    "compared at each D by error_vs_D, bounds_vs_D and learning_vs_D)")
        # a map's own parameters that vary (maclaurin with and without h01) name the bar
        named, own = map_variants(rows)
        rows = rows.assign(map=named.features)
        return Selection(rows=rows, measurements=sorted(rows.measurement.unique()), x="map",
                         exclude=("features", *own))

    def arrange(self, panels):
        order = [lab for _, _, _, lab in MAP_METRICS]
        return sorted(panels, key=lambda p: _panel_rank(p[2].quantity.iloc[0], order))

    def layout(self, sheet):
        return dict(ncols=min(2, len(sheet.panels)), w=5.4, h=3.0)

    def panel(self, sheet, axs, label, keys, sel):
        (ax,) = axs
        med = sel.groupby("map").value.agg(lambda v: summary(v)[0]).sort_values()
        pos = {f: i for i, f in enumerate(med.index)}
        ax.scatter(sel["map"].map(pos), sel.value, s=14, alpha=0.6, color="tab:blue",
                   label="one run (seed)")
        ax.scatter(range(len(med)), med.values, marker="_", s=320, color="k",
                   label=center_words(band=False), gid="median")
        ax.set_xticks(range(len(med)), list(med.index), rotation=30, ha="right")
        ax.grid(True, axis="x", alpha=0)
        ax.set(title=label.replace("quantity=", ""))
        ax.set_yscale("log")
        log_axis(ax, "y")

    def handles(self, sheet):
        return [proxy(color="tab:blue", marker="o", ls="none", alpha=0.6, label="one run (seed)"),
                proxy(color="k", marker="_", ms=14, ls="none", label=center_words(band=False))]

    def describe(self, sheet):
        return (f"Each panel one metric, maps sorted by their {center_words(False).split()[0]}; "
                "learning panels show the model on features (exact kernel ridge is in the "
                "learning table).")

    def pooled(self, sheet):
        return ("Each bar: " + pooled_text(sheet.rows, grouped_by(sheet.g), what="bar", band=False)
                + ".")

    def details(self, sheet):
        return []


fig_maps = Maps()
#: a figure across measurements (rffbench.report.catalog)
FIGURES = [fig_maps]
