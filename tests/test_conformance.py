"""rffbench.testing.check_feature_map: every registered map passes, broken maps fail
the check that is about their defect."""
import warnings

import numba
import numpy as np
import pytest

from rffbench.features import FEATURE_MAPS, RandomFourierFeatures
from rffbench.testing import FeatureMapCheckError, check_feature_map


MAP_KERNELS = [(name, kernel, {}) for name, cls in FEATURE_MAPS.items()
               for kernel in (cls.KERNELS or ("gaussian",))]
# the maps for any (shift-invariant) kernel, on kernels that are different in kind
MAP_KERNELS += [("rff", "skewed_chi2", {}), ("rff_pairs", "matern", {}), ("qmc", "cauchy", {}),
                ("rff", "rational_quadratic", {}), ("qmc", "rational_quadratic", {}),
                ("nystrom", "arccos1", {}), ("nystrom", "additive_chi2", {}),
                ("leverage", "skewed_chi2", {}), ("qmc", "arccos1", {}),
                # parameters that change the estimator
                ("orf", "gaussian", {"layout": "frame"}), ("orf", "arccos0", {"layout": "frame"}),
                ("ssr", "gaussian", {"radius": "rule"}), ("ssr", "arccos0", {"centre": False}),
                ("qmc", "gaussian", {"sequence": "generalized_halton"}),
                ("gauss_hermite", "arccos0", {"nodes": 2}),
                # the peer libraries' families beyond each map's first kernel
                ("orf", "linear", {}), ("sorf", "linear", {}), ("fastfood", "linear", {}),
                ("qmc", "linear", {}), ("circulant", "arccos1", {}), ("nystrom", "anova", {}),
                ("maclaurin", "polynomial", {"h01": True}), ("maclaurin", "exp_dot", {"h01": True}),
                ("compact", "polynomial", {"up_map": "maclaurin", "down": "gaussian"})]


@pytest.mark.parametrize("name,kernel,params", MAP_KERNELS,
                         ids=[f"{n}-{k}" + "".join(f"-{a}={b}" for a, b in p.items())
                              for n, k, p in MAP_KERNELS])
@pytest.mark.slow
def test_every_registered_map_passes(name, kernel, params):
    """At a lengthscale of 1.7 (a scale bug at l = 1 would hide; sklearn_skewed_chi2 has
    no scale: 1).  The estimate includes the map's kernel_offset_ (ssr's centre term)."""
    cls = FEATURE_MAPS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        report = check_feature_map(cls, kernel, params=params,
                                   lengthscale=1.0 if name == "sklearn_skewed_chi2" else 1.7)
    assert report.passed
    ran = {c.name for c in report.checks if c.status == "passed"}
    assert {"sklearn_api", "reproducible", "dtype", "sparse"} <= ran
    if cls.tags.variance is not None:
        assert {"unbiased", "variance", "bounded"} <= ran
    if not (cls(kernel=kernel, **params).get_tags().bias or cls.tags.deterministic):
        assert "unbiased" in ran


class WrongScale(RandomFourierFeatures):
    """Frequencies twice too large: a lengthscale of 1/2 instead of 1."""

    name = "wrong_scale"

    def _draw(self, d, m, rng):
        W, b = super()._draw(d, m, rng)
        return 2.0 * W, b


class BiasedOffset(RandomFourierFeatures):
    """Offsets in [0, pi/4) instead of [0, 2 pi): E z(x).z(y) = k(x-y) + (2/pi) k(x+y)."""

    name = "biased_offset"

    def _draw(self, d, m, rng):
        W, _ = super()._draw(d, m, rng)
        return W, rng.uniform(0.0, np.pi / 4, m)


class ThreadSeeded(RandomFourierFeatures):
    """A random stream that depends on the thread count."""

    name = "thread_seeded"

    def _draw(self, d, m, rng):
        rng = np.random.default_rng([int(rng.integers(2**32)), numba.get_num_threads()])
        return super()._draw(d, m, rng)


@pytest.mark.parametrize("cls,check", [(WrongScale, "unbiased"), (BiasedOffset, "unbiased"),
                                       (ThreadSeeded, "threads")])
def test_broken_maps_fail(cls, check):
    if check == "threads" and numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 numba threads")
    report = check_feature_map(cls, "gaussian", raise_on_fail=False, sklearn_checks=False)
    assert check in report.failed, str(report)
    with pytest.raises(FeatureMapCheckError, match=check):
        check_feature_map(cls, "gaussian", sklearn_checks=False)


def test_report_is_readable():
    report = check_feature_map(RandomFourierFeatures, "gaussian", sklearn_checks=False,
                               n_redraws=100)
    text = str(report)
    assert text.splitlines()[0] == "check_feature_map(rff, kernel=gaussian): passed"
    assert "standard errors" in report["unbiased"].detail


def test_redraws_that_agree_to_rounding_are_said_so_not_counted_in_standard_errors():
    """Nystroem with all 10 rows as landmarks reproduces k on the pairs up to rounding: the
    unbiasedness detail says so instead of a ratio to a standard error of ~1e-16."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = check_feature_map("nystrom", kernel="gaussian", raise_on_fail=False)
    (check,) = [c for c in report.checks if c.name == "unbiased"]
    assert "the redraws agree to rounding" in check.detail
    assert "e+" not in check.detail, check.detail
