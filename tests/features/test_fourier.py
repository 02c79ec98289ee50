"""rffbench.features.fourier (rff, rff_pairs): unbiasedness and the exact variance, the
numpy reference, chunking, threads, seeds, extreme arguments, parameters, out= buffers."""
import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from rffbench.errors import ConfigError
from rffbench.features import FEATURE_MAPS, RandomFourierFeatures, RandomFourierPairs
from rffbench.kernels import make_kernel
from rffbench.measure.approximation import VARIANCE_TERMS
from tests.helpers import case_id, shift_invariant_kernel_cases

N_SEEDS = 3000  # independent D_SMALL-feature maps per (kernel, map)
D_SMALL = 16
# pairs spanning small to large |delta| (lengthscale 1, d = 3)
PAIRS_X = np.array([[0.0, 0.0, 0.0], [0.1, -0.2, 0.3], [1.0, 0.5, -0.5], [-1.5, 2.0, 0.7]])
PAIRS_Y = np.array([[0.05, 0.02, -0.04], [0.5, 0.4, -0.2], [0.0, -0.5, 0.8], [1.2, -1.1, -0.9]])


KP = list(shift_invariant_kernel_cases())
KP_IDS = [case_id(n, p) for n, p in KP]


def estimates(map_name, kernel, n_maps, D=D_SMALL):
    """z(x).z(y) of ``n_maps`` independent D-feature maps for each pair: array (n_maps,
    n_pairs).  One map of n_maps * D features is drawn and cut into n_maps maps of D: its
    frequencies (and rff's offsets) are i.i.d. draws, so each block of D / 2 ... D
    frequencies is a D-feature map of its own, scaled by n_maps (sqrt(2 / D) against
    sqrt(2 / (n_maps D))).  rff's features are its frequencies in order; a pairs map's
    (tags.variance "pairs": rff_pairs) are [cos of every frequency, sin of every frequency]."""
    P = np.vstack([PAIRS_X, PAIRS_Y])
    n = len(PAIRS_X)
    cls = FEATURE_MAPS[map_name]
    Z = cls(kernel=kernel, n_components=n_maps * D, random_state=0).fit(P).transform(P)
    prod = (Z[:n] * Z[n:]).T  # (features, pairs)
    if cls.tags.variance == "pairs":  # the cos/sin pairs' variance family: rff_pairs
        half = prod.shape[0] // 2
        prod = prod[:half] + prod[half:]  # cos cos + sin sin, per frequency
    return n_maps * prod.reshape(n_maps, -1, n).sum(1)


@pytest.mark.parametrize("map_name", ["rff", "rff_pairs"])
@pytest.mark.parametrize("kname,params", KP, ids=KP_IDS)
@pytest.mark.slow
def test_unbiased_and_exact_variance(map_name, kname, params):
    """Mean of z(x).z(y) over independent maps -> k (5 sigma of the exact variance), and the
    sample variance matches docs/theory.md, section 1, within 5 standard errors (the
    standard error of a sample variance, from the sample's fourth moment)."""
    cls = FEATURE_MAPS[map_name]
    kernel = make_kernel(kname, lengthscale=1.0, **params)
    est = estimates(map_name, kernel, N_SEEDS)
    k = kernel.k_of_delta(PAIRS_X - PAIRS_Y)
    k2 = kernel.k_of_delta(2 * (PAIRS_X - PAIRS_Y))
    var = VARIANCE_TERMS[cls.tags.variance](k, k2) / D_SMALL
    mean = est.mean(0)
    assert np.all(np.abs(mean - k) <= 5 * np.sqrt(var / N_SEEDS) + 1e-12), (mean, k)
    s2 = est.var(0, ddof=1)
    m4 = ((est - mean) ** 4).mean(0)
    n = N_SEEDS
    se = np.sqrt(np.maximum(m4 - s2**2 * (n - 3) / (n - 1), 0) / n)
    ok = np.abs(s2 - var) <= 5 * se + 1e-12
    assert np.all(ok), (s2, var, se)


def test_rff_pairs_diagonal_is_exactly_one(rng, dtype):
    X = rng.normal(size=(200, 7)).astype(dtype)
    for kname, params in KP:
        Z = RandomFourierPairs(kernel=make_kernel(kname, lengthscale=0.3, **params),
                               n_components=512, random_state=3).fit(X).transform(X)
        diag = np.einsum("ij,ij->i", Z.astype(np.float64), Z.astype(np.float64))
        assert np.max(np.abs(diag - 1)) <= (1e-13 if dtype == np.float64 else 1e-5)


def test_rff_diagonal_is_not_one(rng):
    X = rng.normal(size=(50, 3))
    Z = RandomFourierFeatures(n_components=64, random_state=0).fit(X).transform(X)
    assert np.max(np.abs((Z * Z).sum(1) - 1)) > 1e-3


@pytest.mark.parametrize("d", [20, 200], ids=["fused", "chunked-gemm"])
@pytest.mark.parametrize("map_name", ["rff", "rff_pairs"])
def test_matches_numpy_reference(map_name, d, rng, dtype):
    """Both transform paths: fused GEMM + cosine by row blocks (d <= FUSED_MAX_D) and
    chunked GEMM then cosine pass."""
    X = (rng.normal(size=(300, d)) * 3).astype(dtype)
    f = FEATURE_MAPS[map_name](kernel=make_kernel("laplacian", lengthscale=0.05),
                               n_components=256, random_state=1, chunk_rows=37).fit(X)
    Z = f.transform(X)
    assert Z.dtype == dtype and Z.shape == (300, 256)
    A = X.astype(np.float64) @ f.random_weights_
    if map_name == "rff":
        ref = np.sqrt(2 / 256) * np.cos(A + f.random_offset_)
    else:
        ref = np.sqrt(2 / 256) * np.hstack([np.cos(A), np.sin(A)])
    # float32: the GEMM rounds arguments (~|arg| * 6e-8; Cauchy frequencies make |arg| large);
    # float64: the rounding bound of a d-term product, (d + 2) eps sum |x_k w_k| per argument
    # (its summation order is the BLAS kernel's, which differs by CPU), times the scale
    tol = 1e-7 * max(1.0, np.abs(A).max()) if dtype == np.float32 else \
        _gemm_rounding(X, f.random_weights_, 256)
    assert np.max(np.abs(Z - ref)) <= tol


def _gemm_rounding(X, W, D):
    """The features' rounding bound from their arguments x.w (float64, d terms, summed in
    any order: |error| <= (d + 2) eps sum_k |x_k w_k|), times the map's scale sqrt(2 / D)."""
    X = np.asarray(X, dtype=np.float64)
    return (X.shape[1] + 2) * np.finfo(np.float64).eps * float(
        (np.abs(X) @ np.abs(W)).max()) * np.sqrt(2 / D)


def test_chunking_does_not_change_features(rng):
    """The same features, to the arguments' rounding: a block of 33 rows and one of 64 go
    through the BLAS kernel's edge and full paths, whose sums may round differently (an ulp
    on an AVX2 CPU, equal on an AVX-512 one)."""
    X = rng.normal(size=(1000, 9))
    a = RandomFourierFeatures(n_components=128, random_state=4).fit(X).transform(X)
    f = RandomFourierFeatures(n_components=128, random_state=4, chunk_rows=33).fit(X)
    b = f.transform(X)
    assert np.max(np.abs(a - b)) <= _gemm_rounding(X, f.random_weights_, 128)


@pytest.mark.parametrize("map_name", ["rff", "rff_pairs"])
def test_bit_identical_across_thread_counts(map_name, rng):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 numba threads")
    X = rng.normal(size=(3000, 64))
    f = FEATURE_MAPS[map_name](n_components=512, random_state=11, kernel=make_kernel(
        "gaussian", lengthscale=8.0))
    before = numba.get_num_threads()
    try:
        outs = []
        for t in (1, 2):
            numba.set_num_threads(t)
            with threadpool_limits(limits=t):
                outs.append(f.fit(X).transform(X))
    finally:
        numba.set_num_threads(before)
    assert outs[0].tobytes() == outs[1].tobytes()


def test_same_seed_same_features_different_seed_different(rng):
    X = rng.normal(size=(20, 3))
    a = RandomFourierFeatures(n_components=32, random_state=5).fit(X).transform(X)
    b = RandomFourierFeatures(n_components=32, random_state=5).fit(X).transform(X)
    c = RandomFourierFeatures(n_components=32, random_state=6).fit(X).transform(X)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_huge_arguments_use_exact_cosine(rng):
    X = rng.normal(size=(50, 3)) * 1e9
    f = RandomFourierPairs(kernel=make_kernel("gaussian", lengthscale=1.0), n_components=64,
                           random_state=0).fit(X)
    A = X @ f.random_weights_
    ref = np.sqrt(2 / 64) * np.hstack([np.cos(A), np.sin(A)])
    assert np.max(np.abs(f.transform(X) - ref)) <= 1e-12


def test_bad_parameters(rng):
    X = rng.normal(size=(10, 2))
    with pytest.raises(ConfigError, match="D=0 is not allowed"):
        RandomFourierFeatures(n_components=0).fit(X)
    with pytest.raises(ConfigError, match="must be even"):
        RandomFourierPairs(n_components=7).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        RandomFourierFeatures().fit(np.array([[np.nan, 1.0], [0.0, 1.0]]))
    f = RandomFourierFeatures(n_components=8).fit(X)
    with pytest.raises(ValueError, match="features"):
        f.transform(rng.normal(size=(3, 5)))

# scikit-learn's estimator checks run for every map in tests/contracts/test_conformance.py
# (rffbench.testing.check_feature_map).


def test_transform_into_a_preallocated_output(rng):
    """out= writes the same features into the caller's buffer (the speed experiment's
    reused-output timing); a buffer of the wrong shape, dtype or layout is refused."""
    from rffbench.features import FEATURE_MAPS

    X = rng.standard_normal((50, 4))
    f = FEATURE_MAPS["rff"](n_components=32, random_state=0).fit(X)
    buf = np.empty((50, 32))
    assert f.transform(X, out=buf) is buf
    assert np.array_equal(buf, f.transform(X))
    for bad in (np.empty((50, 31)), np.empty((50, 32), dtype=np.float32),
                np.empty((32, 50)).T, [[0.0] * 32] * 50):
        with pytest.raises(ValueError, match="out must be a writeable C-contiguous float64"):
            f.transform(X, out=bad)
