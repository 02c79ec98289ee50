"""A conformance suite for random-feature maps: :func:`check_feature_map`.

Like scikit-learn's ``check_estimator``, for maps: run it on your own map before
you benchmark it (rffbench runs it over every registered map in its test-suite)::

    from rffbench.testing import check_feature_map
    report = check_feature_map(MyMap, kernel="gaussian")   # raises if a check fails
    print(report)

The checks (each ``passed``, ``failed`` or ``skipped`` with its reason and numbers):

``output float64`` / ``output float32``
    what a run checks of a plug-in map's output (:mod:`rffbench.plugins`): transform
    returns an array (or scipy.sparse matrix) of shape (rows, n_components) in the
    input's dtype, all finite, without raising; the other checks run only if these pass.
``sklearn_api``
    scikit-learn's ``check_estimator`` (maps that refuse D = 1, e.g. cos/sin pairs,
    are excused from the checks that force n_components = 1).
``reproducible``
    the same ``random_state`` gives bit-identical features, another one different ones
    (the same ones for a map tagged ``deterministic``: the claim is checked, and a map
    whose claim fails is checked for unbiasedness as a random map).
``threads``
    features fitted and computed with 1 and with all numba/BLAS threads agree
    (|difference| <= 1e-10; a thread-dependent random stream differs by O(1)).
``dtype``
    float32 input gives float32 features and float32 fitted arrays (public attributes
    ending in ``_``), float64 likewise, and the two kernel estimates z(x).z(y) agree to
    1e-4 (relative to max |k|).
``sparse``
    for maps tagged ``input_tags.sparse``: CSR input gives the dense copy's features.
``unbiased``
    mean of the kernel estimate z(x).z(y) + ``kernel_offset_`` (the map's constant term,
    0 for most maps) over ``n_redraws`` independent maps against the exact kernel at
    pairs spanning 0.2 to 2.5 lengthscales; the tolerance is ``z`` standard errors of
    the mean from the observed spread, ``z`` Bonferroni-corrected for the pairs at a
    family-wise false-alarm rate ``alpha``.  Maps that document a bias (class
    tag ``bias``, e.g. sorf, nystrom) are reported, not failed.
``variance``
    for maps that declare a family (``tags.variance`` "rff" or "pairs") or have their own
    ``exact_mse``: the sample variance of the estimate against the exact formula
    (Sutherland & Schneider 2015), within ``z`` standard errors of a sample variance (from
    the sample's fourth moment); skipped with the reason for a map tagged ``heavy_tails``.
``bounded``
    for the same maps (every published bound assumes it): |z_i(x)| <= sqrt(2/D).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtri

from .checks import Int, Real, check_constraints
from .errors import ConfigError, RangeError
from .plugins import output_dim, output_problem

#: checks of scikit-learn's check_estimator that set n_components = 1
D1_CHECKS = ("check_dont_overwrite_parameters", "check_methods_sample_order_invariance",
             "check_methods_subset_invariance", "check_fit2d_1sample", "check_fit2d_1feature",
             "check_fit2d_predict1d")
#: distances (in lengthscales) of the pairs of the statistical checks
PAIR_DISTANCES = (0.2, 0.5, 1.0, 1.5, 2.5)
THREADS_ATOL = 1e-10
#: check_feature_map's own arguments.  At least 30 redraws: the tolerances are normal
#: quantiles of standard errors estimated from the redraws (a sample mean, and a sample
#: variance from the fourth moment); alpha in [1e-12, 1): alpha = 0 is an infinite
#: tolerance that passes any map, and below 1e-12 the tolerance passes 7.5 standard errors
ARGUMENT_CONSTRAINTS = {"n_components": Int(1), "n_redraws": Int(30), "d": Int(1),
                        "lengthscale": Real(gt=0), "alpha": Real(ge=1e-12, lt=1)}


class FeatureMapCheckError(AssertionError):
    """A map failed :func:`check_feature_map`; the message is the full report."""


@dataclass
class Check:
    name: str
    status: str  # passed | failed | skipped
    detail: str


@dataclass
class ConformanceReport:
    """The outcome of :func:`check_feature_map`; ``str()`` is a readable table."""

    map_name: str
    kernel: str
    checks: list = field(default_factory=list)

    @property
    def passed(self):
        return all(c.status != "failed" for c in self.checks)

    @property
    def failed(self):
        return [c.name for c in self.checks if c.status == "failed"]

    def __getitem__(self, name):
        return next(c for c in self.checks if c.name == name)

    def __str__(self):
        w = max(len(c.name) for c in self.checks) if self.checks else 0
        head = (f"check_feature_map({self.map_name}, kernel={self.kernel}): "
                + ("passed" if self.passed else f"FAILED {', '.join(self.failed)}"))
        return "\n".join([head] + [f"  {c.status:7s} {c.name:{w}s}  {c.detail}"
                                   for c in self.checks])


def _dense(Z):
    return Z.toarray() if sp.issparse(Z) else np.asarray(Z)


def _pairs(d, seed=12345):
    """Pairs (x, y) with |x - y| = PAIR_DISTANCES (lengthscale 1), around the origin."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(len(PAIR_DISTANCES), d)) * 0.5
    u = rng.normal(size=X.shape)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return X, X + np.asarray(PAIR_DISTANCES)[:, None] * u


def check_feature_map(cls, kernel="gaussian", *, params=None, n_components=32, n_redraws=400,
                      d=3, lengthscale=1.0, alpha=1e-4, raise_on_fail=True, sklearn_checks=True):
    """Run the conformance checks (module docs) on a feature-map class (or an instance,
    whose parameters are used, or a registered name such as ``"rff"``) for ``kernel``; returns a :class:`ConformanceReport`,
    and raises :class:`FeatureMapCheckError` with it if a check failed and
    ``raise_on_fail``.  ``params``: further constructor keywords.  The statistical
    checks fit ``n_redraws`` maps with D = ``n_components`` on pairs in R^d at distances
    PAIR_DISTANCES times ``lengthscale``, the kernel's lengthscale fixed to it."""
    from sklearn.base import clone

    from .features import FEATURE_MAPS
    from .kernels import kernel_with
    from .theory import VARIANCE_TERMS

    check_constraints(dict(n_components=n_components, n_redraws=n_redraws, d=d,
                           lengthscale=lengthscale, alpha=alpha), "", ARGUMENT_CONSTRAINTS)
    if isinstance(cls, str):  # a registered name, as on the command line
        cls = FEATURE_MAPS.get_or_raise(cls, "features")
    if not (isinstance(cls, type) or hasattr(cls, "get_params")):
        raise ConfigError(f"check_feature_map({cls!r}): give a feature map's name, class or "
                          "instance (e.g. 'rff' or RandomFourierFeatures)")
    if isinstance(cls, type):
        proto = cls(kernel=kernel, **(params or {}))
    else:
        proto = clone(cls).set_params(kernel=kernel, **(params or {}))
        cls = type(proto)
    if isinstance(kernel, str) and hasattr(cls, "check_params"):  # a pair a run refuses:
        cls.check_params(n_components, kernel,  # refused here, not reported as a failure
                         **(proto.map_params() if hasattr(proto, "map_params") else {}))
    name = getattr(cls, "name", cls.__name__)
    report = ConformanceReport(name, getattr(kernel, "name", kernel))
    add = report.checks.append

    def make(seed, **kw):
        return clone(proto).set_params(n_components=n_components, random_state=seed,
                                       lengthscale=lengthscale, **kw)

    # kernels of non-negative data (chi2): every test point in |.|
    k0 = kernel_with(proto.kernel, lengthscale)
    prep = np.abs if k0.input_floor() > -math.inf else (lambda a: a)
    X, Y = (prep(lengthscale * P) for P in _pairs(d))
    P = np.vstack([X, Y])
    n = len(X)

    def estimate(seed, A=P, **kw):
        f = make(seed, **kw).fit(A)
        Z = _dense(f.transform(A))
        return (np.einsum("ij,ij->i", Z[:n], Z[n:2 * n]) + getattr(f, "kernel_offset_", 0.0),
                Z)

    # -- parameters the map must accept --------------------------------------------
    try:
        make(0).fit(P)
    except ConfigError:  # the map refuses these arguments (a shape a run refuses too)
        raise
    except Exception as exc:
        add(Check("construct", "failed", f"fit with n_components={n_components}, lengthscale="
                  f"{lengthscale} "
                  f"and kernel={kernel!r} raised {type(exc).__name__}: {exc}"))
        return _finish(report, raise_on_fail)

    # -- what a run checks of a plug-in's output (rffbench.plugins) ----------------
    for dt in (np.float64, np.float32):
        A = P.astype(dt)
        try:
            f = make(0).fit(A)
            Z = f.transform(A)
        except Exception as exc:
            add(Check(f"output {np.dtype(dt).name}", "failed",
                      f"transform raised {type(exc).__name__}: {exc}"))
            continue
        problem = output_problem(Z, len(A), output_dim(f), dt)
        add(Check(f"output {np.dtype(dt).name}", "failed" if problem else "passed",
                  f"transform {problem}" if problem else
                  f"({len(A)}, {output_dim(f)}) finite {np.dtype(dt).name} values"))
    if any(c.status == "failed" for c in report.checks):
        return _finish(report, raise_on_fail)

    # -- scikit-learn API ---------------------------------------------------------
    if sklearn_checks:
        from sklearn.utils.estimator_checks import check_estimator

        try:
            cls.check_params(1, kernel, **proto.map_params()) if hasattr(cls, "check_params") \
                else None
            expected = {}
        except ConfigError as exc:
            expected = {c: f"D = 1 is refused: {exc}" for c in D1_CHECKS}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = check_estimator(clone(proto), on_fail=None,
                                      expected_failed_checks=expected)
        # scikit-learn's data (rows of norm up to ~150) can take a kernel's values beyond
        # float64's room: the map refuses them, as a run would (RangeError), and that check
        # cannot run on that data; it is reported, not failed
        refused = sorted({r["check_name"] for r in results if r["status"] == "failed"
                          and isinstance(r["exception"], RangeError)})
        bad = sorted({f"{r['check_name']} ({type(r['exception']).__name__}: "
                      f"{str(r['exception']).splitlines()[0][:120] if r['exception'] else ''})"
                      for r in results if r["status"] == "failed"
                      and not isinstance(r["exception"], RangeError)})
        add(Check("sklearn_api", "failed" if bad else "passed",
                  "; ".join(bad) if bad else f"{len(results)} scikit-learn checks"
                  + (f" ({len(expected)} excused: D = 1 refused)" if expected else "")
                  + (f" ({len(refused)} refused scikit-learn's data: the kernel's values "
                     "there are beyond float64's room, as a run refuses them)" if refused
                     else "")))

    # -- reproducibility ----------------------------------------------------------
    rng = np.random.default_rng(7)
    A = prep(rng.normal(size=(40, d)) * lengthscale)
    z1, z2, z3 = (_dense(make(s).fit(A).transform(A)) for s in (3, 3, 4))
    claimed = cls.tags.deterministic
    same, other_same = np.array_equal(z1, z2), np.array_equal(z1, z3)
    ok = same and (other_same if claimed else not other_same)
    add(Check("reproducible", "passed" if ok else "failed",
              ("random_state=3 twice: identical" if same else "random_state=3 twice: DIFFERENT")
              + (("; random_state=4: identical, as tags.deterministic says" if other_same else
                  "; random_state=4: DIFFERENT, though the map is tagged deterministic")
                 if claimed else
                 "; random_state=4: different" if not other_same else
                 "; random_state=4: IDENTICAL")))
    deterministic = claimed and other_same  # a claim that fails: checked as a random map

    # -- thread-count independence ------------------------------------------------
    import numba
    from threadpoolctl import threadpool_limits

    top = numba.config.NUMBA_NUM_THREADS
    if top < 2:
        add(Check("threads", "skipped", "numba has 1 thread (NUMBA_NUM_THREADS)"))
    else:
        before = numba.get_num_threads()
        B = prep(rng.normal(size=(3000, d)) * lengthscale)
        outs = []
        try:
            for t in (1, top):
                numba.set_num_threads(t)
                with threadpool_limits(limits=t):
                    outs.append(_dense(make(5).fit(B).transform(B)))
        finally:
            numba.set_num_threads(before)
        diff = float(np.max(np.abs(outs[0] - outs[1]))) if outs[0].shape == outs[1].shape \
            else math.inf
        add(Check("threads", "passed" if diff <= THREADS_ATOL else "failed",
                  f"1 vs {top} threads: max |difference| {diff:.3g} (allowed {THREADS_ATOL:g})"))

    # -- dtype ---------------------------------------------------------------------
    problems = []
    Z, fits = {}, {}
    for dt in (np.float32, np.float64):
        f = fits[dt] = make(6).fit(A.astype(dt))
        Z[dt] = f.transform(A.astype(dt))
        if Z[dt].dtype != dt:
            problems.append(f"{np.dtype(dt).name} input gave {Z[dt].dtype} features")
        for k, v in vars(f).items():
            if k.endswith("_") and not k.startswith("_") and isinstance(v, np.ndarray) \
                    and v.dtype.kind == "f" and v.dtype != dt:
                problems.append(f"{np.dtype(dt).name} fit: {k} is {v.dtype}")
    # the kernel estimates Z Z^T (+ the offset), not the features: equivalent maps may differ
    # by a rotation (Nystrom's float32 fit keeps fewer directions)
    G = {dt: _dense(Z[dt]).astype(np.float64) @ _dense(Z[dt]).astype(np.float64).T
         + getattr(fits[dt], "kernel_offset_", 0.0) for dt in Z}
    scale = max(1.0, float(np.max(np.abs(G[np.float64]))))
    gap = float(np.max(np.abs(G[np.float32] - G[np.float64]))) / scale
    if not gap <= 1e-4:
        problems.append(f"the float32 and float64 kernel estimates z(x).z(y) differ by {gap:.3g} "
                        "(relative to max |k|; allowed 1e-4)")
    add(Check("dtype", "failed" if problems else "passed",
              "; ".join(problems) if problems else
              f"float32 -> float32, float64 -> float64 (outputs and fitted arrays); "
              f"kernel estimates agree to {gap:.2g}"))

    # -- sparse input ---------------------------------------------------------------
    tags = proto.__sklearn_tags__()
    if not tags.input_tags.sparse:
        add(Check("sparse", "skipped", "the map is not tagged input_tags.sparse"))
    else:
        As = A.copy()
        As[np.abs(As) < 0.7] = 0.0
        f = make(8).fit(As)
        a = _dense(f.transform(sp.csr_matrix(As)))
        b = _dense(make(8).fit(sp.csr_matrix(As)).transform(As))
        c = _dense(f.transform(As))
        diff = max(float(np.max(np.abs(a - c))), float(np.max(np.abs(b - c))))
        add(Check("sparse", "passed" if diff <= 1e-12 else "failed",
                  f"CSR vs dense input (fit and transform): max |difference| {diff:.3g}"))

    # -- statistics over redraws ----------------------------------------------------
    est = np.empty((n_redraws, n))
    zmax = 0.0
    for s in range(n_redraws):
        est[s], Zs = estimate(1000 + s)
        zmax = max(zmax, float(np.max(np.abs(Zs))))
    k_ref = kernel_with(proto.kernel, lengthscale).fit(None)
    k = np.array([k_ref.gram(X[i:i + 1], Y[i:i + 1])[0, 0] for i in range(n)])
    k2 = np.array([k_ref.gram_twice(X[i:i + 1], Y[i:i + 1])[0, 0] for i in range(n)]) \
        if k_ref.shift_invariant else np.full(n, np.nan)
    z = float(ndtri(1 - alpha / (2 * n)))
    mean = est.mean(0)
    se = est.std(0, ddof=1) / math.sqrt(n_redraws)
    dev = np.abs(mean - k)
    worst = int(np.argmax(dev / np.maximum(se, 1e-300)))
    # the redraws may agree to rounding (a Nystroem projection that is exact on the pair)
    ratio = dev[worst] / se[worst] if se[worst] > 1e-12 * max(abs(k[worst]), 1e-300) else None
    detail = (f"{n_redraws} redraws, D={n_components}: max |mean - k| {dev.max():.3g}; worst at "
              f"|x-y|={PAIR_DISTANCES[worst]}: mean {mean[worst]:.4f} vs k {k[worst]:.4f}, "
              + (f"{ratio:.1f} standard errors" if ratio is not None else
                 f"standard error {se[worst]:.2g} (the redraws agree to rounding)")
              + f" (allowed {z:.1f})")
    bias = proto.get_tags().bias  # an instance's: it may depend on its parameters
    if deterministic:
        add(Check("unbiased", "skipped", "deterministic map: no redraws to average; its error "
                  f"z(x).z(y) - k is a bias: max {dev.max():.3g} over the pairs"))
    elif bias:
        add(Check("unbiased", "skipped", f"documented bias: {bias}; measured: {detail}"))
    else:
        ok = bool(np.all(dev <= z * se + 1e-12))
        add(Check("unbiased", "passed" if ok else "failed", detail))

    family = cls.tags.variance
    if family in VARIANCE_TERMS:
        var, source = VARIANCE_TERMS[family](k, k2) / n_components, f"family {family!r}"
    else:  # a map's own formula (exact_mse), where it has one for this kernel
        own = proto.map_params() if hasattr(proto, "map_params") else {}
        mse = [cls.exact_mse(k_ref, np.asarray(X[i], dtype=np.float64),
                             np.asarray(Y[i], dtype=np.float64), n_components, **own)
               if hasattr(cls, "exact_mse") else None for i in range(n)]
        var = None if any(v is None for v in mse) else np.array(mse, dtype=np.float64)
        source = f"exact_mse ({cls.exact_mse_source()})" if var is not None else ""
    heavy = proto.get_tags().heavy_tails
    if var is None or heavy:
        add(Check("variance", "skipped", (
            "the map declares no variance family (tags.variance=None) and has no exact_mse "
            "formula for this kernel") if var is None else (
            f"heavy-tailed estimate: {heavy}; a sample variance over {n_redraws} redraws does "
            f"not estimate it ({source} is not checked here)")))
        add(Check("bounded", "skipped", "no family declared: no published bound applies"))
        return _finish(report, raise_on_fail)
    s2 = est.var(0, ddof=1)
    m4 = ((est - mean) ** 4).mean(0)
    R = n_redraws
    se_v = np.sqrt(np.maximum(m4 - s2**2 * (R - 3) / (R - 1), 0) / R)
    ok = bool(np.all(np.abs(s2 - var) <= z * se_v + 1e-12))
    i = int(np.argmax(np.abs(s2 - var) / np.maximum(se_v, 1e-300)))
    add(Check("variance", "passed" if ok else "failed",
              f"{source}: worst at |x-y|={PAIR_DISTANCES[i]}: sample variance "
              f"{s2[i]:.4g} vs theory {var[i]:.4g} ({abs(s2[i] - var[i]) / max(se_v[i], 1e-300):.1f}"
              f" standard errors, allowed {z:.1f})"))
    if family not in VARIANCE_TERMS:
        add(Check("bounded", "skipped", "no family declared: no published bound applies"))
        return _finish(report, raise_on_fail)
    limit = math.sqrt(2.0 / n_components)
    add(Check("bounded", "passed" if zmax <= limit * (1 + 1e-12) else "failed",
              f"max |z_i(x)| {zmax:.6g} vs sqrt(2/D) = {limit:.6g}"))
    return _finish(report, raise_on_fail)


def _finish(report, raise_on_fail):
    if raise_on_fail and not report.passed:
        raise FeatureMapCheckError(str(report))
    return report
