"""rffbench/memory.py: the memory plan of a run: what cannot fit is refused before any work,
naming the key and the largest value that fits."""
import re

import pytest

from rffbench import memory
from tests.helpers import one_line_error

# --------------------------------------------------------------------------
# memory: refused before allocating, naming the key and the largest value that fits
# --------------------------------------------------------------------------
ONLY_TIMING = ["measure.approximation.enabled=false", "measure.bounds.enabled=false",
               "measure.learning.enabled=false"]


@pytest.mark.parametrize("overrides,key", [
    (["D=1000000000", *ONLY_TIMING], "D"),
    (["D=1000000000"], "D"),
    (["dataset=synthetic", "dataset.n=100000000", "dataset.d=100"], "dataset.n"),
    (["dataset=synthetic", "dataset.n=400000", "dataset.d=2",
      "measure.approximation.n_points=250000"], "measure.approximation.n_points"),
    (["dataset=synthetic", "dataset.n=200", "measure.bounds.trials=100000000000",
      "measure.approximation.enabled=false", "measure.learning.enabled=false"],
     "measure.bounds.trials"),
    (["dataset=synthetic", "dataset.n=400000", "dataset.d=2", "kernel.median_subsample=300000",
      *ONLY_TIMING, "measure.timing.enabled=false", "measure.approximation.enabled=true",
      "measure.approximation.n_points=100"], "kernel.median_subsample"),
])
def test_memory_plan_names_the_key_and_what_fits(tmp_path, capsys, overrides, key):
    err = one_line_error(tmp_path, capsys, overrides)
    m = re.search(rf"{re.escape(key)}=(\d+) is not allowed: .* needs .* at its peak, more than "
                  rf"80% of the .* available; {re.escape(key)} <= (\d+) fits", err)
    assert m, err
    assert 1 <= int(m.group(2)) < int(m.group(1))


def test_plan_finds_the_largest_value_that_fits():
    avail = 1e9
    plan = memory.Plan().add("a", [memory.Need("a D x D matrix", lambda v: 8.0 * v["D"] ** 2,
                                               {"D": (100000, 1)})])
    with pytest.raises(memory.ConfigError) as exc:
        plan.check(avail=avail)
    fit = int(re.search(r"D <= (\d+) fits", str(exc.value)).group(1))
    assert 8.0 * fit**2 <= 0.8 * avail < 8.0 * (fit + 1) ** 2
    memory.Plan().add("a", [memory.Need("small", lambda v: 1.0, {"D": (5, 1)})]).check(avail)


def test_memory_plan_of_a_file_is_made_before_loading(tmp_path, capsys, monkeypatch):
    path = tmp_path / "big.csv"
    path.write_text("a,b,y\n" + "1,2,0\n3,4,1\n" * 2000)
    monkeypatch.setattr(memory, "available_bytes", lambda: 40_000.0)
    from rffbench.datasets import files  # the loader of a user's file
    monkeypatch.setattr(files, "available_bytes", lambda: 40_000.0)
    err = one_line_error(tmp_path, capsys, ["dataset=file", f"dataset.path={path}"])
    assert f"dataset.path='{path}': loading its 4000 x 2 values needs" in err
