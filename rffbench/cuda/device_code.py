"""The code that runs on the GPU: the CUDA kernels (numba-cuda) and their launchers.

Each launcher takes host (numpy) or device arrays (anything with
``__cuda_array_interface__``: numba's device arrays, CuPy's); it returns what it was given:
host arrays in, host arrays out (copied to the device and back), device arrays in, the
result left on the device.  Arithmetic is in the inputs' dtype for the elementwise passes
and float64 for the transforms' and the kernel product's sums.

* :func:`cos_offset_scale`  Z <- s cos(Z + b)                 (rff: after Z = X W^T)
* :func:`sincos_pairs`      [s cos P, s sin P]                (rff_pairs)
* :func:`activation`        Z <- s step(Z), s relu(Z), s Z    (arc-cosine, linear)
* :func:`positive`          Z <- s exp(Z - shift_i)           (positive random features)
* :func:`sorf_project`      (H D1 H D2 H D3 x) per block, the Walsh-Hadamard transform in
                            shared memory, one thread block per (row, block)
* :func:`fastfood_project`  S H G Pi H B x per block, likewise
* :func:`kernel_matvec`     K(X, Y) V for the Gaussian family by rows, Y in shared-memory
                            tiles, no n x m matrix
* :func:`kernel_gram`       K(X, Y) itself (n x m), one thread per entry: the approximation
                            measurement's exact Gram and the preconditioner's columns

The maps draw their parameters on the host (:mod:`rffbench.features`): the same W, b and
signs for one random_state whatever the device.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64

# the activation codes of the CPU maps (ACT_IDENTITY re-exported for activation's callers)
from .._numba import ACT_IDENTITY, ACT_RELU, ACT_STEP  # noqa: F401
from . import EXP_L1, EXP_L2, SQ_EXP  # noqa: F401  (kernel_matvec's profiles)

#: the largest padded dimension of the shared-memory Walsh-Hadamard transform (one thread
#: per coordinate, one block per row)
MAX_L = 1024
#: threads per block of the 2-d elementwise grids (TILE x TILE) and of the kernel product
TILE = 16
ROWS_PER_BLOCK = 128
#: kernel_matvec's shared tile of Y: rows x coordinates (8 KiB of float64)
TILE_J, TILE_K = 32, 32


@cuda.jit
def _cos_offset_scale(Z, b, scale):
    i, j = cuda.grid(2)
    if i < Z.shape[0] and j < Z.shape[1]:
        Z[i, j] = scale * math.cos(Z[i, j] + b[j])


@cuda.jit
def _sincos_pairs(P, scale, out):
    i, j = cuda.grid(2)
    m = P.shape[1]
    if i < P.shape[0] and j < m:
        v = P[i, j]
        out[i, j] = scale * math.cos(v)
        out[i, m + j] = scale * math.sin(v)


@cuda.jit
def _activation(Z, code, scale, zero_below, tol):
    i, j = cuda.grid(2)
    if i < Z.shape[0] and j < Z.shape[1]:
        v = Z[i, j]
        if code == ACT_STEP:
            lim = zero_below[i] if tol else 0.0
            Z[i, j] = 0.5 * scale if abs(v) <= lim else (scale if v > 0 else 0.0)
        elif code == ACT_RELU:
            Z[i, j] = scale * v if v > 0 else 0.0
        else:
            Z[i, j] = scale * v


@cuda.jit
def _positive(Z, shift, scale):
    i, j = cuda.grid(2)
    if i < Z.shape[0] and j < Z.shape[1]:
        Z[i, j] = scale * math.exp(Z[i, j] - shift[i])


@cuda.jit(device=True)
def _fwht_shared(v, L, t):
    """In-place unnormalised Walsh-Hadamard transform of v[:L] in shared memory, thread t
    of L (the first L / 2 threads do one butterfly per stage)."""
    h = 1
    while h < L:
        if t < L // 2:
            i = (t // h) * 2 * h + t % h
            a = v[i]
            c = v[i + h]
            v[i] = a + c
            v[i + h] = a - c
        cuda.syncthreads()
        h *= 2


@cuda.jit
def _sorf(X, D1, D2, D3, scale, out):
    i = cuda.blockIdx.x
    b = cuda.blockIdx.y
    t = cuda.threadIdx.x
    L = D1.shape[1]
    d = X.shape[1]
    v = cuda.shared.array(MAX_L, float64)
    if t < L:
        v[t] = X[i, t] * D3[b, t] if t < d else 0.0
    cuda.syncthreads()
    _fwht_shared(v, L, t)
    if t < L:
        v[t] *= D2[b, t]
    cuda.syncthreads()
    _fwht_shared(v, L, t)
    if t < L:
        v[t] *= D1[b, t]
    cuda.syncthreads()
    _fwht_shared(v, L, t)
    col = b * L + t
    if t < L and col < out.shape[1]:
        out[i, col] = scale * v[t]


@cuda.jit
def _fastfood(X, Bsign, Perm, G, S, scale, out):
    i = cuda.blockIdx.x
    b = cuda.blockIdx.y
    t = cuda.threadIdx.x
    L = G.shape[1]
    d = X.shape[1]
    v = cuda.shared.array(MAX_L, float64)
    w = cuda.shared.array(MAX_L, float64)
    if t < L:
        v[t] = X[i, t] * Bsign[b, t] if t < d else 0.0
    cuda.syncthreads()
    _fwht_shared(v, L, t)
    if t < L:
        w[t] = v[Perm[b, t]] * G[b, t]
    cuda.syncthreads()
    _fwht_shared(w, L, t)
    col = b * L + t
    if t < L and col < out.shape[1]:
        out[i, col] = scale * S[b, t] * w[t]


@cuda.jit(device=True)
def _kernel_value(s, profile, a):
    """k from the summed distance s: exp(-a s), exp(-a sqrt(s)) (EXP_L2)."""
    return math.exp(-a * (math.sqrt(s) if profile == EXP_L2 else s))


@cuda.jit
def _kernel_matvec(X, Y, V, profile, a, out):
    """One thread per row i of X; the block walks Y in tiles of TILE_J rows x TILE_K
    coordinates that its threads load together into shared memory, so each Y value is read
    from global memory once per block, not once per thread; each thread keeps its row's
    coordinates of the tile and the tile's TILE_J partial distances in registers."""
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    i = cuda.blockIdx.x * nt + t
    n, d = X.shape
    m = Y.shape[0]
    tile = cuda.shared.array((TILE_J, TILE_K), float64)
    s = cuda.local.array(TILE_J, float64)
    xs = cuda.local.array(TILE_K, float64)
    if i < n:
        for c in range(V.shape[1]):
            out[i, c] = 0.0
    for j0 in range(0, m, TILE_J):
        for jj in range(TILE_J):
            s[jj] = 0.0
        for k0 in range(0, d, TILE_K):
            for q in range(t, TILE_J * TILE_K, nt):  # the block loads the tile together
                jj, kk = q // TILE_K, q % TILE_K
                tile[jj, kk] = float64(Y[j0 + jj, k0 + kk]) \
                    if j0 + jj < m and k0 + kk < d else 0.0
            cuda.syncthreads()
            if i < n:
                kn = min(TILE_K, d - k0)
                for kk in range(kn):
                    xs[kk] = float64(X[i, k0 + kk])
                for jj in range(TILE_J):
                    acc = 0.0
                    for kk in range(kn):
                        u = xs[kk] - tile[jj, kk]
                        acc += abs(u) if profile == EXP_L1 else u * u
                    s[jj] += acc
            cuda.syncthreads()
        if i < n:
            for jj in range(min(TILE_J, m - j0)):
                kv = _kernel_value(s[jj], profile, a)
                for c in range(V.shape[1]):
                    out[i, c] += kv * V[j0 + jj, c]


@cuda.jit
def _kernel_gram(X, Y, profile, a, out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = 0.0
        for k in range(X.shape[1]):
            u = float64(X[i, k]) - float64(Y[j, k])
            acc += abs(u) if profile == EXP_L1 else u * u
        out[i, j] = _kernel_value(acc, profile, a)


# --------------------------------------------------------------------------
# launchers
# --------------------------------------------------------------------------
def on_device(a):
    """Whether ``a`` is a device array (``__cuda_array_interface__``; the simulator's
    arrays are its own kind)."""
    if isinstance(a, np.ndarray):
        return False
    return hasattr(a, "__cuda_array_interface__") or hasattr(a, "copy_to_host")


def to_device(a):
    """``a`` on the device (C-contiguous; a device array as it is)."""
    return a if on_device(a) else cuda.to_device(np.ascontiguousarray(a))



def to_host(a, out=None):
    """A device array (numba's or CuPy's) as a numpy array (into ``out``, C-contiguous, if
    given), once the work that writes it is done."""
    if hasattr(a, "copy_to_host"):
        return a.copy_to_host(out) if out is not None else a.copy_to_host()
    return a.get(out=out)


def _grid2(n, m):
    # a small output gets a small block (one spare thread a side, so the bounds guard runs):
    # on a GPU the same work; on numba's CUDA simulator, where each thread of a block is a
    # Python thread, a 7 x 6 output starts 8 x 7 threads, not 16 x 16
    bx, by = min(TILE, n + 1), min(TILE, m + 1)
    return (max(1, -(-n // bx)), max(1, -(-m // by))), (bx, by)


def _finish(result, host):
    return result.copy_to_host() if host else result


def cos_offset_scale(Z, b, scale):
    """s cos(Z + b) (Z: n x m, b: m), in place on a device Z."""
    host = not on_device(Z)
    dZ = to_device(Z)
    grid, block = _grid2(*dZ.shape)
    _cos_offset_scale[grid, block](dZ, to_device(np.asarray(b, dtype=dZ.dtype)) if not on_device(b)
                                   else b, dZ.dtype.type(scale))
    return _finish(dZ, host)


def sincos_pairs(P, scale):
    """[s cos P, s sin P] (n x 2m) of P (n x m)."""
    host = not on_device(P)
    dP = to_device(P)
    n, m = dP.shape
    out = cuda.device_array((n, 2 * m), dtype=dP.dtype)
    grid, block = _grid2(n, m)
    _sincos_pairs[grid, block](dP, dP.dtype.type(scale), out)
    return _finish(out, host)


def activation(Z, code, scale, zero_below=None):
    """s step(Z) / s relu(Z) / s Z by ``code`` (step(0) = 1/2; |Z[i, j]| <= zero_below[i]
    counts as 0), in place on a device Z."""
    host = not on_device(Z)
    dZ = to_device(Z)
    tol = zero_below is not None and len(zero_below) > 0
    zb = to_device(np.asarray(zero_below if tol else np.zeros(1), dtype=np.float64))
    grid, block = _grid2(*dZ.shape)
    _activation[grid, block](dZ, int(code), dZ.dtype.type(scale), zb, tol)
    return _finish(dZ, host)


def positive(Z, shift, scale):
    """s exp(Z - shift_i), in place on a device Z."""
    host = not on_device(Z)
    dZ = to_device(Z)
    grid, block = _grid2(*dZ.shape)
    _positive[grid, block](dZ, to_device(np.asarray(shift, dtype=dZ.dtype)), dZ.dtype.type(scale))
    return _finish(dZ, host)


def _check_L(L):
    if L > MAX_L or L & (L - 1):
        raise ValueError(f"the shared-memory Walsh-Hadamard transform takes a power of two "
                         f"up to {MAX_L}, not L = {L}")


def sorf_project(X, D1, D2, D3, scale, m):
    """(n x m) scale (H D1[b] H D2[b] H D3[b] x)[k] at column b L + k (x zero-padded to L,
    H unnormalised), as rffbench._numba.sorf_project."""
    host = not on_device(X)
    dX = to_device(X)
    B, L = D1.shape
    _check_L(L)
    out = cuda.device_array((dX.shape[0], m), dtype=dX.dtype)
    if dX.shape[0]:
        _sorf[(dX.shape[0], B), L](dX, to_device(D1), to_device(D2), to_device(D3),
                                   float(scale), out)
    return _finish(out, host)


def fastfood_project(X, Bsign, Perm, G, S, scale, m):
    """(n x m) scale S[b, k] (H G[b] Pi[b] H B[b] x)[k] at column b L + k, with
    (Pi v)[k] = v[Perm[b, k]], as rffbench._numba.fastfood_project."""
    host = not on_device(X)
    dX = to_device(X)
    B, L = G.shape
    _check_L(L)
    out = cuda.device_array((dX.shape[0], m), dtype=dX.dtype)
    if dX.shape[0]:
        _fastfood[(dX.shape[0], B), L](dX, to_device(Bsign), to_device(np.asarray(Perm, np.int64)),
                                       to_device(G), to_device(S), float(scale), out)
    return _finish(out, host)


def kernel_matvec(X, Y, V, profile, a):
    """K(X, Y) V (n x c, float64) for k = exp(-a s) with s = |x - y|^2 (SQ_EXP), |x - y|
    (EXP_L2) or |x - y|_1 (EXP_L1), one thread per row of X, Y in shared-memory tiles of
    TILE_J x TILE_K: no n x m matrix."""
    host = not on_device(X)
    dX, dY = to_device(X), to_device(Y)
    V = np.asarray(V, dtype=np.float64) if not on_device(V) else V
    dV = to_device(V.reshape(-1, 1) if not on_device(V) and V.ndim == 1 else V)
    out = cuda.device_array((dX.shape[0], dV.shape[1]), dtype=np.float64)
    if dX.shape[0]:
        threads = min(ROWS_PER_BLOCK, dX.shape[0])  # small n: a small block (the simulator)
        grid = -(-dX.shape[0] // threads)
        _kernel_matvec[grid, threads](dX, dY, dV, int(profile), float(a), out)
    return _finish(out, host)


def kernel_gram(X, Y, profile, a):
    """K(X, Y) (n x m, float64) for the profiles of :func:`kernel_matvec`, one thread per
    entry (the n x m matrix is the result: the caller asked for it)."""
    host = not on_device(X)
    dX, dY = to_device(X), to_device(Y)
    out = cuda.device_array((dX.shape[0], dY.shape[0]), dtype=np.float64)
    if dX.shape[0] and dY.shape[0]:
        grid, block = _grid2(dX.shape[0], dY.shape[0])
        _kernel_gram[grid, block](dX, dY, int(profile), float(a), out)
    return _finish(out, host)
