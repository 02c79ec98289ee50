"""Exact Gram of every kernel against an independent scipy (cdist) reference."""
import math

import numpy as np
import pytest
from conftest import case_id, compose_config, shift_invariant_kernel_cases
from references import REFERENCES, reference_gram

from rffbench.config import validate
from rffbench.errors import ConfigError
from rffbench.kernels import DIRECT_SQDIST_MAX_D, KERNELS, make_kernel

LS = 1.7


def test_every_shift_invariant_kernel_has_a_reference():
    """A built-in shift-invariant kernel without a reference fails here, by name."""
    names = {n for n, _ in shift_invariant_kernel_cases()}
    assert names <= set(REFERENCES), sorted(names - set(REFERENCES))
    with pytest.raises(KeyError, match="no reference Gram for kernel 'nope'"):
        reference_gram("nope", np.zeros((1, 1)), np.zeros((1, 1)), 1.0)


CASES = list(shift_invariant_kernel_cases())
IDS = [case_id(n, p) for n, p in CASES]


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
@pytest.mark.parametrize("d", [3, DIRECT_SQDIST_MAX_D + 9], ids=["direct", "gemm"])
def test_gram_matches_reference(name, params, d, dtype, rng):
    X = rng.normal(size=(67, d)).astype(dtype)
    Y = rng.normal(size=(45, d)).astype(dtype)
    ls = LS * math.sqrt(d)
    k = make_kernel(name, lengthscale=ls, **params)
    G = k.gram(X, Y)
    ref = reference_gram(name, X, Y, ls, **params)
    assert G.dtype == dtype and G.shape == (67, 45)
    tol = 1e-12 if dtype == np.float64 else 2e-6
    assert np.max(np.abs(G - ref)) <= tol
    # symmetric case and unit diagonal
    K = k.gram(X)
    assert np.max(np.abs(K - K.T)) <= tol and np.max(np.abs(np.diag(K) - 1)) <= tol
    # k_of_delta agrees with the Gram matrix
    kd = k.k_of_delta(X[:5, None, :].astype(np.float64) - Y[None, :7, :].astype(np.float64))
    assert np.max(np.abs(kd - ref[:5, :7])) <= 1e-12


@pytest.mark.parametrize("name,params", CASES, ids=IDS)
def test_spectral_sampler_second_moment_and_sigma_p2(name, params):
    """E|w|^2 of the sampler equals sigma_p^2 (finite cases), and E cos(w.delta) = k(delta)."""
    d, n = 3, 400_000
    k = make_kernel(name, lengthscale=LS, **params)
    W = k.sample_frequencies(n, d, np.random.default_rng(7))
    delta = np.array([0.4, -0.9, 1.3])
    c = np.cos(W @ delta)
    # mean of bounded cos terms: sd <= 1/sqrt(n); 5 sigma
    assert abs(c.mean() - k.k_of_delta(delta)) <= 5 * c.std() / math.sqrt(n)
    s2 = k.sigma_p2(d)
    if math.isfinite(s2):
        sq = (W**2).sum(1)
        if name == "matern":  # t-distributed norms: heavy tail, finite variance only for nu > 2
            assert abs(sq.mean() - s2) <= 0.05 * s2
        else:
            assert abs(sq.mean() - s2) <= 5 * sq.std() / math.sqrt(n)
    else:
        assert name == "laplacian" or (name == "matern" and params["nu"] <= 1)


def test_median_lengthscale_uses_kernel_metric(rng):
    X = rng.normal(size=(300, 4))
    from scipy.spatial.distance import pdist

    g = make_kernel("gaussian", lengthscale="median").fit(X)
    lap = make_kernel("laplacian", lengthscale="median").fit(X)
    assert g.lengthscale_ == pytest.approx(np.median(pdist(X)))
    assert lap.lengthscale_ == pytest.approx(np.median(pdist(X, "cityblock")))
    sub = make_kernel("gaussian", lengthscale="median", median_subsample=50).fit(X)
    assert sub.lengthscale_ != g.lengthscale_ and sub.lengthscale_ > 0


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "mean", True])
def test_bad_lengthscale(bad):
    with pytest.raises(ConfigError, match="kernel.lengthscale"):
        make_kernel("gaussian", lengthscale=bad).fit(np.zeros((3, 2)) + np.arange(3)[:, None])


def test_bad_nu_and_unknown_kernel():
    with pytest.raises(ConfigError, match="kernel.nu=2.0"):
        make_kernel("matern", nu=2.0).fit(None)
    with pytest.raises(ConfigError, match="kernel='rbf' is not allowed: use one of gaussian"):
        make_kernel("rbf")


def test_knn_lengthscale_is_the_mean_distance_to_the_kth_neighbour(rng):
    """kernel.lengthscale=knn<k> (Yu et al. 2016's bandwidth rule, k = 50): the mean over the
    (subsampled) points of the distance to their k-th nearest neighbour among them."""
    from scipy.spatial.distance import cdist

    from rffbench.errors import DataError
    from rffbench.kernels import make_kernel

    X = rng.normal(size=(300, 5))
    ref = np.mean(np.sort(cdist(X, X), axis=1)[:, 50])  # column 0 is the point itself
    assert make_kernel("gaussian", lengthscale="knn50").fit(X).ls == pytest.approx(ref, rel=1e-12)
    k = make_kernel("gaussian", lengthscale="knn5", median_subsample=100).fit(X)
    sub = X[np.sort(np.random.default_rng(0).choice(300, 100, replace=False))]
    assert k.ls == pytest.approx(np.mean(np.sort(cdist(sub, sub), axis=1)[:, 5]), rel=1e-12)
    with pytest.raises(DataError, match=r"kernel.lengthscale='knn50' needs at least 51 points"):
        make_kernel("gaussian", lengthscale="knn50").fit(X[:30])


def test_unknown_kernel_parameters_are_an_error_never_dropped():
    from rffbench.errors import ConfigError
    from rffbench.kernels import make_kernel

    assert make_kernel("matern", lengthscale=1.0, nu=2.5).nu == 2.5
    with pytest.raises(ConfigError, match="nu is not a parameter of .*it takes"):
        make_kernel("gaussian", lengthscale=1.0, nu=2.5)
    with pytest.raises(ConfigError, match="kernel.params.nu=2.5 is not allowed: kernel=matern "
                                          r"takes no further parameters \(set nu as kernel.nu\)"):
        validate(compose_config(["kernel=matern", "+kernel.params.nu=2.5"]))


def test_a_kernel_without_a_yaml_file_runs_from_its_declarations(tmp_path):
    """rational_quadratic has no conf/kernel file: kernel=rational_quadratic and its own key
    kernel.alpha come from the class; the records carry every kernel parameter
    (kernel_params), and alpha changes the exact Gram and so the error."""
    import pandas as pd
    from conftest import run_cli

    fro = {}
    for alpha in (0.5, 20.0):
        out = tmp_path / f"a{alpha}"
        r = run_cli("kernel=rational_quadratic", f"kernel.alpha={alpha}", "dataset=wine", "D=64",
                    "kernel.lengthscale=2.0", "measure.bounds.enabled=false",
                    "measure.timing.enabled=false", "measure.learning.enabled=false",
                    f"hydra.run.dir={out}")
        assert r.returncode == 0, r.stderr[-2000:]
        df = pd.read_csv(out / "records.csv")
        assert set(df.kernel) == {"rational_quadratic"}
        assert set(df.kernel_params) == {f"alpha={alpha:g}"}
        fro[alpha] = df[df.metric == "rel_fro_error"].value.iloc[0]
    assert fro[0.5] != fro[20.0]
    bad = run_cli("kernel=rational_quadratic", "kernel.alpha=-1", "dataset=wine")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "kernel.alpha=-1.0 is not allowed: use a number > 0" in bad.stderr
    inert = run_cli("kernel=gaussian", "kernel.alpha=3", "dataset=wine")
    assert inert.returncode == 2 and ("kernel=gaussian does not use kernel.alpha; "
                                      "kernel=rational_quadratic does") in inert.stderr


def test_the_kernel_block_is_the_kernels_declarations():
    """Every parameter a built-in kernel's constructor takes beyond the common ones is a key
    of the kernel block, with the class's default, constraint and numpydoc description."""
    import inspect

    from rffbench.config import KernelBlock, KernelConfig

    fields = KernelConfig.__dataclass_fields__
    for name, cls in KERNELS.builtins().items():
        sig = inspect.signature(cls.__init__).parameters
        for k in set(cls._get_param_names()) - set(KernelBlock.COMMON):
            assert k in fields, (name, k)
            assert fields[k].default == sig[k].default, (name, k)
            assert KernelConfig.constraints[k] is cls.all_constraints()[k], (name, k)
            doc = KernelConfig.field_docs[k]  # "... (kernel=polynomial, anova)"
            assert name in doc[doc.rindex("(kernel="):].strip("()").split("=")[1].split(", ") \
                and len(doc) > 30, (name, k)
