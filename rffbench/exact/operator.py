"""Kernel products without the n x n matrix: ``KernelOperator`` (V -> K V on the training
rows: fused tiles, sorted coordinates or explicit features) and ``kernel_times`` /
``prepared_times`` (K(X, F) A for predictions), tile by tile through the compiled products
of :mod:`rffbench.exact.tiles`."""
from __future__ import annotations

import numpy as np

from ..checks import OneOf, check_constraints
from ..errors import ConfigError
from .tiles import TiledRows, product_route, route_precision, tiled_gram, tiled_times

#: model.exact_precision: the kernel products' tiles in float64, or in float32 with
#: float64 accumulation and cg recurrences (mixed, as FALKON)
PRECISIONS = ("float64", "mixed")
#: model.exact_precision's constraint (the config, ExactKRR and KernelOperator)
PRECISION = OneOf(PRECISIONS)


#: rows x columns of one block of K(test, train) in predict (16 MiB float64)
PREDICT_BLOCK_ROWS = 512
PREDICT_BLOCK_COLS = 4096


def kernel_times(kernel, X, X_fit, A, device="cpu"):
    """K(X, X_fit) A, tile by tile into one reused buffer (memory: one tile of
    PREDICT_BLOCK_ROWS x PREDICT_BLOCK_COLS, never the n x n_fit matrix); ``device="cuda"``:
    by the GPU's tiled product (:func:`cuda_profile`)."""
    if not X.shape[0] or not X_fit.shape[0]:
        return np.zeros((X.shape[0], A.shape[1]))
    if device == "cuda":
        from ..cuda import device_code as ck
        profile, a = cuda_profile(kernel)
        return ck.kernel_matvec(kernel.inputs(X, dtype=np.float64),
                                kernel.inputs(X_fit, "X_fit", np.float64), A, profile, a)
    Xp = kernel.inputs(X)
    return prepared_times(kernel, Xp, kernel.inputs(X_fit, "X_fit", Xp.dtype), A)


#: kernel evaluations from which a product K(X, F) A takes the fused tile product
#: (:func:`tiled_times`, compiled for it: about 1.5 s on a fresh install); below, the
#: blocks of the kernel's own Gram code, which fitting has compiled already, are as fast
#: (a prediction of the default run: 449 x 1348)
FUSED_MIN_EVALS = 1 << 24


def fused_product(n_rows, n_fit):
    """Whether K(X, F) A with ``n_rows`` x ``n_fit`` kernel evaluations takes the fused
    tile product (what a warm-up on a few rows must compile for the full-size call)."""
    return n_rows * n_fit >= FUSED_MIN_EVALS


def prepared_times(kernel, X, F, A, fused=None):
    """K(X, F) A for rows already prepared by ``kernel.inputs`` (same dtype): the fused
    numba product (:func:`tiled_times`) when the kernel has a tile spec and the product
    has FUSED_MIN_EVALS kernel evaluations or more (``fused``: True / False to choose),
    else tiles of PREDICT_BLOCK_ROWS x PREDICT_BLOCK_COLS through one reused buffer."""
    spec = kernel.tile_spec()
    if fused is None:
        fused = fused_product(X.shape[0], F.shape[0])
    if spec is not None and fused:
        return tiled_times(spec, TiledRows(spec, X), TiledRows(spec, F), A)
    out = np.zeros((X.shape[0], A.shape[1]))
    buf = np.empty(min(PREDICT_BLOCK_ROWS, X.shape[0]) * min(PREDICT_BLOCK_COLS, F.shape[0]),
                   dtype=X.dtype)
    for i0 in range(0, X.shape[0], PREDICT_BLOCK_ROWS):
        i1 = min(i0 + PREDICT_BLOCK_ROWS, X.shape[0])
        for j0 in range(0, F.shape[0], PREDICT_BLOCK_COLS):
            j1 = min(j0 + PREDICT_BLOCK_COLS, F.shape[0])
            Kb = buf[:(i1 - i0) * (j1 - j0)].reshape(i1 - i0, j1 - j0)
            kernel._gram_into(X[i0:i1], F[j0:j1], Kb)
            out[i0:i1] += Kb @ A[j0:j1]
    return out


#: rows (and columns) of one tile of K in the kernel-matrix products; a tile is
#: TILE x TILE float64 (2 MiB: it stays in cache for its two GEMMs), reused for every
#: tile (512 was fastest of 256..4096 on 2 cores, n = 20000, d = 16)
TILE = 512


#: a kernel with an explicit feature map of M features (linear, polynomial: its
#: ``feature_dimension``) takes its products as phi (phi^T V) when n >= FEATURE_ROWS M (the
#: product then costs 4 n M flops per column against the tiles' n^2 / 2 pairs) and
#: M <= FEATURES_PER_COORD (d + 1) (phi holds at most that many times the rows' memory:
#: the polynomial kernel of degree 2 up to d = 30, of degree 3 up to d = 7)
FEATURE_ROWS = 8
FEATURES_PER_COORD = 16


def explicit_feature_count(kernel, n, d):
    """M when :class:`KernelOperator` takes ``kernel``'s products on n rows of d coordinates
    through its explicit features (FEATURE_ROWS), else None."""
    M = kernel.feature_dimension(d)
    return M if M is not None and FEATURE_ROWS * M <= n and \
        M <= FEATURES_PER_COORD * (d + 1) else None


def _gpu_profile(kernel):
    """(profile, a) of ``kernel``'s exact products on the GPU (rffbench.cuda.device_code: exp(-a
    s) of the squared or L1 distance, or of the distance), or None: the Gaussian, Laplacian
    and Matern 1/2 kernels have one."""
    from .. import _numba as nbk
    from .. import cuda

    spec = kernel.tile_spec() if hasattr(kernel, "tile_spec") else None
    if spec is None:
        return None
    if spec.tile == nbk.TILE_SQDIST and spec.profile == nbk.PROFILE_EXP:
        return cuda.SQ_EXP, spec.a
    if spec.tile == nbk.TILE_COORD and spec.kind == nbk.L1DIST \
            and spec.profile == nbk.PROFILE_EXP:
        return cuda.EXP_L1, spec.a
    if spec.tile == nbk.TILE_COORD and spec.kind == nbk.SQDIST \
            and spec.profile == nbk.PROFILE_EXP_SQRT:
        return cuda.EXP_L2, spec.a
    return None


def cuda_profile(kernel, key="kernel"):
    """(profile, a) of ``kernel``'s exact products on the GPU (:func:`_gpu_profile`);
    ConfigError naming ``key`` for a kernel without one."""
    found = _gpu_profile(kernel)
    if found is None:
        raise ConfigError(f"{key}={kernel.name} has no exact product on the GPU (device=cuda): "
                          f"kernels with one: {', '.join(CUDA_KERNELS)}")
    return found


def device_gram(kernel, X, Y, device="cpu"):
    """K(X, Y) (float64): with ``device="cuda"`` and a kernel of :func:`cuda_profile` by the
    GPU's Gram kernel, else (any kernel) the kernel's own ``gram`` on the CPU: the values
    do not depend on where, beyond rounding."""
    found = _gpu_profile(kernel) if device == "cuda" else None
    if found is None:
        return kernel.gram(X, Y)
    from ..cuda import device_code as ck

    return ck.kernel_gram(kernel.inputs(X, dtype=np.float64),
                          kernel.inputs(Y, "Y", np.float64), *found)


#: the kernels (and parameters) whose exact products :func:`cuda_profile` takes to the GPU
CUDA_KERNELS = ("gaussian", "laplacian", "matern with nu=0.5")


class DeviceKernelOperator:
    """:class:`KernelOperator`'s contract on the GPU (``device="cuda"``): the training rows
    copied to the device once; V -> K V by the tiled CUDA product
    (:func:`rffbench.cuda.device_code.kernel_matvec`: Y in shared-memory tiles, no n x n
    matrix), ``columns(idx)`` by its Gram kernel, float64 throughout whatever
    ``precision``."""

    route = "cuda tiles"
    precision_used = "float64"
    n_features = None

    def __init__(self, kernel, X, precision="float64"):
        from ..cuda import device_code as ck

        check_constraints(dict(exact_precision=precision), "model",
                          {"exact_precision": PRECISION})
        self.kernel, self.precision = kernel, precision
        self.profile, self.a = cuda_profile(kernel)
        self.Xw = kernel.inputs(X, dtype=np.float64)
        self.n = self.Xw.shape[0]
        self.products = 0
        self._ck = ck
        self._dX = ck.to_device(self.Xw)

    def matvec(self, V):
        """K V for V of shape (n, c), on the device, returned to the host."""
        self.products += 1
        return self._ck.to_host(self._ck.kernel_matvec(self._dX, self._dX, V, self.profile,
                                                       self.a))

    def diagonal(self):
        """k(x_i, x_i) = 1 for every kernel of :func:`cuda_profile`."""
        return np.ones(self.n)

    def columns(self, idx):
        """K[:, idx] (n x len(idx)) from the device's Gram kernel."""
        Y = np.ascontiguousarray(self.Xw[idx])
        return self._ck.to_host(self._ck.kernel_gram(self._dX, Y, self.profile, self.a))


class KernelOperator:
    """V -> K V for the training Gram K = k(X, X), computed tile by tile, never stored.

    Each tile K[I, J] (I <= J) is computed once and used twice: out[I] += K[I, J] V[J]
    and out[J] += K[I, J]^T V[I].  So a product costs n^2 / 2 kernel evaluations (plus
    the diagonal tiles' other half) and 2 n^2 c flops of GEMM, in memory n d plus a tile
    and an n x c output per chunk.  With a kernel's tile spec (every built-in kernel) this
    is the fused numba product (:func:`tiled_times`: each thread's tile stays in its
    cache; ``precision="mixed"``: float32 tiles, float64 sums); ``fused=False`` or a
    kernel with only ``_gram_into`` (a plug-in): TILE x TILE tiles from Python through
    the kernel's Gram and two numpy GEMVs.  ``columns(idx)`` gives K[:, idx] (n x m),
    from the same tiles.  A kernel with a small explicit feature map (FEATURE_ROWS:
    the linear kernel, low-degree polynomials in few dimensions) takes its products,
    columns and diagonal through it instead (``n_features`` is then its size, else
    None): phi (phi^T V) in float64, whatever ``precision``, equal to the tiles' product
    to rounding, and no pair is evaluated.  The intersection kernel's products go through
    its sorted coordinates (:func:`rffbench.exact.tiles.sorted_minima_times`, float64 whatever
    ``precision``), also without evaluating a pair.  ``route`` names the way: "explicit
    features", "sorted coordinates", "tiles" (fused) or "python tiles";
    ``precision_used`` the precision the products are made in ("mixed" on the fused tiles
    only: every other route is float64 whatever ``precision`` asks)."""

    def __init__(self, kernel, X, tile=TILE, precision="float64", fused=True):
        check_constraints(dict(exact_precision=precision), "model",
                          {"exact_precision": PRECISION})
        self.kernel = kernel
        self.Xw = kernel.inputs(X, dtype=np.float64)
        self.n = self.Xw.shape[0]
        self.tile = int(tile)
        self.precision = precision
        self.products = 0
        self._buf = np.empty(min(self.tile, self.n) ** 2)  # the Python tiles (and diagonal)
        self.n_features = explicit_feature_count(kernel, self.n, self.Xw.shape[1]) \
            if fused else None
        self.phi = None if self.n_features is None else kernel.explicit_features(self.Xw)
        self.spec = kernel.tile_spec() if fused else None
        if self.spec is None:  # a kernel with only _gram_into: tiles from Python
            return
        self.rows = TiledRows(self.spec, self.Xw)
        self.tile_rows = self.rows if precision == "float64" or self.spec.sorted_minima \
            else TiledRows(self.spec, self.Xw.astype(np.float32))

    @property
    def route(self):
        return "explicit features" if self.phi is not None else product_route(self.spec)

    @property
    def precision_used(self):
        return route_precision(self.route, self.precision)

    def _block(self, i0, i1, j0, j1):
        out = self._buf[:(i1 - i0) * (j1 - j0)].reshape(i1 - i0, j1 - j0)
        self.kernel._gram_into(self.Xw[i0:i1], self.Xw[j0:j1], out)
        return out

    def matvec(self, V):
        """K V for V of shape (n, c)."""
        if self.phi is not None:
            self.products += 1
            return self.phi @ (self.phi.T @ np.asarray(V, dtype=np.float64))
        if self.spec is not None:
            self.products += 1
            return tiled_times(self.spec, self.tile_rows, self.tile_rows, V, symmetric=True)
        V = np.ascontiguousarray(V, dtype=np.float64)
        out = np.zeros_like(V)
        n, T = self.n, self.tile
        for i0 in range(0, n, T):
            i1 = min(i0 + T, n)
            for j0 in range(i0, n, T):
                j1 = min(j0 + T, n)
                Kt = self._block(i0, i1, j0, j1)
                out[i0:i1] += Kt @ V[j0:j1]
                if j0 != i0:
                    out[j0:j1] += Kt.T @ V[i0:i1]
        self.products += 1
        return out

    def diagonal(self):
        """The diagonal k(x_i, x_i) of K, from the diagonal tiles (n T evaluations)."""
        if self.phi is not None:
            return np.einsum("ij,ij->i", self.phi, self.phi)
        out = np.empty(self.n)
        for i0 in range(0, self.n, self.tile):
            i1 = min(i0 + self.tile, self.n)
            out[i0:i1] = np.diagonal(self._block(i0, i1, i0, i1))
        return out

    def columns(self, idx):
        """K[:, idx] (n x len(idx)), computed in row tiles (float64)."""
        if self.phi is not None:
            return self.phi @ self.phi[idx].T
        Y = np.ascontiguousarray(self.Xw[idx])
        if self.spec is not None:
            return tiled_gram(self.spec, self.rows, TiledRows(self.spec, Y))
        out = np.empty((self.n, len(idx)))
        for i0 in range(0, self.n, self.tile):
            i1 = min(i0 + self.tile, self.n)
            self.kernel._gram_into(self.Xw[i0:i1], Y, out[i0:i1])
        return out
