"""rffbench/measure/base.py: what a measurement gets without writing it (its defaults),
which of its values vary from run to run, and its --help line."""
import pytest

from rffbench.measure import MEASUREMENTS
from rffbench.measure.base import MEASURED, Measurement


class Bare(Measurement):
    """Counts nothing.  A second sentence that --help leaves out."""

    name = "bare"
    thread_dependent = {"sum_*": "a BLAS reduction"}


def test_a_measurement_gets_the_hooks_it_does_not_write():
    m = Bare()
    assert m.check(None, None) is None and m.needs(None, None) == []
    assert m.tables(None, {}) == [] and m.figures() == {}
    with pytest.raises(NotImplementedError):
        m.run(None, None)
    assert (Bare.selection_keys, Bare.conditioned_by, Bare.settings) == ((), (), ())


@pytest.mark.parametrize("metric,kind", [
    ("train_time_s", "measured"), ("peak_rss_mb", "measured"), ("speedup_vs_sklearn", "measured"),
    ("transform/rff process_ratio", "measured"), ("dask_workers_lost", "measured"),
    ("sum_of_squares", "threads"), ("rel_fro_error", None), ("time_s_total", None),
])
def test_measured_times_and_thread_dependent_sums_are_named(metric, kind):
    got = Bare().varies(metric)
    assert (got and got[0]) == kind
    if kind == "threads":
        assert got[1] == "a BLAS reduction"


def test_every_registered_measurement_has_a_name_a_block_and_a_help_line():
    assert MEASURED and Bare.summary() == "Counts nothing"
    for name, cls in MEASUREMENTS.items():
        assert cls.name == name and cls.Config is not None
        assert "enabled" in cls.Config.__dataclass_fields__, name
        line = cls.summary()
        assert line and "\n" not in line and not line.endswith("."), (name, line)
