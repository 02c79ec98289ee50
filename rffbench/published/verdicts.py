"""The test that compares a paper's published points with ours (:func:`compare`), the
power it states beside each verdict and its quantiles.

The test (:func:`compare`).  A paper's point is the mean over its runs on one sample of
the data (quffka draws X and Y once per dataset), so it differs from the expectation of
the protocol by its runs' noise *and* by the luck of that sample.  Ours are S seeds (S
samples of the data), each the mean m_s over R redraws of the map.  On the log scale
(sample effects are relative), with L_s = log m_s:

* the sample-to-sample variance sigma_B^2 is pooled over the points that share a data
  sample (a dataset and kernel): the average over them of var_s(L_s) minus the redraw
  noise w = (sd_s / m_s)^2 / R (delta method), weighted by their S - 1 degrees of
  freedom, floored at 0;
* the published mean p agrees when |log p - mean_s L_s| <= z* sqrt(V), V = sigma_B^2
  (its own sample) + (sigma_B^2 + w) / S (ours) + (se_p / p)^2 (its runs' noise, se_p
  over its *distinct* runs), z* the two-sided normal quantile at a 5% family-wise error
  over the paper's points compared (Bonferroni): a "differs" is evidence, not one of the
  5% of points a per-point test would flag by chance.

It needs >= 2 seeds in the point's group (the sample's effect cannot be measured from
one).

What each verdict could detect (its power).  Beside each point, ``detectable``: the
smallest ratio ours / published (either way) that its test would find with probability
``POWER`` (80%) at its sample sizes, as the test uses them: exp((z* + z_0.8) sqrt(V)) on
the log scale; for Welch's test 1 + (t* + t_0.8) sqrt(var) / published (or its inverse
below).  A point within its interval whose test could not detect ``INCONCLUSIVE_RATIO``
(1.25x) is **inconclusive**, not "agrees": the counts keep agree / inconclusive / differ
apart.

Whole datasets (families).  The points of a family (a dataset and kernel of a paper: the
``group``) are also tested together, since a consistent 1.3x shift can pass point by point:
with d_i = log published_i - mean log ours_i and weights 1/V_i,

* the common ratio exp(-sum w_i d_i / sum w_i) with its interval, its variance the parts of
  V_i that the points may share counted as fully shared (the sample-to-sample term
  sigma_B^2 (1 + 1/S): every point of a family is measured on the same samples; for
  Welch's test all of it, since the published seeds' splits repeat across sizes), the
  rest (redraw noise, the published standard errors) as independent: a consistent shift;
* Cochran's Q = sum (d_i - mean_w d)^2 / V_i against chi-square with k - 1 degrees of
  freedom (every part counted as independent, which shared parts only make smaller):
  points that disagree with each other (one method off);

each at the family-wise level over 2 tests per family (Bonferroni).  The family's verdict
is "differs" when either test rejects, else "agrees", or "inconclusive" where its common
ratio could not detect 1.25x.

Where the published runs' spread holds all that varies between our seeds (``Paper.samples
= "each"``: dp-rfs draws a split per seed, so the sample's effect is in both spreads; the
Liu-survey replication's accuracies and ours vary only by the map's draw, on the same
rows), the two means are compared as two independent samples of the same protocol:
Welch's t = (p - mean_s m_s) / sqrt(sd_p^2 / n_p + sd_m^2 / S) (sd_m: the spread of our
seeds' means, redraws included), its Welch-Satterthwaite degrees of freedom, and the same
family-wise 5% (Bonferroni) over the points compared.
"""
from __future__ import annotations

import math

#: the power at which a verdict's detectable ratio is stated
POWER = 0.8
#: an "agrees" whose test could not detect this ratio (either way) is "inconclusive"
INCONCLUSIVE_RATIO = 1.25


def compare(points, level=0.95):
    """The test of the module docs for a paper's points at once.

    ``points``: a list of dicts, one per published point: ``published`` (its mean),
    ``pub_sd``, ``pub_n`` (the published runs that differ: their effective number),
    ``means``, ``sds``, ``redraws`` (per seed of ours: the mean, standard deviation and
    number of redraws), ``group`` (points that share a data sample: the sample-to-sample
    variance is pooled over a group) and optionally ``samples`` ("one", the default, or
    "each": the published runs drew a sample each; Welch's test).  Returns one dict per
    point: ``ours`` (the mean over the seeds) with its t interval (``ours_lo``,
    ``ours_hi``), the published t interval (``pub_lo``, ``pub_hi``), the prediction interval
    (``pi_lo``, ``pi_hi``), ``ratio`` (ours / published), ``seeds``, ``redraws``,
    ``sigma_between`` (the pooled relative sample-to-sample spread; NaN for Welch's test),
    ``z`` (the standardised gap; Welch's t), ``crit`` (its critical value), ``detectable``
    (the ratio its test finds with probability POWER), ``verdict`` (agrees, inconclusive,
    differs, or needs >= 2 seeds) and its family's test (module docs): ``family_ratio``
    (ours / published) with ``family_lo``, ``family_hi``, ``family_z``, ``family_q`` and
    ``family_q_crit``, ``family_points``, ``family_detectable`` and ``family_verdict``.

    Parameters
    ----------
    points : list of dict
        One per published point (above).
    level : float, default 0.95
        The confidence of the intervals; the family-wise level of the verdicts.

    Returns
    -------
    list of dict
    """
    import numpy as np
    from scipy.special import ndtri

    prepared, sigma2 = _prepared(points)
    n_tests = sum(1 for p, m, _, _ in prepared
                  if (m.size >= 2 if p["each"] else p["group"] in sigma2))
    alpha = (1 - level) / (2 * max(n_tests, 1))  # one tail of each test, Bonferroni
    crit = float(ndtri(1 - alpha))
    out = []
    for p, m, L, w in prepared:
        pub, S = float(p["published"]), m.size
        n_pub = int(p["pub_n"])
        se_pub = float(p["pub_sd"]) / math.sqrt(n_pub) if n_pub > 1 else 0.0
        tq_pub = t_quantile(level, n_pub - 1) if n_pub > 1 else math.nan
        mean = float(m.mean())
        sd_seeds = float(m.std(ddof=1)) if S > 1 else math.nan
        tq = t_quantile(level, S - 1) if S > 1 else math.nan
        res = dict(published=pub, pub_lo=pub - tq_pub * se_pub, pub_hi=pub + tq_pub * se_pub,
                   ours=mean, ours_lo=mean - tq * sd_seeds / math.sqrt(S),
                   ours_hi=mean + tq * sd_seeds / math.sqrt(S), seeds=S,
                   redraws=int(np.sum(p["redraws"])), ratio=mean / pub if pub else math.nan)
        if p["each"]:
            res.update(_welch(pub, float(p["pub_sd"]), n_pub, m, alpha))
            out.append(res)
            continue
        sb2 = sigma2.get(p["group"])
        if sb2 is None:
            res.update(pi_lo=math.nan, pi_hi=math.nan, sigma_between=math.nan, z=math.nan,
                       verdict="needs >= 2 seeds", crit=math.nan, detectable=math.nan)
            out.append(res)
            continue
        # log(published) - mean log(ours): the published sample's own effect, ours' mean over
        # S samples, and both means' redraw noise
        var = sb2 + (sb2 + float(w.mean())) / S + (se_pub / pub) ** 2
        centre = float(L.mean())
        half = crit * math.sqrt(var)
        z = (math.log(pub) - centre) / math.sqrt(var) if var > 0 else math.inf
        detectable = math.exp((crit + float(ndtri(POWER))) * math.sqrt(var))
        res.update(pi_lo=math.exp(centre - half), pi_hi=math.exp(centre + half),
                   sigma_between=math.sqrt(sb2), z=z, crit=crit, detectable=detectable,
                   verdict=_verdict(abs(z) <= crit, detectable),
                   _d=math.log(pub) - centre, _var=var, _shared=sb2 * (1 + 1.0 / S))
        out.append(res)
    _families(out, [p.get("group") for p in points], level)
    for r in out:
        for k in ("_d", "_var", "_shared"):
            r.pop(k, None)
    return out


def _prepared(points):
    """Each point as (point with ``each``, our means, their logs, each seed's log-mean redraw
    noise w (the delta method)), and per group the pooled sample-to-sample variance of the
    logs less the redraw noise (at least 0), over the points with >= 2 seeds."""
    import numpy as np

    prepared = []
    pooled = {}  # group -> [sum of (s_b^2 - w), sum of dof]
    for p in points:
        p = dict(p, each=p.get("samples", "one") == "each")
        m = np.asarray(p["means"], dtype=np.float64)
        s = np.asarray(p["sds"], dtype=np.float64)
        r = np.asarray(p["redraws"], dtype=np.float64)
        L = np.log(m)
        w = np.where(r > 1, (s / m) ** 2 / r, 0.0)  # each seed's log-mean noise (delta method)
        prepared.append((p, m, L, w))
        if m.size >= 2:
            acc = pooled.setdefault(p["group"], [0.0, 0])
            acc[0] += (m.size - 1) * (float(np.var(L, ddof=1)) - float(w.mean()))
            acc[1] += m.size - 1
    return prepared, {g: max(0.0, a / k) for g, (a, k) in pooled.items() if k > 0}


def _verdict(within, detectable):
    """agrees / inconclusive (within, but the test could not detect INCONCLUSIVE_RATIO) /
    differs."""
    if not within:
        return "differs"
    return "agrees" if detectable <= INCONCLUSIVE_RATIO else "inconclusive"


def _families(out, groups, level):
    """Each point's family verdict (module docs), written into its dict: family_ratio with
    its interval (family_lo, family_hi), family_z, family_q (Cochran's Q) with its
    family_q_crit, family_detectable and family_verdict; a family of one point takes the
    point's verdict."""
    import numpy as np
    from scipy.special import ndtri
    from scipy.stats import chi2

    fams = {}
    for i, (r, g) in enumerate(zip(out, groups)):
        if "_d" in r and math.isfinite(r["_d"]) and r["_var"] > 0:
            fams.setdefault(g, []).append(i)
    several = {g: idx for g, idx in fams.items() if len(idx) >= 2}
    alpha = (1 - level) / (2 * max(2 * len(several), 1))  # one tail, 2 tests per family
    zc, zb = float(ndtri(1 - alpha)), float(ndtri(POWER))
    for g, idx in fams.items():
        d = np.array([out[i]["_d"] for i in idx])
        V = np.array([out[i]["_var"] for i in idx])
        shared = np.minimum(np.array([out[i]["_shared"] for i in idx]), V)
        w = 1.0 / V
        mean = float(np.sum(w * d) / w.sum())
        var = float((np.sum(w * np.sqrt(shared)) / w.sum()) ** 2
                    + np.sum(w ** 2 * (V - shared)) / w.sum() ** 2)
        k = len(idx)
        q = float(np.sum((d - mean) ** 2 / V)) if k >= 2 else math.nan
        q_crit = float(chi2.ppf(1 - 2 * alpha, k - 1)) if k >= 2 else math.nan
        z = mean / math.sqrt(var)
        detectable = math.exp((zc + zb) * math.sqrt(var))
        if k >= 2:
            verdict = _verdict(abs(z) <= zc and q <= q_crit, detectable)
        else:
            verdict = out[idx[0]]["verdict"]
        fam = dict(family_ratio=math.exp(-mean), family_lo=math.exp(-mean - zc * math.sqrt(var)),
                   family_hi=math.exp(-mean + zc * math.sqrt(var)), family_z=z,
                   family_q=q, family_q_crit=q_crit, family_points=k,
                   family_detectable=detectable, family_verdict=verdict)
        for i in idx:
            out[i].update(fam)


def _welch(pub, pub_sd, n_pub, m, alpha):
    """Welch's test of the published mean (sd ``pub_sd`` over ``n_pub`` runs, each its own
    sample) against our seeds' means ``m``, at one-tail level ``alpha``: the interval for
    the published mean, t (as ``z``), its critical value and the verdict."""
    from scipy.stats import t

    S = m.size
    if S < 2 or n_pub < 2:
        return dict(pi_lo=math.nan, pi_hi=math.nan, sigma_between=math.nan, z=math.nan,
                    verdict="needs >= 2 seeds", crit=math.nan, detectable=math.nan)
    a, b = float(m.var(ddof=1)) / S, pub_sd ** 2 / n_pub
    var = a + b
    dof = var ** 2 / (a ** 2 / (S - 1) + b ** 2 / (n_pub - 1)) if var > 0 else math.inf
    crit = float(t.ppf(1 - alpha, dof))
    half, mean = crit * math.sqrt(var), float(m.mean())
    z = (pub - mean) / math.sqrt(var) if var > 0 else math.inf
    # the smallest shift found with probability POWER, either way, as a ratio ours / pub
    delta = (crit + float(t.ppf(POWER, dof))) * math.sqrt(var) / pub
    detectable = max(1 + delta, 1 / (1 - delta) if delta < 1 else math.inf)
    # the family test's inputs, on the log scale (delta method), all of it shared
    lv = a / mean ** 2 + b / pub ** 2 if mean > 0 and pub > 0 else math.nan
    return dict(pi_lo=mean - half, pi_hi=mean + half, sigma_between=math.nan, z=z,
                verdict=_verdict(abs(z) <= crit, detectable), crit=crit,
                detectable=detectable, _d=math.log(pub / mean) if mean > 0 and pub > 0
                else math.nan, _var=lv, _shared=lv)


def t_quantile(level, dof):
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2.0, dof))
