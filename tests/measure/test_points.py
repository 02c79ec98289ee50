"""rffbench/measure/points.py: the point set M: its size (explicit, or null: the block's
default capped at the rows), refused before any work when impossible, and its rows."""
import zlib
from types import SimpleNamespace

import numpy as np
import pytest

from rffbench.errors import ConfigError
from rffbench.measure.points import resolve_n_points, sample_points


def _ctx(n_train, n_test=3, seed=0):
    rng = np.random.default_rng(1)
    data = SimpleNamespace(name="synthetic", X_train=rng.normal(size=(n_train, 2)),
                           X_test=rng.normal(size=(n_test, 2)))
    return SimpleNamespace(data=data, rng=lambda purpose: np.random.default_rng(
        [seed, zlib.crc32(purpose.encode())]))


def _cfg(n_points, rows="train", default=100):
    return SimpleNamespace(n_points=n_points, rows=rows, DEFAULT_N_POINTS=default)


def test_null_takes_the_default_capped_at_the_rows_and_says_so():
    assert resolve_n_points(_ctx(500), "bounds", _cfg(None)) == (
        100, "M = 100 training points (n_points=null: min(100, n_train))")
    n, note = resolve_n_points(_ctx(40), "bounds", _cfg(None))
    assert n == 40 and "min(100, n_train)" in note
    n, note = resolve_n_points(_ctx(40, n_test=7), "approximation", _cfg(None, "test_first"))
    assert (n, note) == (7, "M = the first 7 test points (n_points=null: min(100, n_test))")
    assert resolve_n_points(_ctx(40), "bounds", _cfg(12)) == (12, "M = 12 training points")


@pytest.mark.parametrize("n_train,n_test,cfg,says", [
    (30, 3, _cfg(31), r"^measure\.bounds\.n_points=31 is not allowed: dataset=synthetic has "
                      r"30 training points; use 2\.\.30 or null$"),
    (30, 3, _cfg(4, "test_first"), r"n_points=4 .* has 3 test points; use 2\.\.3 or null"),
    (1, 3, _cfg(None), r"n_points=null is not allowed here: .* has 1 training point and .*"
                       r"least 2; raise the data's rows$"),
    (30, 1, _cfg(None, "test_first"), r"raise dataset\.test_size \(or rows=train\)$"),
])
def test_an_impossible_size_is_one_line_naming_the_key(n_train, n_test, cfg, says):
    with pytest.raises(ConfigError, match=says):
        resolve_n_points(_ctx(n_train, n_test), "bounds", cfg)


def test_the_points_are_distinct_training_rows_seeded_by_the_run_and_the_purpose():
    ctx = _ctx(50)
    X = ctx.data.X_train
    assert sample_points(ctx, "bounds", 50) is X  # all of them: the rows themselves
    M = sample_points(ctx, "bounds", 10)
    rows = [int(np.flatnonzero((X == m).all(axis=1))[0]) for m in M]
    assert len(set(rows)) == 10 and rows == sorted(rows)  # distinct, in the data's order
    assert np.array_equal(M, sample_points(ctx, "bounds", 10))  # the same run: the same M
    assert not np.array_equal(M, sample_points(ctx, "variance", 10))
    assert not np.array_equal(M, sample_points(_ctx(50, seed=1), "bounds", 10))
