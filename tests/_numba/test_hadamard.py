"""rffbench/_numba/hadamard.py: the fast Walsh-Hadamard transforms against scipy's Hadamard
matrices and a plain-numpy radix-2 transform."""

import numpy as np
import pytest
from scipy.linalg import hadamard

from rffbench import _numba as nbk


def _fwht_radix2(A):
    """Plain numpy reference: one butterfly level at a time (the textbook order)."""
    V = A.copy()
    L, h = V.shape[0], 1
    while h < L:
        V = V.reshape(L // (2 * h), 2, h, -1)
        V = np.stack([V[:, 0] + V[:, 1], V[:, 0] - V[:, 1]], axis=1).reshape(L, -1)
        h *= 2
    return V


@pytest.mark.parametrize("L", [1, 2, 4, 8, 32, 64, 1024])
def test_fwht_matches_hadamard(L, rng):
    A = rng.normal(size=(L, 7))  # 7 columns: full tiles and a partial one
    B = A.copy()
    nbk.fwht_columns(B)
    np.testing.assert_allclose(B, hadamard(L) @ A, rtol=0, atol=1e-12 * L)
    # two levels per sweep add in the radix-2 order: bitwise the same as level by level
    np.testing.assert_array_equal(B, _fwht_radix2(A))


@pytest.mark.parametrize("L,reps", [(8, 1), (64, 2), (32, 3)])
def test_fwht_tiles_repeat_matches_hadamard_powers(L, reps, rng):
    """The speed measurement's in-cache FWHT kernel computes H^reps of every tile into
    its output and leaves its input as it was (each call starts from the same tiles)."""
    V = rng.normal(size=(5, L, 4))
    V0 = V.copy()
    want = np.stack([np.linalg.matrix_power(hadamard(L).astype(float), reps) @ t for t in V])
    out = np.empty_like(V)
    for _ in range(2):  # a second call gives the same: nothing accumulates
        nbk.fwht_tiles_repeat(V, reps, out)
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12 * L**reps)
    np.testing.assert_array_equal(V, V0)
