"""rffbench/report/grouping.py: how a point summarises its seeds (report.center and the
mean's interval) and the words its captions use for it."""
import numpy as np
import pytest


def test_report_center_mean_summarises_seeds_by_mean_and_its_interval():
    """report.center=mean (papers that report means): the point is the mean over the seeds,
    the band its interval (report.interval: the lognormal one by default, Cox's formula; t
    where a value is not positive, and when asked); one seed: no band; the default stays
    median and min-max."""
    import pandas as pd
    from scipy.stats import t

    from rffbench.report.grouping import pooled_text, summarising, summary

    v = [1.0, 2.0, 6.0]
    assert summary(v) == (2.0, 1.0, 6.0)
    with summarising("mean"):
        y = np.log(v)
        s2 = y.var(ddof=1)
        c, se = y.mean() + s2 / 2, np.sqrt(s2 / 3 + s2**2 / 4)
        half = t.ppf(0.975, 2) * se
        assert summary(v) == pytest.approx((3.0, np.exp(c - half), np.exp(c + half)))
        tv = [-1.0, 2.0, 6.0]  # not positive: the t interval
        half = t.ppf(0.975, 2) * np.std(tv, ddof=1) / np.sqrt(3)
        assert summary(tv) == pytest.approx((7 / 3, 7 / 3 - half, 7 / 3 + half))
        assert summary([4.0]) == (4.0, 4.0, 4.0)  # one seed: no band
        rows = pd.DataFrame(dict(run_id=["a", "b", "c"], seed=[0, 1, 2], D=[8, 8, 8]))
        assert pooled_text(rows, ["D"]).startswith("mean over the seeds")
        assert "95% lognormal (Cox) interval" in pooled_text(rows, ["D"])
    with summarising("mean", interval=("t", 0.9, 2000)):
        half = t.ppf(0.95, 2) * np.std(v, ddof=1) / np.sqrt(3)
        assert summary(v) == pytest.approx((3.0, 3.0 - half, 3.0 + half))
        assert "90% t interval" in pooled_text(rows, ["D"])
    with summarising("mean", interval=("bca", 0.95, 500)):
        assert "BCa bootstrap (500 resamples); none under 3 seeds" in pooled_text(rows, ["D"])
    assert summary(v)[0] == 2.0  # the block ends: median again
