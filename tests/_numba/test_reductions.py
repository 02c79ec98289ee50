"""rffbench/_numba/reductions.py: the error matrices' reductions against numpy."""

import numpy as np

from rffbench import _numba as nbk


def test_abs_max_sum_sq(rng):
    E = rng.normal(size=(50, 60))
    mx, sa, s2 = nbk.abs_max_sum_sq(E)
    assert mx == np.abs(E).max()
    assert np.isclose(sa, np.abs(E).sum(), rtol=1e-13)
    assert np.isclose(s2, (E**2).sum(), rtol=1e-13)
