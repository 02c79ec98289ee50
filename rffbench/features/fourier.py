"""Random Fourier feature maps (Rahimi & Recht 2007): ``rff`` and ``rff_pairs``.

Both are scikit-learn transformers.  ``n_components`` is always the *output*
dimension D; the number of frequencies ``n_freq_`` is D for ``rff`` and D/2
for ``rff_pairs`` (docs/theory.md, section 1):

* ``rff``:        z(x) = sqrt(2/D) cos(W x + b),             b ~ U[0, 2 pi)
* ``rff_pairs``:  z(x) = sqrt(2/D) [cos(W x), sin(W x)],     z(x).z(x) = 1

with the rows of W drawn from the kernel's spectral density.  ``transform``
runs over row chunks.  For d <= ``FUSED_MAX_D`` one numba kernel does both
steps per block of rows (single-threaded BLAS writes the block's X @ W, the
cosine follows while it is in cache); above, a BLAS GEMM writes the chunk's
X @ W into the preallocated output, then one numba-parallel pass adds the
offset, takes the (hand-vectorised) cosine and scales, in place.  float32
input gives float32 output, computed in float32.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .. import _numba as nbk
from .base import FeatureMap, check_even, project_into, trig_kernel

#: d up to which a dense map fuses its projection and cosine by row blocks
#: (single-threaded BLAS per block): measured 20-30% faster at d <= 64, even
#: at 128, and 10-45% slower at d >= 512 (small GEMM blocks lose efficiency)
FUSED_MAX_D = 128

#: arc-cosine features: |w.x| at most this fraction of its per-row bound counts as 0
#: (rffbench._numba.ZERO_TOL, which the CUDA maps use too)
ZERO_TOL = nbk.ZERO_TOL


class FourierMap(FeatureMap):
    """Base of the maps z(x) = sqrt(2/D) cos(W x + b) or sqrt(2/D) [cos W x, sin W x].

    Subclasses choose the frequencies (:meth:`_draw`: dense W, or structured
    parameters with their own :meth:`_project` and :meth:`trig_arg_bound`);
    the cosine pass is shared.  ``pairs`` (class attribute or parameter)
    selects cos/sin pairs (D/2 frequencies) or cos + offset (D frequencies).

    The arc-cosine and linear kernels are Gaussian integrals too (k = c E g(w.x) g(w.y), w ~
    N(0, I / l^2), g = step or relu with c = 2, the identity with c = 1: random projections):
    for them a map whose KERNELS include them applies sqrt(c/D) g to its D directions
    instead of the cosine (``pairs`` does not apply; :func:`activate`).
    """

    pairs = False
    KERNEL_NEEDS = ("sample_frequencies",)

    @classmethod
    def outputs_per_freq(cls, kernel=None, **params):
        default = cls.PAIRS_DEFAULT if "pairs" in cls.CONFIG_PARAMS else cls.pairs
        return 2 if params.get("pairs", default) and trig_kernel(kernel) else 1

    tags = {"sparse_input": True}  # X @ W takes CSR rows (structured maps densify in _project)

    def _fit(self, X, rng):
        self.n_freq_ = self.n_freq_for(self.n_components, self.kernel_, pairs=self.pairs)
        W, offset = self._draw(X.shape[1], self.n_freq_, rng)
        if W is not None:
            self._set_frequencies(W, X.dtype)
        if not self.pairs and self.kernel_.shift_invariant:
            if offset is None:
                offset = rng.uniform(0.0, 2.0 * np.pi, self.n_freq_)
            self.random_offset_ = np.asarray(offset, dtype=X.dtype)

    def _set_frequencies(self, W, dtype):
        """Dense frequencies W (m, d), kept transposed in the input's dtype, and the row
        bound the fast-cosine choice uses."""
        self.random_weights_ = np.ascontiguousarray(W.T, dtype=dtype)
        self._w_absmax = np.abs(self.random_weights_).max(axis=1).astype(np.float64)

    def _draw(self, d, m, rng):
        """(W of shape (m, d) or None for structured maps, offsets or None = uniform)."""
        return self.kernel_.sample_frequencies(m, d, rng), None

    def _weights(self, dtype):
        return self._as("random_weights_", dtype)

    def _project(self, X, out, m):
        """out[:, :m] <- X @ W^T, the m frequencies' arguments (X dense or CSR; out (n, D)
        C-contiguous, m <= D: the structured maps' compiled projections take the whole
        array and m, one compiled version whatever the number of rows)."""
        project_into(X, self._weights(X.dtype), out[:, :m])

    def projection_bound(self, X):
        """Per-row upper bound on |w.x| over the frequencies, O(n d)."""
        return np.asarray(abs(X) @ self._w_absmax.astype(X.dtype), dtype=np.float64)

    def trig_arg_bound(self, X):
        """Per-row upper bound on |w.x + b|, O(n d): selects the fast-cosine path."""
        return self.projection_bound(X) + (0.0 if self.pairs else 2.0 * np.pi)

    def _transform_into(self, X, out):
        if not self.kernel_.shift_invariant:  # arc-cosine: step / relu of the directions
            self._project(X, out, out.shape[1])
            # a projection within ZERO_TOL of its bound is 0 (the step's midpoint): structured
            # or grid directions can be exactly orthogonal to a point, and rounding alone
            # (different in float32 and float64) would pick the side
            activate(self.kernel_, out, self.n_components, ZERO_TOL * self.projection_bound(X))
            return
        if self.kernel_.warps:  # shift-invariant in warped coordinates (skewed chi2)
            self.kernel_.check_domain(X)
            X = self.kernel_.warp(X.toarray() if sp.issparse(X) else X)
        scale = math.sqrt(2.0 / self.n_components)
        m = self.n_freq_
        bound = self.trig_arg_bound(X)
        offset = None if self.pairs else self._as("random_offset_", out.dtype)
        if hasattr(self, "random_weights_") and X.shape[1] <= FUSED_MAX_D \
                and not sp.issparse(X):
            # dense W, small d: fused GEMM + cosine by row blocks
            W = self._weights(X.dtype)
            with nbk.blas_single_thread():
                if self.pairs:
                    nbk.gemm_sincos(X, W, scale, bound, out)
                else:
                    nbk.gemm_cos_offset(X, W, offset, scale, bound, out)
            return
        self._project(X, out, m)  # chunk GEMM (or structured projection), cosine pass
        if self.pairs:
            nbk.sincos_pairs_inplace(out, m, scale, bound)
        else:
            nbk.cos_offset_scale_inplace(out, offset, scale, bound)


class RandomFourierFeatures(FourierMap):
    """``rff``: z(x) = sqrt(2/D) cos(W x + b), D frequencies (sklearn's RBFSampler form).

    Attributes
    ----------
    random_weights_ : ndarray (n_features, n_freq), the frequencies W^T
    random_offset_ : ndarray (n_freq,), offsets b ~ U[0, 2 pi) (``rff`` only)
    n_freq_ : int, number of frequencies
    kernel_ : the fitted kernel
    """

    name = "rff"
    tags = {"variance": "rff"}


class RandomFourierPairs(RandomFourierFeatures):
    """``rff_pairs``: z(x) = sqrt(2/D) [cos(W x), sin(W x)], D/2 frequencies, D even.

    Shift-invariant estimate; z(x).z(x) = 1 exactly (to rounding).
    """

    name = "rff_pairs"
    tags = {"variance": "pairs"}
    pairs = True

    @classmethod
    def check_params(cls, n_components, kernel=None, **params):
        super().check_params(n_components, kernel)
        check_even(cls.name, n_components)


def activate(kernel, out, n_components, zero_below):
    """out (X @ W^T of Gaussian directions) <- sqrt(c / D) g(out) for a kernel k = c E[g(w.x)
    g(w.y)] (``kernel.activation`` g, ``kernel.activation_weight`` c: arc-cosine, linear);
    |w.x| <= zero_below[i] counts as 0 for the step."""
    nbk.activation_inplace(out, kernel.activation,
                           math.sqrt(kernel.activation_weight / n_components), zero_below)


#: the maps this module registers (rffbench.features collects them)
MAPS = (RandomFourierFeatures, RandomFourierPairs)
