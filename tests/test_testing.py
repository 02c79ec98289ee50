"""rffbench.testing: check_feature_map and its named checks; broken maps fail the check that is
about their defect (the run of every check over every registered map:
tests/contracts/test_conformance.py)."""
import warnings

import numba
import numpy as np
import pytest

from rffbench.features import RandomFourierFeatures
from rffbench.testing import CHECKS, FeatureMapCheckError, check_feature_map, map_case


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


class FalselyDeterministic(RandomFourierFeatures):
    """Frequencies 1.3 times too large, and a claim of determinism that would skip the
    unbiasedness check (the claim was never checked: the map passed)."""

    name = "falsely_deterministic"
    tags = {"deterministic": True}

    def _draw(self, d, m, rng):
        W, b = super()._draw(d, m, rng)
        return 1.3 * W, b


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


def test_a_claim_of_determinism_is_checked_and_a_false_one_is_checked_as_random():
    report = check_feature_map(FalselyDeterministic, "gaussian", raise_on_fail=False,
                               sklearn_checks=False)
    assert "reproducible" in report.failed and "unbiased" in report.failed, str(report)
    assert "tagged deterministic" in report["reproducible"].detail
    # a map that is deterministic keeps its claim (and its skipped unbiasedness check)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok = check_feature_map("sklearn_chi2", "additive_chi2", sklearn_checks=False,
                               lengthscale=1.0)
    assert ok["reproducible"].status == "passed" and ok["unbiased"].status == "skipped"


@pytest.mark.parametrize("kw,match", [
    (dict(alpha=0.0), r"alpha=0\.0 is not allowed: use a number in \[1e-12, 1\)"),
    (dict(alpha=1.0), r"alpha=1\.0 is not allowed"),
    (dict(alpha=float("nan")), r"alpha=nan is not allowed"),
    (dict(n_redraws=1), r"n_redraws=1 is not allowed: use an integer >= 30"),
    (dict(n_components=0), r"n_components=0 is not allowed"),
    (dict(d=0), r"d=0 is not allowed"),
    (dict(lengthscale=-1.0), r"lengthscale=-1\.0 is not allowed")])
def test_arguments_that_make_a_check_vacuous_are_refused(kw, match):
    """alpha = 0 made the tolerance infinite (a biased map passed); one redraw reported a
    correct map as failing."""
    from rffbench.errors import ConfigError

    with pytest.raises(ConfigError, match=match):
        check_feature_map("rff", "gaussian", sklearn_checks=False, **kw)


def test_one_check_runs_alone_and_the_gates_first():
    """check_feature_map(checks=[...]) runs the gates (construct, output) and those; a name
    that is not a check is refused in one line; a check called on a case is one row."""
    from rffbench.errors import ConfigError

    report = check_feature_map("rff", "gaussian", checks=["bounded"], n_redraws=30)
    assert [c.name for c in report.checks] == ["output float64", "output float32", "bounded"]
    rows = CHECKS["reproducible"](map_case("rff", "gaussian"))
    assert [(r.name, r.status) for r in rows] == [("reproducible", "passed")]
    with pytest.raises(ConfigError, match=r"checks='nope' is not allowed: use names of "
                                          r"construct, output"):
        check_feature_map("rff", checks=["nope"])
    broken = check_feature_map(WrongScale, "gaussian", checks=["unbiased"], raise_on_fail=False)
    assert broken.failed == ["unbiased"]
