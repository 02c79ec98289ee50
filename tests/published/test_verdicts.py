"""rffbench/published/verdicts.py: the comparison's test agrees on the same protocol, finds
a real difference, at its stated power, per family."""

import numpy as np

from rffbench.published import compare


# ---- the test --------------------------------------------------------------------------
def _points(published, shift, rng, S=5, R=100, groups=4, per=6):
    """Simulated points: per group a sample effect (3%), per seed one, redraw noise 20%."""
    out = []
    for g in range(groups):
        for i in range(per):
            mu = 0.1 * (i + 1)
            sample = np.exp(rng.normal(0, 0.03, size=S))
            runs = [mu * s * (1 + rng.normal(0, 0.2, size=R)) for s in sample]
            pub_runs = mu * shift * np.exp(rng.normal(0, 0.03)) * (1 + rng.normal(0, 0.2, 500))
            out.append(dict(published=pub_runs.mean() if published else mu,
                            pub_sd=pub_runs.std(ddof=1), pub_n=500,
                            means=[r.mean() for r in runs], sds=[r.std(ddof=1) for r in runs],
                            redraws=[R] * S, group=g))
    return out


def test_compare_agrees_on_the_same_protocol_and_finds_a_real_difference():
    rng = np.random.default_rng(11)
    same = compare(_points(True, 1.0, rng))
    assert all(r["verdict"] == "agrees" for r in same), [r["z"] for r in same]
    z = np.array([r["z"] for r in same])
    assert abs(z.mean()) < 0.6 and 0.5 < z.std() < 1.6  # calibrated: roughly N(0, 1)
    assert all(r["pi_lo"] < r["ours"] < r["pi_hi"] for r in same)
    off = compare(_points(True, 1.3, rng))  # a 30% difference
    assert sum(r["verdict"] == "differs" for r in off) >= 20
    one = compare([dict(_points(True, 1.0, rng, S=1)[0], group="x")])
    assert one[0]["verdict"] == "needs >= 2 seeds"


def test_a_verdicts_detectable_ratio_is_found_with_its_stated_power():
    """Simulated replicates of one family (6 points, 5 seeds, the model of _points): at no
    shift the tests reject rarely; at the detectable ratio each point states, its test
    rejects with about POWER (0.8; the sample-to-sample variance is estimated from 5 seeds,
    so the stated ratio is itself noisy: 0.6-0.95)."""
    from rffbench.published import POWER

    rng = np.random.default_rng(3)
    det = np.median([r["detectable"] for _ in range(20)
                     for r in compare(_points(True, 1.0, rng, groups=1))])
    hits = [r["verdict"] == "differs" for _ in range(150)
            for r in compare(_points(True, det, rng, groups=1))]
    assert 0.6 <= np.mean(hits) <= 0.95 and abs(np.mean(hits) - POWER) < 0.2, np.mean(hits)
    none = [r["verdict"] == "differs" for _ in range(150)
            for r in compare(_points(True, 1.0, rng, groups=1))]
    assert np.mean(none) < 0.03


def test_a_consistent_or_a_one_method_shift_fails_its_family_not_a_correct_one():
    """Per family (a group): a 1.25x shift of every point fails the common-ratio test; a
    1.25x shift of a third of the points (one method off) fails Cochran's Q; the right
    points agree as a family, and a point that cannot detect 1.25x is inconclusive."""
    from rffbench.published import INCONCLUSIVE_RATIO

    rng = np.random.default_rng(17)
    right = compare(_points(True, 1.0, rng))
    assert {r["family_verdict"] for r in right} == {"agrees"}
    assert all(r["family_lo"] < 1 < r["family_hi"] for r in right)
    shifted = compare(_points(True, 1.25, rng))
    assert {r["family_verdict"] for r in shifted} == {"differs"}
    assert all(0.75 < r["family_ratio"] < 0.85 for r in shifted)  # ours / published: 1/1.25
    pts = _points(True, 1.0, rng)
    for i, p in enumerate(pts):
        if i % 6 < 2:  # two of each group's six points: their published mean 1.25x
            p["published"] *= 1.25
    one = compare(pts)
    fams = {(r["family_q"], r["family_q_crit"], r["family_verdict"]) for r in one}
    assert all(q > crit and v == "differs" for q, crit, v in fams), fams
    noisy = _points(True, 1.0, rng)
    for p in noisy:  # the paper's mean over 2 runs half its size apart
        p.update(pub_sd=0.5 * p["published"], pub_n=2)
    for r in compare(noisy):
        assert r["detectable"] > INCONCLUSIVE_RATIO and r["verdict"] == "inconclusive"


def _each(shift, rng, S=10, n_pub=10, per=40):
    """Simulated points whose runs each draw their own sample: a skewed error (log-normal,
    25% spread: sample and draw together), published and ours from the same law."""
    out = []
    for i in range(per):
        mu = 0.05 * (i + 1)
        ours = mu * np.exp(rng.normal(0, 0.25, S))
        theirs = mu * shift * np.exp(rng.normal(0, 0.25, n_pub))
        out.append(dict(published=theirs.mean(), pub_sd=theirs.std(ddof=1), pub_n=n_pub,
                        means=ours, sds=np.zeros(S), redraws=[1] * S, group="g",
                        samples="each"))
    return out


def test_welchs_test_agrees_on_the_same_protocol_and_finds_a_real_difference():
    """samples=each: Welch's t of two independent samples, Bonferroni over the points."""
    rng = np.random.default_rng(5)
    same = compare(_each(1.0, rng))
    t = np.array([r["z"] for r in same])
    # 10 runs a side at a 25% spread cannot detect 1.25x: within, but inconclusive
    assert all(r["verdict"] == "inconclusive" and r["detectable"] > 1.25 for r in same)
    assert abs(t.mean()) < 0.5 and 0.6 < t.std() < 1.5  # roughly t-distributed
    assert all(r["pi_lo"] < r["published"] < r["pi_hi"] for r in same)
    crit = same[0]["crit"]
    assert 3.0 < crit < 4.5  # the t quantile at 0.05 / 80 for ~15 degrees of freedom
    off = compare(_each(2.0, rng))  # twice the error: t ~ 5.6 on average
    assert sum(r["verdict"] == "differs" for r in off) >= 30
    one = compare([dict(_each(1.0, rng, S=1)[0])])
    assert one[0]["verdict"] == "needs >= 2 seeds"
