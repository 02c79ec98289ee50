"""A conformance suite for random-feature maps: :func:`check_feature_map`.

Like scikit-learn's ``check_estimator``, for maps: run it on your own map before
you benchmark it (rffbench runs it over every registered map in its test-suite)::

    from rffbench.testing import check_feature_map
    report = check_feature_map(MyMap, kernel="gaussian")   # raises if a check fails
    print(report)

Each check is a function of its own in :data:`CHECKS`, run on a :class:`MapCase` (the map,
its pairs and sample rows, and its redraws computed once for the checks that share them),
so one can run alone and a test-suite can parametrise by check::

    from rffbench.testing import CHECKS, map_case
    case = map_case(MyMap, kernel="gaussian")
    print(CHECKS["variance"](case))        # [Check(name='variance', status=..., detail=...)]
    check_feature_map(MyMap, checks=["unbiased", "variance"])   # construct, output, these

The checks (each ``passed``, ``failed`` or ``skipped`` with its reason and numbers):

``construct``
    the map fits with the case's D, lengthscale and kernel (a row only when it fails).

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

import functools
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


class MapCase:
    """One map on one kernel, as the checks see it: the prototype, the pairs of the
    statistical checks and the sample rows, built once and shared by every check; the
    ``n_redraws`` redraws are computed on first use (``estimates``).  Made by
    :func:`map_case`."""

    def __init__(self, cls, proto, kernel, n_components, n_redraws, d, lengthscale, alpha,
                 sklearn_checks=True):
        from .kernels import kernel_with

        self.cls, self.proto, self.kernel = cls, proto, kernel
        self.n_components, self.n_redraws, self.d = n_components, n_redraws, d
        self.lengthscale, self.alpha, self.sklearn_checks = lengthscale, alpha, sklearn_checks
        self.name = getattr(cls, "name", cls.__name__)
        # kernels of non-negative data (chi2): every test point in |.|
        k0 = kernel_with(proto.kernel, lengthscale)
        self.prep = np.abs if k0.input_floor() > -math.inf else (lambda a: a)
        self.X, self.Y = (self.prep(lengthscale * P) for P in _pairs(d))
        self.P = np.vstack([self.X, self.Y])
        self.n = len(self.X)
        self.rng = np.random.default_rng(7)
        #: 40 sample rows (reproducibility, dtype, sparse input)
        self.A = self.prep(self.rng.normal(size=(40, d)) * lengthscale)
        self._redraws = None

    def make(self, seed, **kw):
        """A fresh unfitted copy of the prototype at D, the seed and the lengthscale."""
        from sklearn.base import clone

        return clone(self.proto).set_params(n_components=self.n_components, random_state=seed,
                                            lengthscale=self.lengthscale, **kw)

    def estimate(self, seed):
        """(z(x).z(y) + kernel_offset_ on the pairs, the features of the pairs' rows)."""
        f = self.make(seed).fit(self.P)
        Z = _dense(f.transform(self.P))
        n = self.n
        return (np.einsum("ij,ij->i", Z[:n], Z[n:2 * n]) + getattr(f, "kernel_offset_", 0.0),
                Z)

    @property
    def deterministic(self):
        """The map is tagged deterministic and two seeds give the same features (a claim
        that fails is checked as a random map)."""
        if not self.proto.get_tags().deterministic:  # an option may make a map deterministic
            return False
        z1, z3 = (_dense(self.make(s).fit(self.A).transform(self.A)) for s in (3, 4))
        return np.array_equal(z1, z3)

    @functools.cached_property
    def kernel_ref(self):
        """The exact kernel the estimates are compared with (the case's lengthscale)."""
        from .kernels import kernel_with

        return kernel_with(self.proto.kernel, self.lengthscale).fit(None)

    def estimates(self):
        """(n_redraws x pairs estimates, max |z_i(x)| over them, k, k(2 delta)) (cached)."""
        if self._redraws is None:
            est = np.empty((self.n_redraws, self.n))
            zmax = 0.0
            for s in range(self.n_redraws):
                est[s], Zs = self.estimate(1000 + s)
                zmax = max(zmax, float(np.max(np.abs(Zs))))
            k_ref = self.kernel_ref
            X, Y, n = self.X, self.Y, self.n
            k = np.array([k_ref.gram(X[i:i + 1], Y[i:i + 1])[0, 0] for i in range(n)])
            k2 = np.array([k_ref.gram_twice(X[i:i + 1], Y[i:i + 1])[0, 0] for i in range(n)]) \
                if k_ref.shift_invariant else np.full(n, np.nan)
            self._redraws = (est, zmax, k, k2)
        return self._redraws

    @property
    def z(self):
        """The normal quantile of the statistical checks (Bonferroni over the pairs)."""
        return float(ndtri(1 - self.alpha / (2 * self.n)))


def map_case(cls, kernel="gaussian", *, params=None, n_components=32, n_redraws=400, d=3,
             lengthscale=1.0, alpha=1e-4, sklearn_checks=True):
    """The :class:`MapCase` the checks of :data:`CHECKS` run on (arguments as
    :func:`check_feature_map`): refuses, as a run would, what the map refuses for
    ``kernel`` (ConfigError), and arguments that make a check vacuous."""
    from sklearn.base import clone

    from .features import FEATURE_MAPS

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
    return MapCase(cls, proto, kernel, n_components, n_redraws, d, lengthscale, alpha,
                   sklearn_checks)


def check_construct(case):
    """``construct``: the map fits with the case's D, lengthscale and kernel (a ConfigError,
    an argument the map refuses as a run would, is raised, not reported)."""
    try:
        case.make(0).fit(case.P)
    except ConfigError:
        raise
    except Exception as exc:
        return [Check("construct", "failed", f"fit with n_components={case.n_components}, "
                      f"lengthscale={case.lengthscale} and kernel={case.kernel!r} raised "
                      f"{type(exc).__name__}: {exc}")]
    return [Check("construct", "passed", f"fit with n_components={case.n_components}")]


def check_output(case):
    """``output float64`` / ``output float32``: what a run checks of a plug-in map's output
    (rffbench.plugins)."""
    out = []
    for dt in (np.float64, np.float32):
        A = case.P.astype(dt)
        name = f"output {np.dtype(dt).name}"
        try:
            f = case.make(0).fit(A)
            Z = f.transform(A)
        except Exception as exc:
            out.append(Check(name, "failed", f"transform raised {type(exc).__name__}: {exc}"))
            continue
        problem = output_problem(Z, len(A), output_dim(f), dt)
        out.append(Check(name, "failed" if problem else "passed",
                         f"transform {problem}" if problem else
                         f"({len(A)}, {output_dim(f)}) finite {np.dtype(dt).name} values"))
    return out


def check_sklearn_api(case):
    """``sklearn_api``: scikit-learn's check_estimator (skipped with ``sklearn_checks``
    False)."""
    from sklearn.base import clone
    from sklearn.utils.estimator_checks import check_estimator

    if not case.sklearn_checks:
        return [Check("sklearn_api", "skipped", "sklearn_checks=False")]
    cls, proto = case.cls, case.proto
    try:
        cls.check_params(1, case.kernel, **proto.map_params()) if hasattr(cls, "check_params") \
            else None
        expected = {}
    except ConfigError as exc:
        expected = {c: f"D = 1 is refused: {exc}" for c in D1_CHECKS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(clone(proto), on_fail=None, expected_failed_checks=expected)
    # scikit-learn's data (rows of norm up to ~150) can take a kernel's values beyond
    # float64's room: the map refuses them, as a run would (RangeError), and that check
    # cannot run on that data; it is reported, not failed
    refused = sorted({r["check_name"] for r in results if r["status"] == "failed"
                      and isinstance(r["exception"], RangeError)})
    bad = sorted({f"{r['check_name']} ({type(r['exception']).__name__}: "
                  f"{str(r['exception']).splitlines()[0][:120] if r['exception'] else ''})"
                  for r in results if r["status"] == "failed"
                  and not isinstance(r["exception"], RangeError)})
    return [Check("sklearn_api", "failed" if bad else "passed",
                  "; ".join(bad) if bad else f"{len(results)} scikit-learn checks"
                  + (f" ({len(expected)} excused: D = 1 refused)" if expected else "")
                  + (f" ({len(refused)} refused scikit-learn's data: the kernel's values "
                     "there are beyond float64's room, as a run refuses them)" if refused
                     else ""))]


def check_reproducible(case):
    """``reproducible``: the same random_state gives identical features, another one
    different ones (the same for a map tagged deterministic)."""
    A = case.A
    z1, z2, z3 = (_dense(case.make(s).fit(A).transform(A)) for s in (3, 3, 4))
    claimed = case.proto.get_tags().deterministic
    same, other_same = np.array_equal(z1, z2), np.array_equal(z1, z3)
    ok = same and (other_same if claimed else not other_same)
    return [Check("reproducible", "passed" if ok else "failed",
                  ("random_state=3 twice: identical" if same else
                   "random_state=3 twice: DIFFERENT")
                  + (("; random_state=4: identical, as tags.deterministic says" if other_same
                      else "; random_state=4: DIFFERENT, though the map is tagged deterministic")
                     if claimed else
                     "; random_state=4: different" if not other_same else
                     "; random_state=4: IDENTICAL"))]


def check_threads(case):
    """``threads``: features fitted and computed with 1 and with all numba/BLAS threads
    agree to THREADS_ATOL."""
    import numba
    from threadpoolctl import threadpool_limits

    top = numba.config.NUMBA_NUM_THREADS
    if top < 2:
        return [Check("threads", "skipped", "numba has 1 thread (NUMBA_NUM_THREADS)")]
    before = numba.get_num_threads()
    B = case.prep(case.rng.normal(size=(3000, case.d)) * case.lengthscale)
    outs = []
    try:
        for t in (1, top):
            numba.set_num_threads(t)
            with threadpool_limits(limits=t):
                outs.append(_dense(case.make(5).fit(B).transform(B)))
    finally:
        numba.set_num_threads(before)
    diff = float(np.max(np.abs(outs[0] - outs[1]))) if outs[0].shape == outs[1].shape \
        else math.inf
    unstable = case.proto.get_tags().unstable_fit
    if unstable and not diff <= THREADS_ATOL:
        return [Check("threads", "skipped", f"1 vs {top} threads: max |difference| {diff:.3g}, "
                                            f"not compared: {unstable}")]
    return [Check("threads", "passed" if diff <= THREADS_ATOL else "failed",
                  f"1 vs {top} threads: max |difference| {diff:.3g} (allowed {THREADS_ATOL:g})")]


def check_dtype(case):
    """``dtype``: float32 in, float32 out (outputs and fitted arrays), float64 likewise; the
    two kernel estimates agree to 1e-4 of max |k|."""
    problems = []
    Z, fits = {}, {}
    A = case.A
    for dt in (np.float32, np.float64):
        f = fits[dt] = case.make(6).fit(A.astype(dt))
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
    unstable = case.proto.get_tags().unstable_fit
    if not gap <= 1e-4 and not unstable:
        problems.append(f"the float32 and float64 kernel estimates z(x).z(y) differ by {gap:.3g} "
                        "(relative to max |k|; allowed 1e-4)")
    return [Check("dtype", "failed" if problems else "passed",
                  "; ".join(problems) if problems else
                  "float32 -> float32, float64 -> float64 (outputs and fitted arrays); "
                  + (f"kernel estimates differ by {gap:.2g}, not compared: {unstable}"
                     if unstable and not gap <= 1e-4 else
                     f"kernel estimates agree to {gap:.2g}"))]


def check_sparse(case):
    """``sparse``: for maps tagged input_tags.sparse, CSR input gives the dense copy's
    features."""
    if not case.proto.__sklearn_tags__().input_tags.sparse:
        return [Check("sparse", "skipped", "the map is not tagged input_tags.sparse")]
    As = case.A.copy()
    As[np.abs(As) < 0.7] = 0.0
    f = case.make(8).fit(As)
    a = _dense(f.transform(sp.csr_matrix(As)))
    b = _dense(case.make(8).fit(sp.csr_matrix(As)).transform(As))
    c = _dense(f.transform(As))
    diff = max(float(np.max(np.abs(a - c))), float(np.max(np.abs(b - c))))
    return [Check("sparse", "passed" if diff <= 1e-12 else "failed",
                  f"CSR vs dense input (fit and transform): max |difference| {diff:.3g}")]


def check_unbiased(case):
    """``unbiased``: the mean estimate over the redraws against the exact kernel on the
    pairs, within z standard errors (reported, not failed, for a documented bias)."""
    est, _, k, _ = case.estimates()
    n_redraws, z = case.n_redraws, case.z
    mean = est.mean(0)
    se = est.std(0, ddof=1) / math.sqrt(n_redraws)
    dev = np.abs(mean - k)
    worst = int(np.argmax(dev / np.maximum(se, 1e-300)))
    # the redraws may agree to rounding (a Nystroem projection that is exact on the pair)
    ratio = dev[worst] / se[worst] if se[worst] > 1e-12 * max(abs(k[worst]), 1e-300) else None
    detail = (f"{n_redraws} redraws, D={case.n_components}: max |mean - k| {dev.max():.3g}; "
              f"worst at |x-y|={PAIR_DISTANCES[worst]}: mean {mean[worst]:.4f} vs k "
              f"{k[worst]:.4f}, "
              + (f"{ratio:.1f} standard errors" if ratio is not None else
                 f"standard error {se[worst]:.2g} (the redraws agree to rounding)")
              + f" (allowed {z:.1f})")
    bias = case.proto.get_tags().bias  # an instance's: it may depend on its parameters
    if case.deterministic:
        return [Check("unbiased", "skipped", "deterministic map: no redraws to average; its "
                      f"error z(x).z(y) - k is a bias: max {dev.max():.3g} over the pairs")]
    if bias:
        return [Check("unbiased", "skipped", f"documented bias: {bias}; measured: {detail}")]
    ok = bool(np.all(dev <= z * se + 1e-12))
    return [Check("unbiased", "passed" if ok else "failed", detail)]


def _variance_formula(case):
    """(the exact variance of the estimate on the pairs or None, its source)."""
    from .theory import VARIANCE_TERMS

    _, _, k, k2 = case.estimates()
    k_ref = case.kernel_ref
    cls, family = case.cls, case.cls.tags.variance
    if family in VARIANCE_TERMS:
        return VARIANCE_TERMS[family](k, k2) / case.n_components, f"family {family!r}"
    own = case.proto.map_params() if hasattr(case.proto, "map_params") else {}  # exact_mse
    mse = [cls.exact_mse(k_ref, np.asarray(case.X[i], dtype=np.float64),
                         np.asarray(case.Y[i], dtype=np.float64), case.n_components, **own)
           if hasattr(cls, "exact_mse") else None for i in range(case.n)]
    if any(v is None for v in mse):
        return None, ""
    return np.array(mse, dtype=np.float64), f"exact_mse ({cls.exact_mse_source()})"


def check_variance(case):
    """``variance``: the sample variance over the redraws against the exact formula (the
    map's family or its exact_mse), within z standard errors of a sample variance."""
    var, source = _variance_formula(case)
    heavy = case.proto.get_tags().heavy_tails
    if var is None:
        return [Check("variance", "skipped", "the map declares no variance family "
                      "(tags.variance=None) and has no exact_mse formula for this kernel")]
    if heavy:
        return [Check("variance", "skipped", f"heavy-tailed estimate: {heavy}; a sample "
                      f"variance over {case.n_redraws} redraws does not estimate it ({source} "
                      "is not checked here)")]
    est, z = case.estimates()[0], case.z
    s2 = est.var(0, ddof=1)
    m4 = ((est - est.mean(0)) ** 4).mean(0)
    R = case.n_redraws
    se_v = np.sqrt(np.maximum(m4 - s2**2 * (R - 3) / (R - 1), 0) / R)
    ok = bool(np.all(np.abs(s2 - var) <= z * se_v + 1e-12))
    i = int(np.argmax(np.abs(s2 - var) / np.maximum(se_v, 1e-300)))
    return [Check("variance", "passed" if ok else "failed",
                  f"{source}: worst at |x-y|={PAIR_DISTANCES[i]}: sample variance "
                  f"{s2[i]:.4g} vs theory {var[i]:.4g} "
                  f"({abs(s2[i] - var[i]) / max(se_v[i], 1e-300):.1f} standard errors, "
                  f"allowed {z:.1f})")]


def check_bounded(case):
    """``bounded``: |z_i(x)| <= sqrt(2/D) for a map of a declared family (every published
    bound assumes it)."""
    from .theory import VARIANCE_TERMS

    if case.cls.tags.variance not in VARIANCE_TERMS or case.proto.get_tags().heavy_tails:
        return [Check("bounded", "skipped", "no family declared: no published bound applies")]
    zmax = case.estimates()[1]
    limit = math.sqrt(2.0 / case.n_components)
    return [Check("bounded", "passed" if zmax <= limit * (1 + 1e-12) else "failed",
                  f"max |z_i(x)| {zmax:.6g} vs sqrt(2/D) = {limit:.6g}")]


#: the checks by name, in the order check_feature_map runs them; each takes a MapCase and
#: returns its Check rows (``output`` gives two: float64 and float32)
CHECKS = {"construct": check_construct, "output": check_output,
          "sklearn_api": check_sklearn_api, "reproducible": check_reproducible,
          "threads": check_threads, "dtype": check_dtype, "sparse": check_sparse,
          "unbiased": check_unbiased, "variance": check_variance, "bounded": check_bounded}
#: the checks the others need to have passed: the rest do not run after a failure of these
GATES = ("construct", "output")


def check_feature_map(cls, kernel="gaussian", *, params=None, n_components=32, n_redraws=400,
                      d=3, lengthscale=1.0, alpha=1e-4, raise_on_fail=True, sklearn_checks=True,
                      checks=None):
    """Run the conformance checks on a feature map.

    Parameters
    ----------
    cls : str, FeatureMap class or instance
        A registered name such as ``"rff"``, a class, or an instance (whose parameters
        are used).
    kernel : str or Kernel, default "gaussian"
        The kernel the map represents in the checks.
    params : dict or None, default None
        Further constructor keywords.
    n_components : int, default 32
        D of every map the checks fit.
    n_redraws : int, default 400
        Maps fitted for the statistical checks (at least 30).
    d : int, default 3
        Input dimension of the pairs and sample rows.
    lengthscale : float, default 1.0
        The kernel's lengthscale, fixed; the pairs lie PAIR_DISTANCES times it apart.
    alpha : float, default 1e-4
        Family-wise false-alarm rate of the statistical checks, in [1e-12, 1).
    raise_on_fail : bool, default True
        Raise :class:`FeatureMapCheckError` (with the report) if a check failed.
    sklearn_checks : bool, default True
        Run scikit-learn's check_estimator (``sklearn_api``).
    checks : list of str or None, default None
        Names of :data:`CHECKS` to run (None: all); ``construct`` and ``output`` always run
        first, and nothing runs after one of them failed.

    Returns
    -------
    ConformanceReport
        Every check's name, status (passed, failed, skipped) and detail.
    """
    unknown = sorted(set(checks or ()) - set(CHECKS))
    if unknown:
        raise ConfigError(f"checks={unknown[0]!r} is not allowed: use names of "
                          f"{', '.join(CHECKS)}")
    case = map_case(cls, kernel, params=params, n_components=n_components, n_redraws=n_redraws,
                    d=d, lengthscale=lengthscale, alpha=alpha, sklearn_checks=sklearn_checks)
    report = ConformanceReport(case.name, getattr(kernel, "name", kernel))
    for name, check in CHECKS.items():
        if name in GATES or checks is None or name in checks:
            rows = check(case)
            if name == "construct" and rows[0].status == "passed":
                continue  # the fit the others need: a row only when it failed
            report.checks += rows
            if name in GATES and any(c.status == "failed" for c in rows):
                break
    return _finish(report, raise_on_fail)


def _finish(report, raise_on_fail):
    if raise_on_fail and not report.passed:
        raise FeatureMapCheckError(str(report))
    return report
