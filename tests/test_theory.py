"""Bound formulas: hand-computed values, monotonicity, inversion round-trips; the exact
ORF variance and the pointwise MSE formulas against Monte Carlo."""
import math

import numpy as np
import pytest

from rffbench import theory as th
from rffbench.errors import ConfigError


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
    "szs_pairs": lambda e, D: th.sriperumbudur_szabo(e, D / 2, 10, 3.0, 2.0),
    "bernstein_v": lambda e, D: th.bernstein_v(e, D, 0.4, 1.0, True),
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
        # the D a bound requires for a given eps: the same inversion, in D
        D = th.invert_bound(lambda x: f(e, x), delta, lo=1.0, hi=1e18)
        assert D == pytest.approx(4096, rel=1e-6)


def test_error_bound_at_an_enormous_D_is_the_closed_form_not_a_search_floor():
    """Hoeffding's bound inverted in closed form, eps = sqrt(4 log(2 / delta) / D) for pairs:
    the inversion used to stop at 1e-12 and return it as the bound (1000x too large)."""
    D, delta = 10**30, 0.01
    got = th.error_bound(D, delta, d=8, diam=8.0, lengthscale=3.0)
    eps = got.set_index("method").loc["hoeffding", "eps_bound"]
    assert eps == pytest.approx(math.sqrt(4 * math.log(2 / delta) / D), rel=1e-8)


def test_sutherland_schneider_hand_values():
    # pairs, d = 2: beta_2 (s l / eps)^(4/4) exp(-D eps^2 / 32)
    assert th.sutherland_schneider(0.5, 100, 2, 2.0, 3.0, True) == pytest.approx(
        2 * 2**3.5 * 12.0 * math.exp(-100 * 0.25 / 32), rel=1e-14)
    # rff map: 98 (s l / eps)^2 exp(-D eps^2 / (32 (d + 2)))
    assert th.sutherland_schneider(0.5, 1000, 3, 2.0, 3.0, False) == pytest.approx(
        98 * 144 * math.exp(-1000 * 0.25 / 160), rel=1e-14)


def test_sriperumbudur_szabo_hand_value_and_tail_form():
    d, l, s, m = 4, 1.5, 2.0, 10_000
    h = 32 * math.sqrt(2 * d * math.log(2 * l + 1)) + 32 * math.sqrt(2 * d * math.log(s + 1)) \
        + 16 * math.sqrt(2 * d / math.log(2 * l + 1))
    want = (h + math.sqrt(2 * math.log(20))) / math.sqrt(m)
    assert th.sriperumbudur_szabo_eps(0.05, m, d, s, l) == pytest.approx(want, rel=1e-14)
    # the tail form is its inverse: P[sup >= eps(delta)] <= delta; below h/sqrt(m) no statement
    assert th.sriperumbudur_szabo(want, m, d, s, l) == pytest.approx(0.05, rel=1e-12)
    assert th.sriperumbudur_szabo(0.9 * h / math.sqrt(m), m, d, s, l) == 1.0


def _by_method(bounds):
    return {b.method: b for b in bounds}


def test_which_bounds_apply():
    pairs = _by_method(th.uniform_bounds("pairs", 5, 5.0, 2.0, 0.5, 1.0, "rff_pairs"))
    assert list(pairs) == list(th.BOUND_METHODS)
    assert all(b.prob is not None for b in pairs.values())
    assert not pairs["hoeffding"].uniform and pairs["sutherland_schneider"].uniform
    assert pairs["rahimi_recht"].eps_max == pytest.approx(math.sqrt(5.0) * 2.0)
    # the bounds evaluate the formulas they name
    assert pairs["rahimi_recht"].prob(0.3, 512) == th.rahimi_recht(0.3, 512, 5, math.sqrt(5), 2.0)
    assert pairs["bernstein"].prob(0.1, 512) == th.bernstein_v(0.1, 512, 0.5, 1.0, True)
    rff = _by_method(th.uniform_bounds("rff", 5, 5.0, 2.0, 0.5, 1.0, "rff"))
    assert [m for m, b in rff.items() if b.prob is None] == [
        "rahimi_recht", "rahimi_recht_output_dim", "sriperumbudur_szabo"]
    lap = _by_method(th.uniform_bounds("pairs", 5, math.inf, 2.0, 0.5, 1.0, "rff_pairs"))
    assert [m for m, b in lap.items() if b.prob is None] == list(th.UNIFORM_METHODS)
    assert all("infinite" in lap[m].note for m in th.UNIFORM_METHODS)
    other = th.uniform_bounds(None, 5, 5.0, 2.0, map_name="orf")
    assert all(b.prob is None and "features=orf" in b.note for b in other)
    assert all(b.prob is None for b in th.pointwise_bounds(None, 0.5, 0.1, "orf"))


def test_sriperumbudur_szabo_decreases_like_one_over_sqrt_m():
    a = th.sriperumbudur_szabo_eps(0.05, 1000, 5, 2.0, 3.0)
    b = th.sriperumbudur_szabo_eps(0.05, 4000, 5, 2.0, 3.0)
    assert b == pytest.approx(a / 2, rel=1e-12)


def test_invert_bound_rejects_bad_delta():
    with pytest.raises(ValueError, match="delta"):
        th.invert_bound(lambda e: 0.0, 1.5)


# ---- the exact ORF variance (derived here) and the MSE formulas of the variance measurement
def test_chi_cos_mean_is_the_chi_characteristic_function(rng):
    from rffbench.theory import chi_cos_mean

    for d in (1, 3, 16, 64):
        s = np.sqrt(rng.chisquare(d, size=400_000))
        for t in (0.1, 0.5, 1.3):
            mc = np.cos(s * t)
            assert chi_cos_mean(t, d) == pytest.approx(mc.mean(), abs=5 * mc.std() / 632)
    # a d-dimensional Gaussian's direction averages it back to exp(-t^2 / 2) (d = 1: s = |z|)
    assert chi_cos_mean(0.7, 1) == pytest.approx(np.exp(-0.245), rel=1e-12)


@pytest.mark.parametrize("d,m,z", [(3, 3, 1.2), (6, 6, 0.8), (6, 9, 1.5), (16, 8, 2.0)])
@pytest.mark.slow
def test_orf_variance_matches_the_orf_map_over_redraws(d, m, z):
    """Var of the ORF pair estimate (the map's own redraws) against theory.orf_variance, within
    5 standard errors of a sample variance; and below the i.i.d. rff_pairs variance."""
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import make_kernel
    from rffbench.theory import orf_variance

    rng = np.random.default_rng(d * 100 + m)
    x = rng.normal(size=d)
    u = rng.normal(size=d)
    y = x + z * 1.3 * u / np.linalg.norm(u)  # lengthscale 1.3
    P = np.vstack([x, y])
    R = 6000
    est = np.empty(R)
    for r in range(R):
        Z = FEATURE_MAPS["orf"](kernel=make_kernel("gaussian", lengthscale=1.3),
                                n_components=2 * m, random_state=r).fit(P).transform(P)
        est[r] = Z[0] @ Z[1]
    s2 = est.var(ddof=1)
    c = est - est.mean()
    se = np.sqrt((np.mean(c ** 4) - s2 ** 2) / R)
    want = orf_variance(z, m, d)
    assert abs(s2 - want) <= 5 * se, (s2, want, se)
    assert want < 0.5 * (1 - np.exp(-z * z)) ** 2 / m  # ORF beats i.i.d.


def test_estimate_mse_formulas():
    from rffbench.kernels import make_kernel
    from rffbench.theory import VARIANCE_TERMS, estimate_mse, orf_variance, positive_variance

    k = make_kernel("gaussian", lengthscale=1.7).fit(None)
    x, y = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.4, -0.1])
    kk, k2 = k.k_of_delta(x - y), k.k_of_delta(2 * (x - y))
    assert estimate_mse("rff", k, x, y, 64) == pytest.approx(VARIANCE_TERMS["rff"](kk, k2) / 64)
    assert estimate_mse("rff_pairs", k, x, y, 64) == pytest.approx(
        VARIANCE_TERMS["pairs"](kk, k2) / 64)
    assert estimate_mse("positive", k, x, y, 64) == pytest.approx(
        positive_variance(x / 1.7, y / 1.7) / 64)
    assert estimate_mse("orf", k, x, y, 64) == pytest.approx(
        orf_variance(np.linalg.norm(x - y) / 1.7, 32, 3))
    assert estimate_mse("orf", k, x, y, 64, layout="frame") is None
    assert estimate_mse("ssr", k, x, y, 64) is None
    assert estimate_mse("positive", k, x, -x, 64) == 0.0  # exact at x = -y, never < 0
    # a pair a run refuses is refused here too, not given "no formula"
    with pytest.raises(ConfigError, match="features=rff is not allowed with kernel=arccos1"):
        estimate_mse("rff", make_kernel("arccos1", lengthscale=1.0).fit(None), x, y, 64)
    # a kernel shift-invariant in warped coordinates (skewed chi2: log(x + c)): the formula
    # takes k and k(2 delta) there, as the Gram matrix does (it took raw x - y: 0.0140 for
    # 0.0095 at this pair)
    sk = make_kernel("skewed_chi2", lengthscale=1.0).fit(None)
    u, v = np.array([0.2, 3.0]), np.array([1.5, 0.1])
    want = VARIANCE_TERMS["rff"](sk.gram(u[None], v[None])[0, 0],
                                 sk.gram_twice(u[None], v[None])[0, 0]) / 64
    assert estimate_mse("rff", sk, u, v, 64) == pytest.approx(want, rel=1e-12)


def test_calculators_refuse_what_a_run_refuses():
    """maclaurin's H0/1 with D <= d + 1 gave a negative mean squared error (-4.3e-4 at d = 5,
    D = 3): refused as the run refuses it; D_max = inf searched for ever; complex input lost
    its imaginary part with only a warning."""
    import warnings

    from rffbench.kernels import make_kernel

    k = make_kernel("exp_dot", lengthscale=1.0).fit(None)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=5) * 0.3, rng.normal(size=5) * 0.3
    with pytest.raises(ConfigError, match=r"D=3 is not allowed for features=maclaurin .* use "
                                          r"D > 6"):
        th.estimate_mse("maclaurin", k, x, y, 3, h01=True)
    assert th.estimate_mse("maclaurin", k, x, y, 7, h01=True) > 0
    with pytest.raises(ConfigError, match=r"D_max=inf is not allowed: use a number in \[1, "):
        th.features_needed(0.1, 0.05, d=2, diam=1.0, D_max=float("inf"))
    with pytest.raises(ConfigError, match=r"D=10+ is not allowed: use an integer in 1\.\.1e300"):
        th.error_bound(10**400, 0.05, d=2, diam=1.0)  # (an OverflowError traceback)
    g = make_kernel("gaussian", lengthscale=1.0).fit(None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="x must be a non-empty 1-d array of real numbers"):
            th.estimate_mse("rff", g, x + 1j, y, 8)
        with pytest.raises(ValueError, match="delta must be a non-empty 1-d or 2-d array"):
            th.estimator_variance(np.array([0.1j, 0.2]), 8)
        with pytest.raises(ValueError, match="y has NaN or infinite values"):
            th.estimate_mse("rff", g, x, y * np.nan, 8)
    # the kernel's values on the pair, as a run checks its data
    from rffbench.errors import DataError

    with pytest.raises(DataError, match="kernel=exp_dot"):
        th.estimate_mse("maclaurin", make_kernel("exp_dot", lengthscale=0.05).fit(None),
                        x * 10, y * 10, 64)
