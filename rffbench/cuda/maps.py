"""A fitted rffbench map's transform on the GPU, from the parameters it drew on the host
(its W, b, signs, permutations): the same numbers as the CPU map up to rounding, whatever
the device.  :func:`transform` returns a device array; the maps it takes are in
:data:`MAPS` (dense input only: sparse rows and warped kernels stay on the CPU)."""
from __future__ import annotations

import math

import numpy as np

from . import gemm
from . import kernels as ck

#: |w.x| at most this fraction of its per-row bound counts as 0 for the step (as the CPU
#: maps: rffbench.features.fourier.ZERO_TOL)
ZERO_TOL = 2.0 ** -20


def _dense(fmap, X, dX):
    """rff, rff_pairs, orf (dense W): the GEMM, then the cosine pass or the activation."""
    dtype = X.dtype
    W = np.ascontiguousarray(fmap.random_weights_, dtype=dtype)
    P = gemm.project(dX, W)
    D = fmap.n_components
    kernel = fmap.kernel_
    if not kernel.shift_invariant:  # arc-cosine / linear: the activation of the directions
        bound = np.asarray(np.abs(X) @ np.abs(W).max(axis=1), dtype=np.float64)
        return ck.activation(P, kernel.activation, math.sqrt(kernel.activation_weight / D),
                             ZERO_TOL * bound)
    scale = math.sqrt(2.0 / D)
    if fmap.pairs:
        return ck.sincos_pairs(P, scale)
    return ck.cos_offset_scale(P, np.asarray(fmap.random_offset_, dtype=dtype), scale)


def _positive(fmap, X, dX):
    """positive, positive_orf: exp(w.x / l - |x|^2 / l^2) / sqrt(D)."""
    P = gemm.project(dX, np.ascontiguousarray(fmap.random_weights_, dtype=X.dtype))
    sq = np.einsum("ij,ij->i", X, X, dtype=np.float64) / fmap.kernel_.ls ** 2
    return ck.positive(P, sq, 1.0 / math.sqrt(fmap.n_components))


def _trig(fmap, P):
    scale = math.sqrt(2.0 / fmap.n_components)
    if fmap.pairs:
        return ck.sincos_pairs(P, scale)
    return ck.cos_offset_scale(P, np.asarray(fmap.random_offset_, dtype=P.dtype), scale)


def _sorf(fmap, X, dX):
    S = np.asarray(fmap.signs_, dtype=np.float64)
    return _trig(fmap, ck.sorf_project(dX, S[0], S[1], S[2], fmap._scale, fmap.n_freq_))


def _fastfood(fmap, X, dX):
    f64 = np.float64
    P = ck.fastfood_project(dX, np.asarray(fmap.sign_, f64), fmap.perm_,
                            np.asarray(fmap.gauss_, f64), np.asarray(fmap.chi_scale_, f64),
                            fmap._scale, fmap.n_freq_)
    return _trig(fmap, P)


#: map name -> its device transform (fmap, host X, device X) -> device array
MAPS = {"rff": _dense, "rff_pairs": _dense, "orf": _dense, "arccos": _dense,
        "positive": _positive, "positive_orf": _positive, "sorf": _sorf,
        "fastfood": _fastfood}


def transform(fmap, X, dX=None):
    """The features of the rows X (host, dense) by the fitted ``fmap`` on the GPU, a device
    array; ``dX``: X already on the device (else it is copied)."""
    if fmap.name not in MAPS:
        raise ValueError(f"features={fmap.name} has no CUDA transform: use one of "
                         f"{', '.join(sorted(MAPS))}")
    kernel = fmap.kernel_
    if getattr(kernel, "warps", False):
        raise ValueError(f"kernel={kernel.name} warps its inputs: not on the GPU")
    if fmap.name in ("sorf", "fastfood") and not kernel.shift_invariant:
        raise ValueError(f"features={fmap.name} with kernel={kernel.name}: the CUDA "
                         "transform of the structured maps takes shift-invariant kernels")
    X = np.ascontiguousarray(X)
    return MAPS[fmap.name](fmap, X, ck._dev(X) if dX is None else dX)
