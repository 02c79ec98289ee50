"""rffbench/measure/timing.py: the map's fit and transform times on the training set, as
records (the streamed data's n/a: tests/test_stream.py; the device's parts: tests/cuda)."""
import numpy as np
import pytest

from rffbench import clock
from rffbench.experiment import run
from tests.helpers import compose_config

ONLY = ["measure.approximation.enabled=false", "measure.bounds.enabled=false",
        "measure.learning.enabled=false", "dataset=synthetic", "dataset.n=300", "D=64"]


@pytest.mark.parametrize("features,repeats", [("rff", 3), ("sorf", 5)])
def test_fit_and_transform_are_medians_of_clean_warm_repeats(features, repeats):
    n0 = len(clock.LOG)
    df, _ = run(compose_config([*ONLY, f"features={features}",
                                f"measure.timing.repeats={repeats}"]))
    tm = df[df.measurement == "timing"].set_index("metric")
    assert set(tm.index) == {"map_fit_time_s", "map_transform_time_s", "startup_time_s",
                             "compile_time_s"}  # the last: the run's own (rffbench.clock)
    for metric in ("map_fit_time_s", "map_transform_time_s"):
        r = tm.loc[metric]
        assert r.value > 0 and 0 <= r.spread and r.n_repeats == repeats and r.unit == "s"
    assert tm.note["map_transform_time_s"] == "225 rows"  # the training rows (75% of 300)
    # the kept attempts: `repeats` of each, none of them with numba compiling inside
    kept = [a for a in list(clock.LOG)[n0:] if a["kept"]]
    assert len(kept) >= 2 * repeats and all(a["events"] == 0 for a in kept)
    startup = tm.loc["startup_time_s"]
    assert (startup.value > 0) if not np.isnan(startup.value) else \
        startup.note.startswith("not the first run of this process")


def test_a_run_without_timing_records_only_the_runs_compile_time():
    df, _ = run(compose_config([*ONLY, "measure.timing.enabled=false",
                                "measure.learning.enabled=true", "measure.learning.repeats=1",
                                "measure.learning.exact=false"]))
    assert list(df[df.measurement == "timing"].metric) == ["compile_time_s"]
