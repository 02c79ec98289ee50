"""A fitted map's CUDA transform (rffbench.cuda.maps) against the same map's CPU transform:
the parameters are drawn on the host, so the two differ by rounding only; shapes from 1
(N = 1, d = 1, odd D), float64 and float32; and a map put on the device
(``FeatureMap.on_device``): chunks, ``out=``, sparse and Fortran rows."""
import numpy as np
import pytest
import scipy.sparse as sp

from rffbench.cuda import maps
from rffbench.features import FEATURE_MAPS

CASES = [("rff", "gaussian", {}), ("rff_pairs", "gaussian", {}), ("orf", "gaussian", {}),
         ("orf", "arccos0", {}), ("sorf", "gaussian", {}), ("sorf", "gaussian", dict(pairs=False)),
         ("fastfood", "gaussian", {}), ("fastfood", "gaussian", dict(pairs=False)),
         ("arccos", "arccos0", {}), ("arccos", "arccos1", {}), ("positive", "gaussian", {}),
         ("positive_orf", "gaussian", {}), ("rff", "laplacian", {})]


@pytest.mark.parametrize("name,kernel,params", CASES)
@pytest.mark.parametrize("N,d,D", [(1, 1, 2), (3, 5, 7)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_cuda_transform_is_the_cpu_maps(name, kernel, params, N, d, D, dtype, rng):
    cls = FEATURE_MAPS[name]
    if cls.outputs_per_freq(kernel, **params) == 2 and D % 2:
        D += 1  # cos/sin pairs: D even
    X = rng.normal(size=(N, d)).astype(dtype)
    fmap = cls(kernel=kernel, n_components=D, random_state=3, lengthscale=1.3,
               **params).fit(X)
    got = maps.transform(fmap, X).copy_to_host()
    want = fmap.transform(X)
    assert got.shape == want.shape == (N, D) and got.dtype == want.dtype
    tol = dict(rtol=1e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(got, want, **tol)


def test_the_config_checks_list_of_cuda_maps_is_the_transforms():
    """rffbench.cuda.MAPS (read by the config check without a GPU package) names exactly
    the maps rffbench.cuda.maps has a transform for."""
    from rffbench import cuda

    assert cuda.MAPS == tuple(sorted(maps.MAPS))


def test_a_map_without_a_cuda_transform_is_one_line():
    X = np.arange(6.0).reshape(2, 3)
    fmap = FEATURE_MAPS["nystrom"](kernel="gaussian", n_components=2, random_state=0,
                                   lengthscale=1.0).fit(X)
    with pytest.raises(ValueError, match="features=nystrom has no CUDA transform: use one of "
                                         "arccos, fastfood, orf"):
        maps.transform(fmap, X)


@pytest.mark.parametrize("name", ["rff", "orf", "sorf", "positive"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_map_on_the_device_transforms_as_on_the_cpu(name, dtype, rng):
    X = rng.normal(size=(7, 3)).astype(dtype)
    cpu = FEATURE_MAPS[name](kernel="gaussian", n_components=6, random_state=1,
                             lengthscale=1.1, chunk_rows=3).fit(X)
    gpu = FEATURE_MAPS[name](kernel="gaussian", n_components=6, random_state=1,
                             lengthscale=1.1, chunk_rows=3).on_device("cuda").fit(X)
    tol = dict(rtol=1e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12)
    want = cpu.transform(X)
    got = gpu.transform(X)  # three chunks of rows, each through the device
    assert gpu.device == "cuda" and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **tol)
    out = np.full_like(want, np.nan)
    assert gpu.transform(X, out=out) is out
    np.testing.assert_allclose(out, want, **tol)
    np.testing.assert_allclose(gpu.transform(sp.csr_matrix(X)), want, **tol)
    np.testing.assert_allclose(gpu.transform(np.asfortranarray(X)), want, **tol)


def test_on_device_refuses_a_map_without_a_cuda_transform_and_an_unknown_device():
    fmap = FEATURE_MAPS["nystrom"](kernel="gaussian", n_components=2)
    with pytest.raises(ValueError, match="device='cuda' is not allowed: features=nystrom has "
                                         "no CUDA transform; maps with one: arccos"):
        fmap.on_device("cuda")
    with pytest.raises(ValueError, match="device='tpu' is not allowed: use one of cpu, cuda"):
        FEATURE_MAPS["rff"]().on_device("tpu")
