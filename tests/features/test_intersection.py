"""rffbench.features.intersection: the mb map and its error bound (its unary codes are
tested in tests/_numba/test_binning.py)."""

import numpy as np
import scipy.sparse as sp

from rffbench.features import FEATURE_MAPS
from rffbench.kernels import make_kernel


def test_maji_berg_error_is_within_its_grid_bound(rng):
    X = np.abs(rng.normal(size=(40, 5)))
    f = FEATURE_MAPS["mb"](kernel="intersection", n_components=50, lengthscale=1.0).fit(X)
    K = make_kernel("intersection", lengthscale=1.0).gram(X)
    err = K - f.kernel_estimate(X)
    assert err.min() >= -1e-12 and err.max() <= np.sum(f.top_ / (4 * f.n_bins_)) + 1e-12
    assert sp.issparse(f.transform(X)) and f.transform(X).shape == (40, 50)
