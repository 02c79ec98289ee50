"""rffbench.features.binning: random binning features (sparse rows, convergence)."""
import math

import numpy as np
import scipy.sparse as sp

from rffbench.features import FEATURE_MAPS
from rffbench.kernels import make_kernel
from tests.helpers import pair_estimates, pairs_at


def test_binning_rows_have_P_nonzeros_and_converge_to_laplacian(rng):
    lap = make_kernel("laplacian", lengthscale=1.5)
    X = rng.uniform(-1, 1, size=(150, 3))
    K = lap.gram(X)
    errs = {}
    for P in (16, 256, 4096):
        f = FEATURE_MAPS["binning"](kernel=lap, n_components=P, random_state=0).fit(X)
        Z = f.transform(X)
        assert sp.isspmatrix_csr(Z) and np.all(np.diff(Z.indptr) == P)
        assert Z.shape[1] == f.n_columns_ and f.n_columns_ >= P
        errs[P] = np.abs((Z @ Z.T).toarray() - K).max()
    assert errs[16] > errs[256] > errs[4096] and errs[4096] < 0.08, errs
    # unbiased: the bin-sharing frequency of a pair averages to k
    Xp, Yp = pairs_at(3, [0.4, 1.5])
    est = pair_estimates("binning", lap, Xp, Yp, 4, seeds=1500)
    k = lap.k_of_delta(Xp - Yp)
    se = est.std(0, ddof=1) / math.sqrt(1500)
    assert np.all(np.abs(est.mean(0) - k) <= 5 * se), (est.mean(0), k)


def test_binning_unseen_bins_get_no_column(rng):
    lap = make_kernel("laplacian", lengthscale=0.5)
    X = rng.uniform(-1, 1, size=(50, 2))
    f = FEATURE_MAPS["binning"](kernel=lap, n_components=32, random_state=0).fit(X)
    Zfar = f.transform(X + 100.0)
    assert Zfar.nnz == 0 and Zfar.shape == (50, f.n_columns_)
