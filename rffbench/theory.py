"""Published error bounds for random Fourier features (docs/theory.md, sections 2-3).

Pure functions of (eps, D, ...) returning the bound on a failure probability,
and :func:`invert_bound`, the point at which a monotone bound equals delta
(used both for eps_bound(delta, D) and for the D a bound requires).  ``D`` is
always the output dimension; ``pairs`` selects the cos/sin map.  Constants
that could not be derived here are named here and cited, not derived.

:func:`uniform_bounds` and :func:`pointwise_bounds` say which bound applies to
which estimator family (``"rff"``: cos + offset, ``"pairs"``: cos/sin, i.i.d.
frequencies; a feature map declares its family as ``variance``) and, when one
does not apply, why.  The ``bounds`` measurement only iterates over them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

from .checks import Int, Real, check_constraints
from .errors import ConfigError, RangeError
from .features.formulas import (  # noqa: F401
    VARIANCE_TERMS,
    chi_cos_mean,
    orf_pair_covariance,
    orf_variance,
    positive_variance,
    term_variance,
)

#: Rahimi & Recht 2007, Claim 1 prefactor
RR_PREFACTOR = 2.0**8
#: Sutherland & Schneider 2015, rff (cos + offset) map prefactor (unverified)
SS_RFF_PREFACTOR = 98.0


def hoeffding(eps, D, pairs):
    """Pointwise P[|s_hat - k| >= eps] <= 2 exp(-D eps^2 / 4) (pairs), / 8 (rff)."""
    return 2.0 * math.exp(-D * eps * eps / (4.0 if pairs else 8.0))


def bernstein_v(eps, D, v, kabs, pairs):
    """Bernstein bound for term variance ``v`` and |k| = ``kabs`` (see :func:`bernstein`)."""
    if pairs:
        return 2.0 * math.exp(-(D / 2.0) * eps * eps / (2.0 * v + (2.0 / 3.0) * (1.0 + kabs) * eps))
    return 2.0 * math.exp(-D * eps * eps / (2.0 * v + (2.0 / 3.0) * (2.0 + kabs) * eps))


def bernstein(eps, D, k, k2, pairs):
    """Pointwise Bernstein bound with the exact variance; k = k(delta), k2 = k(2 delta)."""
    return bernstein_v(eps, D, term_variance(k, k2, pairs), abs(k), pairs)


def rahimi_recht(eps, D, d, sigma_p, diam, output_dim=False):
    """Claim 1: 2^8 (sigma_p diam / eps)^2 exp(-D eps^2 / (4 (d+2))).

    Its proof counts D cos terms (D frequencies of the pair map); read with D
    = output dimension (``output_dim``) the exponent is D eps^2 / (8 (d+2)).
    """
    c = 8.0 if output_dim else 4.0
    return _exp(math.log(RR_PREFACTOR) + 2.0 * _log_ratio(sigma_p * diam, eps)
                - D * eps * eps / (c * (d + 2)))


def _log_ratio(a, b):
    """log(a / b) without overflow (a = sigma_p diam may be huge, b = eps tiny)."""
    return (math.log(a) if a > 0 else -math.inf) - math.log(b)


def _exp(x):
    """exp(x) capped at float64's largest (bounds above 1 say nothing anyway)."""
    return math.exp(min(x, 709.0))


def beta_d(d):
    """Sutherland & Schneider's constant; max over d is about 66 (at d = 64)."""
    h = d / 2.0
    return (h ** (-d / (d + 2.0)) + h ** (2.0 / (d + 2.0))) * 2.0 ** ((6.0 * d + 2.0) / (d + 2.0))


def sutherland_schneider(eps, D, d, sigma_p, diam, pairs):
    """Uniform bound for the map in use (pairs: beta_d form; rff: 98 form, unverified)."""
    lr = _log_ratio(sigma_p * diam, eps)
    if pairs:
        return _exp(math.log(beta_d(d)) + (2.0 * d / (d + 2.0)) * lr
                    - D * eps * eps / (8.0 * (d + 2)))
    return _exp(math.log(SS_RFF_PREFACTOR) + 2.0 * lr - D * eps * eps / (32.0 * (d + 2)))


def sriperumbudur_szabo_eps(delta, n_freq, d, sigma_p, diam):
    """Thm 1 (unverified constants): with prob >= 1 - delta, sup error <= this eps."""
    tau = math.log(1.0 / delta)
    a = math.log(2.0 * diam + 1.0)
    h = 32.0 * math.sqrt(2.0 * d * a) + 32.0 * math.sqrt(2.0 * d * math.log(sigma_p + 1.0)) \
        + 16.0 * math.sqrt(2.0 * d / a)
    return (h + math.sqrt(2.0 * tau)) / math.sqrt(n_freq)


def sriperumbudur_szabo(eps, n_freq, d, sigma_p, diam):
    """Thm 1 read as a tail bound: P[sup >= eps] <= exp(-(eps sqrt(m) - h)^2 / 2)
    for eps sqrt(m) >= h (tau = log(1/delta)), and 1 below (no statement)."""
    h = sriperumbudur_szabo_eps(1.0, n_freq, d, sigma_p, diam) * math.sqrt(n_freq)
    t = eps * math.sqrt(n_freq) - h
    return 1.0 if t <= 0 else math.exp(-0.5 * t * t)


def invert_bound(bound, delta, lo=1e-300, hi=1e6, rtol=1e-10):
    """The x where ``bound(x)`` (non-increasing in x > 0) equals delta, by bisection
    on a log scale; returns ``lo`` if bound(lo) <= delta already, so ``lo`` is the
    smallest value x takes (1 feature for a D; for an eps, 1e-300: with 1e-12 here,
    error_bound(D=10**30) returned 1e-12, ~1000x the bound's own 3e-15).

    x is eps for eps_bound(delta, D) = invert_bound(lambda e: b(e, D), delta),
    and D for the D a bound requires at a given eps.

    Parameters
    ----------
    bound : callable
        x -> the bound at x, non-increasing for x > 0.
    delta : float
        The value to reach.
    lo, hi : float, default 1e-300, 1e6
        The bracket searched (``lo`` is returned when the bound is already below delta).
    rtol : float, default 1e-10
        Relative width of the bracket at which bisection stops.

    Returns
    -------
    float
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta={delta!r} must be in (0, 1)")
    if bound(lo) <= delta:
        return lo
    if bound(hi) > delta:
        raise ValueError(f"bound exceeds delta={delta} even at {hi:g}")
    while hi / lo > 1 + rtol:
        mid = math.sqrt(lo * hi)
        if bound(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


# --------------------------------------------------------------------------
# which bound applies to which estimator
# --------------------------------------------------------------------------
#: largest possible |estimate - k|: pairs |z(x).z(y)| <= 1, rff <= 2; k in [-1, 1]
TRIVIAL_ERROR = {"pairs": 2.0, "rff": 3.0}

@dataclass(frozen=True)
class BoundInfo:
    """What the records, tables and figures say of a bound: its ``label``, whether it is
    ``uniform`` (bounds the sup over the set; False: one pair at a time, drawn as a
    reference line for the sup) and how it is drawn (matplotlib ``color`` and ``style``)."""

    label: str
    uniform: bool
    color: str
    style: object


#: every bound rffbench evaluates, in the order :func:`uniform_bounds` returns them
BOUNDS = {
    "hoeffding": BoundInfo("Hoeffding", False, "0.45", ":"),
    "bernstein": BoundInfo("Bernstein", False, "0.65", ":"),
    "rahimi_recht": BoundInfo("Rahimi-Recht (as stated)", True, "tab:red", "--"),
    "rahimi_recht_output_dim": BoundInfo("Rahimi-Recht (output dim.)", True, "tab:brown",
                                         (0, (8, 2))),
    "sutherland_schneider": BoundInfo("Sutherland-Schneider", True, "tab:green", "-."),
    "sriperumbudur_szabo": BoundInfo("Sriperumbudur-Szabo", True, "tab:purple", (0, (1, 1.5))),
}
BOUND_METHODS = tuple(BOUNDS)
#: the bounds on the sup error over a set
UNIFORM_METHODS = tuple(m for m, b in BOUNDS.items() if b.uniform)
#: the bounds for one pair of points
POINTWISE_METHODS = tuple(m for m, b in BOUNDS.items() if not b.uniform)


@dataclass(frozen=True)
class Bound:
    """One bound for one run: ``prob(eps, D)`` bounds P[error >= eps], or None
    with ``note`` saying why it does not apply.  ``uniform`` is False for the
    pointwise bounds (a reference line for the sup, not a bound on it);
    ``eps_max`` is the largest eps its derivation allows (``eps_max_note`` why)."""

    method: str
    prob: Optional[Callable[[float, float], float]]
    note: str
    uniform: bool = True
    eps_max: float = math.inf
    eps_max_note: str = ""


def _not_applicable(methods, note):
    return [Bound(m, None, note, m not in POINTWISE_METHODS) for m in methods]


def _no_bound_note(map_name):
    return (f"features={map_name}: no published bound for this map (they cover the i.i.d. "
            "rff and rff_pairs maps)")


def _pointwise(family, v, kabs, what):
    pairs = family == "pairs"
    return [Bound("hoeffding", lambda e, D: hoeffding(e, D, pairs), what, uniform=False),
            Bound("bernstein", lambda e, D: bernstein_v(e, D, v, kabs, pairs),
                  f"{what}, exact term variance {v:.4g}", uniform=False)]


def pointwise_bounds(family, k, k2, map_name=""):
    """Hoeffding and Bernstein for one pair with k = k(delta), k2 = k(2 delta)."""
    if family not in TRIVIAL_ERROR:
        return _not_applicable(POINTWISE_METHODS, _no_bound_note(map_name))
    return _pointwise(family, term_variance(k, k2, family == "pairs"), abs(k), "pointwise bound")


def uniform_bounds(family, d, sigma_p2, diam, v_max=1.0, k_absmax=1.0, map_name=""):
    """Every bound on the sup over a set M of diameter ``diam`` in R^d (kernel
    second moment ``sigma_p2``), led by Hoeffding and Bernstein as pointwise
    reference lines (Bernstein at the largest term variance ``v_max`` and
    largest |k| of the pairs of M)."""
    if family not in TRIVIAL_ERROR:
        return _not_applicable(BOUND_METHODS, _no_bound_note(map_name))
    refs = _pointwise(family, v_max, k_absmax,
                      "pointwise bound: a reference line for the sup, not a bound on it")
    uniform = UNIFORM_METHODS
    if not math.isfinite(sigma_p2):
        return refs + _not_applicable(uniform, "sigma_p^2 = E||w||^2 is infinite for this kernel "
                                      "(heavy-tailed spectral density): the bound is vacuous")
    if not diam > 0:
        return refs + _not_applicable(uniform, "diam(M) = 0: all points coincide")
    sp = math.sqrt(sigma_p2)
    pairs = family == "pairs"
    rr_max = sp * diam
    rr_max_note = f"Claim 1's proof assumes sigma_p diam(M) / eps >= 1, i.e. eps <= {rr_max:.4g}"
    # S&S refine the same eps-net argument: below sigma_p diam(M) / eps = 1 the optimal net
    # radius exceeds the set, the covering number cannot drop below 1 and the formula
    # would claim less than its own one-anchor term (e.g. a huge lengthscale: sigma_p -> 0)
    ss_max_note = (f"its eps-net argument (as Claim 1's) assumes sigma_p diam(M) / eps >= 1, "
                   f"i.e. eps <= {rr_max:.4g}")
    out = list(refs)
    if pairs:
        out += [
            Bound("rahimi_recht", lambda e, D: rahimi_recht(e, D, d, sp, diam),
                  "Claim 1 as stated, D read as the output dimension (its proof counts D "
                  "frequencies = 2D outputs: optimistic by 2x in D)",
                  eps_max=rr_max, eps_max_note=rr_max_note),
            Bound("rahimi_recht_output_dim",
                  lambda e, D: rahimi_recht(e, D, d, sp, diam, output_dim=True),
                  "Claim 1 in output-dimension units: D/2 frequencies",
                  eps_max=rr_max, eps_max_note=rr_max_note),
            Bound("sutherland_schneider",
                  lambda e, D: sutherland_schneider(e, D, d, sp, diam, True),
                  f"pair map, beta_d = {beta_d(d):.4g}", eps_max=rr_max,
                  eps_max_note=ss_max_note),
            Bound("sriperumbudur_szabo",
                  lambda e, D: sriperumbudur_szabo(e, D / 2.0, d, sp, diam),
                  "Thm 1 (unverified constants), m = D/2 frequencies"),
        ]
    else:
        rr_na = ("Claim 1 is proved for the cos/sin pair map (terms in [-1, 1]); for the "
                 "cos + offset map see sutherland_schneider")
        out += [
            Bound("rahimi_recht", None, rr_na),
            Bound("rahimi_recht_output_dim", None, rr_na),
            Bound("sutherland_schneider", lambda e, D: sutherland_schneider(e, D, d, sp, diam,
                                                                            False),
                  "cos + offset map, 98 exp(-D eps^2 / (32 (d+2))) form (unverified constants)",
                  eps_max=rr_max, eps_max_note=ss_max_note),
            Bound("sriperumbudur_szabo", None, "Thm 1 is proved for the cos/sin pair estimator "
                  "(1/m) sum cos(w.delta), not for the cos + offset map"),
        ]
    return out


# --------------------------------------------------------------------------
# the bounds as a calculator (Python API)
# --------------------------------------------------------------------------
#: largest term variance (k = 0, k(2 delta) = 1) per family: worst-case Bernstein
WORST_TERM_VARIANCE = {"pairs": term_variance(0.0, 1.0, True),
                       "rff": term_variance(0.0, 1.0, False)}


#: the largest D (and d) the calculators take: a count that converts to a float64 (the
#: bounds are studied far out, e.g. D = 10^30; 10^400 was an OverflowError traceback)
MAX_COUNT = 10**300

#: the calculators' arguments: the values the command line's keys take
#: (measure.bounds.delta, D, the data's d and diameter)
CALCULATOR_CONSTRAINTS = {
    "eps": Real(gt=0), "delta": Real(gt=0, lt=1),
    "D": Int(1, MAX_COUNT, text="use an integer in 1..1e300"),
    "d": Int(1, MAX_COUNT, text="use an integer in 1..1e300"),
    "diam": Real(gt=0), "D_max": Real(ge=1, le=MAX_COUNT),
}
#: nu's default in the calculators' signatures (kernel.nu's)
NU_DEFAULT = 1.5


def _kernel(kernel, lengthscale, nu, features):
    """The fitted kernel of the calculators, checked as the command line checks it:
    ``nu`` only for the kernels that take it (elsewhere it has no effect), the map
    ``features`` able to represent the kernel."""
    from .features import FEATURE_MAPS
    from .kernels import KERNELS, Kernel, make_kernel

    takes_nu = not isinstance(kernel, Kernel) and \
        "nu" in KERNELS.get_or_raise(kernel)._get_param_names()
    if not takes_nu and nu != NU_DEFAULT:
        raise ConfigError(f"nu={nu!r} is not allowed: it has no effect here (kernel="
                          f"{getattr(kernel, 'name', kernel)} does not take nu; kernel=matern "
                          f"does); leave it at its default {NU_DEFAULT}")
    FEATURE_MAPS.get_or_raise(features).check_kernel(kernel)
    return make_kernel(kernel, lengthscale=lengthscale,
                       **({"nu": nu} if takes_nu else {})).fit(None)


def _check_args(**values):
    check_constraints(values, "", {k: CALCULATOR_CONSTRAINTS[k] for k in values})


def _bounds_for(features, kernel, d, diam, lengthscale, nu):
    from .features import FEATURE_MAPS

    _check_args(d=d, diam=diam)
    family = FEATURE_MAPS.get_or_raise(features).tags.variance
    k = _kernel(kernel, lengthscale, nu, features)
    return family, uniform_bounds(family, d, k.sigma_p2(d), diam,
                                  v_max=WORST_TERM_VARIANCE.get(family, 1.0), k_absmax=1.0,
                                  map_name=features)


def estimator_variance(delta, D, *, kernel="gaussian", lengthscale=1.0, features="rff_pairs",
                       nu=NU_DEFAULT):
    """The variance of the kernel estimate z(x).z(y) (+ ``kernel_offset_``, 0 for these
    i.i.d. families) at x - y = ``delta`` (one vector, or rows of them) for D features of
    the map ``features`` (Sutherland & Schneider 2015); ValueError for a map without an exact
    variance formula (:func:`estimate_mse` covers positive and orf too).

    Parameters
    ----------
    delta : array of shape (d,) or (n, d)
        The difference x - y, or rows of them.
    D : int
        Output dimension of the map.
    kernel : str or Kernel, default "gaussian"
        A registered kernel name, or a Kernel instance (its own parameters set: e.g.
        ``make_kernel("rational_quadratic", alpha=0.5)``).
    lengthscale : float, default 1.0
        The kernel's lengthscale (ignored for a Kernel instance with its own).
    features : str, default "rff_pairs"
        The map; its family (``tags.variance``) the formula.
    nu : float, default 1.5
        Matern's smoothness (kernel="matern" only).

    Returns
    -------
    float or ndarray of shape (n,)
    """
    from .features import FEATURE_MAPS

    _check_args(D=D)
    family = FEATURE_MAPS.get_or_raise(features).tags.variance
    k = _kernel(kernel, lengthscale, nu, features)
    if family not in VARIANCE_TERMS:
        raise ValueError(f"features={features}: no exact variance formula (only the i.i.d. "
                         f"families {', '.join(VARIANCE_TERMS)} have one)")
    delta = _real_array(delta, "delta", ndim=(1, 2))
    var = VARIANCE_TERMS[family](k.k_of_delta(delta), k.k_of_delta(2.0 * delta)) / D
    return _not_below_zero(var, f"estimator_variance({features!r})", 1.0 / D)


def features_needed(eps, delta, *, d, diam, kernel="gaussian", lengthscale=1.0,
                    features="rff_pairs", nu=NU_DEFAULT, D_max=1e18):
    """How many features each published bound requires: the output dimension D at which
    P[sup over M of ``|z(x).z(y) - k(x, y)|`` >= eps] <= delta, for a set M of diameter
    ``diam`` in R^d, the kernel at ``lengthscale``, and the map ``features`` (its family
    decides which bounds hold).  Hoeffding and Bernstein (at the worst-case term
    variance) are pointwise: the D for one pair, a lower reference, not a sup bound.

    Parameters
    ----------
    eps : float
        The error allowed, > 0.
    delta : float
        The failure probability, in (0, 1).
    d : int
        Input dimension.
    diam : float
        Diameter of the set M (in the data's units).
    kernel : str or Kernel, default "gaussian"
        A registered kernel name, or a Kernel instance (its own parameters set: e.g.
        ``make_kernel("rational_quadratic", alpha=0.5)``).
    lengthscale : float, default 1.0
        The kernel's lengthscale (ignored for a Kernel instance with its own).
    features : str, default "rff_pairs"
        The map; its family (``tags.variance``) decides which bounds hold.
    nu : float, default 1.5
        Matern's smoothness (kernel="matern" only).
    D_max : float, default 1e18
        The largest D searched.

    Returns
    -------
    pandas.DataFrame
        method, kind (uniform | pointwise), D_required, note (why a bound does not apply,
        or its reading).
    """
    import pandas as pd

    _check_args(eps=eps, delta=delta, D_max=D_max)
    _, bounds = _bounds_for(features, kernel, d, diam, lengthscale, nu)
    rows = []
    for b in bounds:
        D, note = None, b.note
        if b.prob is not None and eps > b.eps_max:
            note = f"{b.eps_max_note}, but eps = {eps:g}"
        elif b.prob is not None:
            try:
                D = math.ceil(invert_bound(lambda x: b.prob(eps, x), delta, lo=1.0, hi=D_max))
            except ValueError:
                note = f"no D up to {D_max:g}; " + b.note
        rows.append(dict(method=b.method, kind="uniform" if b.uniform else "pointwise",
                         D_required=D, note=note))
    out = pd.DataFrame(rows)
    out["D_required"] = out["D_required"].astype("Int64")
    return out


def error_bound(D, delta, *, d, diam, kernel="gaussian", lengthscale=1.0, features="rff_pairs",
                nu=NU_DEFAULT):
    """The eps each published bound guarantees with D features at failure probability
    delta (the inverse of :func:`features_needed`).

    Parameters
    ----------
    D : int
        Output dimension of the map.
    delta : float
        The failure probability, in (0, 1).
    d : int
        Input dimension.
    diam : float
        Diameter of the set M (in the data's units).
    kernel : str or Kernel, default "gaussian"
        A registered kernel name, or a Kernel instance (its own parameters set: e.g.
        ``make_kernel("rational_quadratic", alpha=0.5)``).
    lengthscale : float, default 1.0
        The kernel's lengthscale (ignored for a Kernel instance with its own).
    features : str, default "rff_pairs"
        The map; its family (``tags.variance``) decides which bounds hold.
    nu : float, default 1.5
        Matern's smoothness (kernel="matern" only).

    Returns
    -------
    pandas.DataFrame
        method, kind, eps_bound, note (``vacuous`` when above the largest possible error).
    """
    import pandas as pd

    _check_args(D=D, delta=delta)
    family, bounds = _bounds_for(features, kernel, d, diam, lengthscale, nu)
    trivial = TRIVIAL_ERROR.get(family, math.inf)
    rows = []
    for b in bounds:
        eps, note = None, b.note
        if b.prob is not None:
            e = invert_bound(lambda x: b.prob(x, D), delta)
            if e > b.eps_max:
                note = f"{b.eps_max_note}, but eps_bound = {e:.4g}"
            else:
                eps = e
                if e >= trivial:
                    note += f"; vacuous: above the largest possible error {trivial:g}"
        rows.append(dict(method=b.method, kind="uniform" if b.uniform else "pointwise",
                         eps_bound=eps, note=note))
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------
# pointwise mean squared errors of other estimators (the variance measurement)
# --------------------------------------------------------------------------
def estimate_mse(features, kernel, x, y, D, **params):
    """The exact mean squared error (= variance: these estimators are unbiased) of the map
    ``features`` with output dimension D for the fitted ``kernel`` at the pair (x, y), or
    None where rffbench knows no formula: the map's own
    :meth:`~rffbench.features.FeatureMap.exact_mse` (the i.i.d. families: Sutherland &
    Schneider 2015; ``positive``: Choromanski et al. 2021, Lemma 2; ``orf`` with cos/sin
    pairs and orthogonal blocks: :func:`orf_variance`).

    Parameters
    ----------
    features : str
        The map's name.
    kernel : Kernel
        The fitted kernel.
    x, y : array of shape (d,)
        The pair.
    D : int
        Output dimension of the map.
    **params
        The map's own parameters (``pairs``, ``layout``, ...).

    Returns
    -------
    float or None
    """
    import numpy as np

    from .features import FEATURE_MAPS

    cls = FEATURE_MAPS.get_or_raise(features)
    _check_args(D=D)
    x, y = (_real_array(v, name) for v, name in ((x, "x"), (y, "y")))
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {x.shape} and {y.shape}")
    # the map's parameters and D as a run checks them (D against the dimension: maclaurin's
    # H0/1 takes d + 1 exact features), and the kernel's values on the pair
    cls.check_params(D, kernel, **params)
    # (training rows: as many as D needs, e.g. Nystrom's landmarks; the pair is not them)
    cls.check_data(D, max(D, 2), d=x.size, kernel=kernel, **params)
    kernel.check_values(float(max(np.linalg.norm(x), np.linalg.norm(y))), "the pair (x, y)")
    mse = cls.exact_mse(kernel, x, y, D, **params)
    if mse is None:
        return None
    k2 = float(kernel.gram(x[None], y[None])[0, 0]) ** 2
    return float(_not_below_zero(float(mse), f"estimate_mse({features!r})",
                                 max(1.0, k2) / D))


def _not_below_zero(v, what, scale):
    """A variance (scalar or array) from a difference of moments: below 0 by rounding
    (within 1e-12 of ``scale``, its size) it is 0; further below, or not finite, the
    formula does not hold there (ValueError)."""
    import numpy as np

    a = np.asarray(v, dtype=np.float64)
    if not np.isfinite(a).all():
        raise RangeError(f"{what}: the formula gives {a[~np.isfinite(a)].flat[0]} here "
                         "(values beyond float64's range)")
    if (a < -1e-12 * scale).any():
        raise ValueError(f"{what} gives a negative variance {a.min():.3g}: its formula does "
                         "not hold here")
    a = np.maximum(a, 0.0)
    return a if np.ndim(v) else float(a)


def _real_array(v, name, ndim=(1,)):
    """A float64 array of finite real numbers with ``ndim`` axes (one of them), non-empty;
    ValueError naming ``name`` (complex values are refused, not cut to their real part)."""
    import numpy as np

    a = np.asarray(v)
    if a.ndim not in ndim or a.size == 0 or a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a non-empty {' or '.join(f'{k}-d' for k in ndim)} "
                         f"array of real numbers, got {a.dtype} of shape {a.shape}")
    a = a.astype(np.float64)
    if not np.isfinite(a).all():
        raise ValueError(f"{name} has NaN or infinite values")
    return a
