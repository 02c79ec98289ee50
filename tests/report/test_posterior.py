"""rffbench/report/posterior.py: posterior_vs_n draws each sampler's W2 against the n each
run conditioned on, a panel per sampler, a line per map; the posterior table."""
import numpy as np
import pandas as pd

from tests.helpers import run_cli


def test_posterior_vs_n_draws_the_recorded_w2_per_sampler_and_map(tmp_path):
    from rffbench.report import figures, grouping
    from rffbench.report import posterior as rposterior
    from rffbench.report.collect import collect

    sweep = tmp_path / "s"
    p = run_cli("-m", "dataset=friedman1", "dataset.d=8", "dataset.n=200", "dataset.scale=none",
                "kernel=matern", "kernel.nu=2.5", "kernel.lengthscale=0.2828", "D=32",
                "measure.bounds.enabled=false", "measure.learning.enabled=false",
                "measure.timing.enabled=false", "measure.approximation.enabled=false",
                "measure.posterior.enabled=true", "measure.posterior.n_test=30",
                "measure.posterior.n_train=4,16,64", "features=rff,qmc", "report.pdf=false",
                f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "posterior_vs_n.png" in (sweep / "report" / "summary.md").read_text()
    col = collect(sweep)
    df = pd.concat([r.records for r in col.complete_runs], ignore_index=True)
    df, origins = grouping.attach_conditions(df, col.complete_runs)
    (drawn,), _ = rposterior.fig_posterior_vs_n(figures.FigContext(df, origins, {}))
    recs = df[df.measurement == "posterior"]
    n = recs[recs.metric == "n_conditioned"].set_index("run_id").value
    w2 = recs[recs.metric == "w2"].assign(n=lambda r: r.run_id.map(n))
    axes = [ax for ax in drawn.fig.axes if ax.get_lines()]
    assert sorted(ax.get_title() for ax in axes) == ["method=decoupled", "method=weight_space"]
    for ax in axes:
        method = ax.get_title().split("=")[1]
        lines = {ln.get_gid(): ln for ln in ax.get_lines() if ln.get_gid()}
        assert set(lines) == {"observed:w2:qmc", "observed:w2:rff"}
        for gid, ln in lines.items():
            want = w2[(w2.method == method) & (w2.features == gid.split(":")[2])] \
                .set_index("n").value.sort_index()
            np.testing.assert_allclose(ln.get_xdata(), [4, 16, 64])
            np.testing.assert_allclose(ln.get_ydata(), want.values, rtol=1e-12)
    assert "2-Wasserstein distance" in drawn.caption and "weight-space" in drawn.caption
    table = rposterior.table_posterior(df, origins)
    assert list(table.frame.columns[-3:]) == [f"n_conditioned={k}" for k in (4, 16, 64)]
    assert set(table.frame.quantity) >= {"decoupled: w2", "weight_space: starvation_ratio",
                                         "decoupled: expected_cov_rel_fro_error"}
