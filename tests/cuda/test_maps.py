"""A fitted map's CUDA transform (rffbench.cuda.maps) against the same map's CPU transform:
the parameters are drawn on the host, so the two differ by rounding only; shapes from 1
(N = 1, d = 1, odd D), float64 and float32."""
import numpy as np
import pytest

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


def test_a_map_without_a_cuda_transform_is_one_line():
    X = np.arange(6.0).reshape(2, 3)
    fmap = FEATURE_MAPS["nystrom"](kernel="gaussian", n_components=2, random_state=0,
                                   lengthscale=1.0).fit(X)
    with pytest.raises(ValueError, match="features=nystrom has no CUDA transform: use one of "
                                         "arccos, fastfood, orf"):
        maps.transform(fmap, X)
