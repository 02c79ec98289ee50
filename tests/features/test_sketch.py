"""rffbench.features.sketch: the SRHT projection."""
import numpy as np
from scipy.linalg import hadamard

from rffbench import _numba as nbk


# ---- numba kernels against numpy ---------------------------------------------------
def test_srht_projection_is_the_subsampled_hadamard_matrix(rng):
    X = rng.normal(size=(9, 5))
    L, B = 8, 3
    signs = rng.choice([-1.0, 1.0], size=(B, L))
    rows = np.argsort(rng.random((B, L)), axis=1)
    out = np.empty((9, 19))
    nbk.srht_project(X, signs, rows, 0.7, out)
    H = hadamard(L)
    Xp = np.hstack([X, np.zeros((9, L - 5))])
    ref = np.hstack([0.7 * (Xp * signs[b]) @ H.T[:, rows[b]] for b in range(B)])[:, :19]
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-13)
