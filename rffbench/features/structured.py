"""Orthogonal and structured Gaussian maps (docs/theory.md, section 5): ``orf``, ``sorf``,
``fastfood``, ``circulant``.

All four replace the i.i.d. Gaussian frequency matrix of ``rff`` and keep
its cosine pass (cos/sin pairs with ``pairs=True``, the default, or cos +
offset).  Gaussian kernel, and the arc-cosine and linear kernels (Gaussian integrals over
the same directions; step / relu / identity instead of the cosine, ``FourierMap``: for the
linear kernel these are Johnson-Lindenstrauss projections, as in pyrfm's tests):
orthogonality is unbiased only for the isotropic Gaussian law.

* ``orf`` (Yu et al., NIPS 2016): per block of d frequencies W = (1/l) S Q, Q
  Haar-orthogonal (QR of a Gaussian matrix, columns times sign(diag R)), S =
  diag of chi_d row norms (norms of independent Gaussian vectors, drawn
  separately so rows keep the Gaussian norm law); blocks stacked, the last
  truncated.  Unbiased; dense, O(D d) time and memory.  ``layout="frame"``
  (the ``Gort`` of Munkhoeva et al. 2018's code): one m x d matrix Q with
  orthonormal columns (a Haar-distributed tight frame; rows are not orthogonal
  when m > d), rows scaled by chi_m norms.  A row of Q has squared norm
  Beta(d/2, (m-d)/2), so chi_m^2 times it is chi_d^2: each row is again exactly
  N(0, I / l^2), and the estimate unbiased.
* ``sorf`` (same paper): W = (sqrt(L)/l) H D1 H D2 H D3 per block of L
  frequencies, H the normalised L x L Walsh-Hadamard matrix, D_i Rademacher
  diagonals, inputs zero-padded from d to L = 2^ceil(log2 d); applied by three
  numba FWHTs, O(D log L) time and O(D) memory.  (The paper writes sqrt(d)
  for d a power of two; with padding the scale that gives each frequency
  coordinate variance 1/l^2 is sqrt(L).)  Slightly biased: its frequencies
  are only approximately Gaussian (the bias vanishes as L grows; see the
  test-suite's documented tolerance).
* ``circulant`` (signed circulant random features, Feng, Hu & Liao, IJCAI 2015): per block
  of d frequencies W = (1/l) diag(s) circ(g), g ~ N(0, I_d), s Rademacher: row k is the
  cyclic shift of g by k with sign s_k, each row exactly N(0, I / l^2) (dependent within a
  block), so unbiased; W x is a circular convolution, by FFTs (scipy.fft), O(D log d) time,
  O(D) memory.
* ``fastfood`` (Le, Sarlos, Smola, ICML 2013): V = (1/(l sqrt(L))) S H G Pi H B
  per block, B Rademacher, Pi a permutation, G diagonal N(0, 1), S_ii = s_i /
  ||G||_F with s_i ~ chi_L, so row i has norm s_i / l exactly like a Gaussian
  frequency; two FWHTs per block, O(D log L) time, O(D) memory.
"""
from __future__ import annotations

import math

import numba
import numpy as np
import scipy.fft

from .. import _numba as nbk
from .. import memory
from ..checks import OneOf
from .base import PAIRS_KEY
from .formulas import orf_variance
from .fourier import FourierMap


def next_pow2(d):
    return 1 << max(0, (int(d) - 1).bit_length())


#: the kernels that are integrals over isotropic Gaussian directions
GAUSSIAN_DIRECTION_KERNELS = ("gaussian", "arccos0", "arccos1")
#: ... and the linear kernel: its maps are random projections (identity activation)
PROJECTION_KERNELS = GAUSSIAN_DIRECTION_KERNELS + ("linear",)


class GaussianOnlyMap(FourierMap):
    """A Fourier map with a ``pairs`` parameter whose directions are orthogonal or structured
    Gaussian ones: the Gaussian kernel and the arc-cosine kernels only.

    Parameters
    ----------
    pairs : bool, default True
        cos/sin pairs (D even) or cos + offset (shift-invariant kernels only).
    """

    CONFIG_PARAMS = {"pairs": PAIRS_KEY}
    tags = {"variance": None}  # not i.i.d.: no exact variance formula, no published bound
    KERNELS = PROJECTION_KERNELS
    KERNEL_REASON = ("it builds orthogonal/structured Gaussian directions, unbiased only for the "
                     "kernels that integrate over an isotropic Gaussian (gaussian, arccos0, "
                     "arccos1, linear); use features=rff or qmc")

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, pairs=True):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows)
        self.pairs = pairs


LAYOUTS = ("blocks", "frame")


def orthogonal_gaussian_rows(m, d, rng):
    """m rows in blocks of d orthogonal ones (the last block cut), each row marginally
    N(0, I_d): Haar-random orthonormal directions with chi_d lengths (Yu et al. 2016).
    Returns (W of shape (m, d), the lengths (m,))."""
    blocks, scales = [], []
    for _ in range(-(-m // d)):
        Q, R = np.linalg.qr(rng.standard_normal((d, d)))
        Q = Q * np.sign(np.diag(R))  # Haar: columns times sign(diag R)
        norms = np.sqrt(rng.chisquare(d, size=d))
        blocks.append(norms[:, None] * Q.T)  # rows: orthonormal directions, chi_d lengths
        scales.append(norms)
    return np.vstack(blocks)[:m], np.concatenate(scales)[:m]


class OrthogonalRandomFeatures(GaussianOnlyMap):
    """Orthogonal random features (Yu et al. 2016): orthogonal blocks scaled by chi_d norms
    (dense W, like ``rff``); ``layout="frame"``: one tight frame scaled by chi_m norms
    (module docs).  Attributes: ``random_weights_`` (d, m), ``row_scales_`` (m,) the chi
    scales (W l = diag(row_scales_) Q).

    Parameters
    ----------
    layout : {"blocks", "frame"}, default "blocks"
        Orthogonal d x d blocks with chi_d norms, or one tight frame with chi_m norms
        (quffka's Gort).
    """

    name = "orf"

    def __init__(self, *, kernel="gaussian", n_components=100, lengthscale=None, gamma=None,
                 random_state=None, chunk_rows=None, pairs=True, layout="blocks"):
        super().__init__(kernel=kernel, n_components=n_components, lengthscale=lengthscale,
                         gamma=gamma, random_state=random_state, chunk_rows=chunk_rows,
                         pairs=pairs)
        self.layout = layout

    constraints = {"layout": OneOf(LAYOUTS, text="use one of " + ", ".join(LAYOUTS)
                                   + " (orthogonal d x d blocks, or one tight frame)")}

    def map_params(self):
        return dict(pairs=self.pairs, layout=self.layout)

    EXACT_MSE_SOURCE = "exact ORF variance (Yu et al. 2016's construction)"

    @classmethod
    def exact_mse(cls, kernel, x, y, D, **params):
        """With cos/sin pairs in orthogonal blocks, for the Gaussian kernel:
        :func:`~rffbench.features.formulas.orf_variance`; None otherwise (a frame, cos +
        offset, the arc-cosine kernels)."""
        if not (kernel.name == "gaussian" and params.get("pairs", True)
                and params.get("layout", "blocks") == "blocks"):
            return None
        return orf_variance(float(np.linalg.norm(x - y)) / kernel.ls, D // 2, x.size)

    def _draw(self, d, m, rng):
        if self.layout == "frame" and m > d:
            Q, R = np.linalg.qr(rng.standard_normal((m, d)))
            Q = Q * np.sign(np.diag(R))  # Haar on the Stiefel manifold
            norms = np.sqrt(rng.chisquare(m, size=m))
            self.row_scales_ = norms.astype(self._dtype)
            return norms[:, None] * Q / self.kernel_.ls, None
        W, norms = orthogonal_gaussian_rows(m, d, rng)
        self.row_scales_ = norms.astype(self._dtype)
        return W / self.kernel_.ls, None


class _StructuredMap(GaussianOnlyMap):
    """A map whose directions are never stored as a dense W (sorf, fastfood, circulant): its
    ``_draw`` sets ``max_row_norm_``, the largest |w|; sparse input is densified one chunk
    of rows at a time."""

    tags = {"sparse_input": False}

    def projection_bound(self, X):
        """|w.x| <= max_i |w_i| ||x||_2 (Cauchy-Schwarz), O(n d)."""
        norms = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
        return norms * self.max_row_norm_


class _FWHTMap(_StructuredMap):
    """Shared part of sorf and fastfood: padding, memory check, the projection.

    Parameters are kept in the input's dtype (attributes) and passed to numba in
    float64; sparse input is densified one chunk of rows at a time."""

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        L = next_pow2(d)
        m = cls.n_freq_for(n_components, **params)
        rows = max(1, (1 << 22) // n_components)
        return 8.0 * (L * 8 + L * max(1, -(-m // L)) * 4 + min(rows, max(n_rows, 1)) * L) \
            + float(n_rows) * n_components * itemsize

    def _blocks(self, d, m):
        L = next_pow2(d)
        rows = self.chunk_rows or max(1, (1 << 22) // self.n_components)
        need = 8 * (L * 8 + L * max(1, -(-m // L)) * 4)  # per-thread scratch + parameters
        memory.require(need + 8 * rows * L, "dataset.d", d,
                       f"features={self.name} (kernel={self.kernel_.name}) pads d to {L}")
        return L, -(-m // L)


class StructuredOrthogonalRandomFeatures(_FWHTMap):
    """Structured orthogonal random features (Yu et al. 2016): (sqrt(L)/l) H D1 H D2 H D3 per
    block of L frequencies, O(D log d).

    Attributes: ``signs_`` (3, B, L)."""

    name = "sorf"
    tags = {"bias": ("its frequencies are only approximately Gaussian; the bias shrinks as the "
                     "padded dimension L grows (measured ~0.18 at L = 4, 0.04 at 16, 0.01 at "
                     "64)")}

    def _draw(self, d, m, rng):
        L, B = self._blocks(d, m)
        self.signs_ = rng.choice(np.array([-1.0, 1.0]), size=(3, B, L)).astype(self._dtype)
        self.padded_dim_ = L
        # H normalised = H / sqrt(L), three of them: sqrt(L) / l * L^{-3/2}
        self._scale = 1.0 / (self.kernel_.ls * L)
        self.max_row_norm_ = math.sqrt(L) / self.kernel_.ls  # rows are orthogonal, norm sqrt(L)/l
        return None, None

    def _project(self, X, out, m):
        S = self._as("signs_", np.float64)
        nbk.sorf_project(X, S[0], S[1], S[2], self._scale, out, m)


class Fastfood(_FWHTMap):
    """Fastfood (Le, Sarlos & Smola 2013): S H G Pi H B / (l sqrt(L)) per block, O(D log d).

    Attributes: ``sign_``,
    ``perm_``, ``gauss_``, ``chi_scale_``, each (B, L))."""

    name = "fastfood"

    def _draw(self, d, m, rng):
        L, B = self._blocks(d, m)
        self.sign_ = rng.choice(np.array([-1.0, 1.0]), size=(B, L)).astype(self._dtype)
        self.perm_ = np.argsort(rng.random((B, L)), axis=1).astype(np.int64)
        gauss = rng.standard_normal((B, L))
        s = np.sqrt(rng.chisquare(L, size=(B, L)))
        self.gauss_ = gauss.astype(self._dtype)
        self.chi_scale_ = (s / np.linalg.norm(gauss, axis=1, keepdims=True)).astype(self._dtype)
        self.padded_dim_ = L
        self._scale = 1.0 / (self.kernel_.ls * math.sqrt(L))
        self.max_row_norm_ = float(s.max()) / self.kernel_.ls  # row i has norm s_i / l
        return None, None

    def _project(self, X, out, m):
        f64 = np.float64
        nbk.fastfood_project(X, self._as("sign_", f64), self.perm_, self._as("gauss_", f64),
                             self._as("chi_scale_", f64), self._scale, out, m)


class SignedCirculant(_StructuredMap):
    """Signed circulant random features (Feng, Hu & Liao 2015): per block of d frequencies
    the rows of (1/l) diag(s) circ(g), projected by FFTs.

    Attributes: ``spectra_`` (B, d // 2 + 1) complex, the FFTs of the g's; ``signs_`` (B, d)."""

    name = "circulant"

    @classmethod
    def memory_bytes(cls, n_rows, d, n_components, itemsize=8, train_rows=0, **params):
        """Per block the spectrum (d complex values) and, per chunk of rows, the inputs' and
        products' spectra (about 3 d complex values a row), and the output."""
        m = cls.n_freq_for(n_components, **params)
        B = -(-m // max(d, 1))
        rows = max(1, (1 << 22) // n_components)
        return 16.0 * (B * d + 3 * min(rows, max(n_rows, 1)) * d) \
            + float(n_rows) * n_components * itemsize

    def _draw(self, d, m, rng):
        B = -(-m // d)
        g = rng.standard_normal((B, d))
        self.spectra_ = np.fft.rfft(g, axis=1)
        self.signs_ = rng.choice(np.array([-1.0, 1.0]), size=(B, d)).astype(self._dtype)
        self.max_row_norm_ = float(np.linalg.norm(g, axis=1).max()) / self.kernel_.ls
        return None, None

    def _project(self, X, out, m):
        n, d = X.shape
        workers = numba.get_num_threads()
        Xf = scipy.fft.rfft(np.asarray(X, dtype=np.float64), axis=1, workers=workers)
        s = self._as("signs_", np.float64) / self.kernel_.ls
        for b in range(self.spectra_.shape[0]):
            width = min(d, m - b * d)
            conv = scipy.fft.irfft(Xf * self.spectra_[b], n=d, axis=1, workers=workers)
            out[:, b * d:b * d + width] = conv[:, :width] * s[b, :width]


#: the maps this module registers (rffbench.features collects them)
MAPS = (OrthogonalRandomFeatures, StructuredOrthogonalRandomFeatures, Fastfood, SignedCirculant)
