"""Published error bounds for random Fourier features (theory.md sections 3-4).

Pure functions of (eps, D, ...) returning the bound on a failure probability,
and :func:`invert_bound`, the eps at which a bound equals delta.  ``D`` is
always the output dimension; ``pairs`` selects the cos/sin map.  Constants
marked (unverified) in theory.md are named here and cited, not derived.
Wiring into a ``bounds`` measurement is issue #3.
"""
from __future__ import annotations

import math

#: Rahimi & Recht 2007, Claim 1 prefactor
RR_PREFACTOR = 2.0**8
#: Sutherland & Schneider 2015, rff (cos + offset) map prefactor (unverified)
SS_RFF_PREFACTOR = 98.0


def hoeffding(eps, D, pairs):
    """Pointwise P[|s_hat - k| >= eps] <= 2 exp(-D eps^2 / 4) (pairs), / 8 (rff)."""
    return 2.0 * math.exp(-D * eps * eps / (4.0 if pairs else 8.0))


def bernstein(eps, D, k, k2, pairs):
    """Pointwise Bernstein bound with the exact variance; k = k(delta), k2 = k(2 delta)."""
    if pairs:
        v = 0.5 + 0.5 * k2 - k * k
        return 2.0 * math.exp(-(D / 2.0) * eps * eps / (2.0 * v + (2.0 / 3.0) * (1.0 + abs(k)) * eps))
    v = 1.0 + 0.5 * k2 - k * k
    return 2.0 * math.exp(-D * eps * eps / (2.0 * v + (2.0 / 3.0) * (2.0 + abs(k)) * eps))


def rahimi_recht(eps, D, d, sigma_p, diam, output_dim=False):
    """Claim 1: 2^8 (sigma_p diam / eps)^2 exp(-D eps^2 / (4 (d+2))).

    Its proof counts D cos terms (D frequencies of the pair map); read with D
    = output dimension (``output_dim``) the exponent is D eps^2 / (8 (d+2)).
    """
    c = 8.0 if output_dim else 4.0
    return RR_PREFACTOR * (sigma_p * diam / eps) ** 2 * math.exp(-D * eps * eps / (c * (d + 2)))


def beta_d(d):
    """Sutherland & Schneider's constant; max over d is about 66 (at d = 64)."""
    h = d / 2.0
    return (h ** (-d / (d + 2.0)) + h ** (2.0 / (d + 2.0))) * 2.0 ** ((6.0 * d + 2.0) / (d + 2.0))


def sutherland_schneider(eps, D, d, sigma_p, diam, pairs):
    """Uniform bound for the map in use (pairs: beta_d form; rff: 98 form, unverified)."""
    if pairs:
        return beta_d(d) * (sigma_p * diam / eps) ** (2.0 * d / (d + 2.0)) \
            * math.exp(-D * eps * eps / (8.0 * (d + 2)))
    return SS_RFF_PREFACTOR * (sigma_p * diam / eps) ** 2 * math.exp(-D * eps * eps / (32.0 * (d + 2)))


def sriperumbudur_szabo_eps(delta, n_freq, d, sigma_p, diam):
    """Thm 1 (unverified constants): with prob >= 1 - delta, sup error <= this eps."""
    tau = math.log(1.0 / delta)
    a = math.log(2.0 * diam + 1.0)
    h = 32.0 * math.sqrt(2.0 * d * a) + 32.0 * math.sqrt(2.0 * d * math.log(sigma_p + 1.0)) \
        + 16.0 * math.sqrt(2.0 * d / a)
    return (h + math.sqrt(2.0 * tau)) / math.sqrt(n_freq)


def invert_bound(bound, delta, lo=1e-12, hi=1e6, rtol=1e-10):
    """The eps where ``bound(eps)`` (non-increasing in eps) equals delta, by bisection
    on a log scale; returns ``lo`` if bound(lo) <= delta already."""
    if not 0 < delta < 1:
        raise ValueError(f"delta={delta!r} must be in (0, 1)")
    if bound(lo) <= delta:
        return lo
    if bound(hi) > delta:
        raise ValueError(f"bound exceeds delta={delta} even at eps={hi}")
    while hi / lo > 1 + rtol:
        mid = math.sqrt(lo * hi)
        if bound(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi
