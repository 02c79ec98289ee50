"""rffbench/measure/variance.py: the variance measurement takes each map's own exact MSE
formula and cites its source."""

import pytest


@pytest.mark.parametrize("features,source", [
    ("rff_pairs", "Sutherland & Schneider 2015"), ("positive", "Choromanski et al. 2021"),
    ("orf", "exact ORF variance"), ("sorf", None)])
def test_the_variance_measurement_takes_each_maps_formula(tmp_path, features, source):
    """Through the command line: the variance measurement asks the map for its exact MSE
    (FeatureMap.exact_mse) and cites the map's source; a map without one records n/a."""
    import pandas as pd

    from tests.helpers import run_cli

    r = run_cli(f"features={features}", "dataset=synthetic", "dataset.n=200", "dataset.d=4",
                "D=16", "measure.variance.enabled=true", "measure.variance.redraws=4",
                "measure.variance.pairs=data", "measure.variance.n_pairs=5",
                "measure.bounds.enabled=false",
                "measure.learning.enabled=false", "measure.timing.enabled=false",
                f"hydra.run.dir={tmp_path}")
    assert r.returncode == 0, r.stderr[-2000:]
    df = pd.read_csv(tmp_path / "records.csv")
    theo = df[(df.metric == "mse_theory")]
    assert len(theo) == 5
    if source is None:
        assert theo.value.isna().all() and theo.note.str.contains("no formula").all()
    else:
        assert theo.value.notna().all() and theo.note.str.contains(source, regex=False).all()
