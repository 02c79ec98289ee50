"""Bound formulas: hand-computed values, monotonicity, inversion round-trips."""
import math

import pytest

from rffbench import theory as th


def test_hand_computed_values():
    # 2 exp(-100 * 0.01 / 8) and / 4
    assert th.hoeffding(0.1, 100, pairs=False) == pytest.approx(2 * math.exp(-0.125), rel=1e-15)
    assert th.hoeffding(0.1, 100, pairs=True) == pytest.approx(2 * math.exp(-0.25), rel=1e-15)
    # pairs Bernstein at k = 0.5, k2 = 0.0625 (Gaussian: k2 = k^4): V1 = 0.5 + 0.03125 - 0.25
    v1 = 0.28125
    want = 2 * math.exp(-50 * 0.01 / (2 * v1 + (2 / 3) * 1.5 * 0.1))
    assert th.bernstein(0.1, 100, 0.5, 0.0625, pairs=True) == pytest.approx(want, rel=1e-14)
    # Rahimi-Recht: 256 * (2 * 3 / 0.5)^2 * exp(-1000 * 0.25 / (4 * 5))
    assert th.rahimi_recht(0.5, 1000, 3, 2.0, 3.0) == pytest.approx(
        256 * 144 * math.exp(-12.5), rel=1e-14)
    assert th.rahimi_recht(0.5, 1000, 3, 2.0, 3.0, output_dim=True) == pytest.approx(
        256 * 144 * math.exp(-6.25), rel=1e-14)
    # beta_2 = (1 + 1) * 2^(14/4)
    assert th.beta_d(2) == pytest.approx(2 * 2**3.5, rel=1e-14)


def test_beta_d_maximum_is_66_at_64():
    vals = {d: th.beta_d(d) for d in range(1, 2000)}
    dmax = max(vals, key=vals.get)
    assert dmax == 64 and 65.5 < vals[64] < 66.5


BOUNDS = {
    "hoeffding": lambda e, D: th.hoeffding(e, D, True),
    "bernstein": lambda e, D: th.bernstein(e, D, 0.3, 0.01, False),
    "rahimi_recht": lambda e, D: th.rahimi_recht(e, D, 10, 3.0, 2.0),
    "ss_pairs": lambda e, D: th.sutherland_schneider(e, D, 10, 3.0, 2.0, True),
    "ss_rff": lambda e, D: th.sutherland_schneider(e, D, 10, 3.0, 2.0, False),
}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_monotone_and_inversion_round_trip(name):
    f = BOUNDS[name]
    eps = [0.01 * 1.3**i for i in range(30)]
    vals = [f(e, 4096) for e in eps]
    assert all(a >= b for a, b in zip(vals, vals[1:]))  # non-increasing in eps
    assert all(f(0.2, D) >= f(0.2, 2 * D) for D in (256, 1024, 4096))  # and in D
    for delta in (0.05, 0.01):
        e = th.invert_bound(lambda x: f(x, 4096), delta)
        assert f(e, 4096) == pytest.approx(delta, rel=1e-6)


def test_sriperumbudur_szabo_decreases_like_one_over_sqrt_m():
    a = th.sriperumbudur_szabo_eps(0.05, 1000, 5, 2.0, 3.0)
    b = th.sriperumbudur_szabo_eps(0.05, 4000, 5, 2.0, 3.0)
    assert b == pytest.approx(a / 2, rel=1e-12)


def test_invert_bound_rejects_bad_delta():
    with pytest.raises(ValueError, match="delta"):
        th.invert_bound(lambda e: 0.0, 1.5)
