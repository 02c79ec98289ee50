"""A fitted rffbench map's transform on the GPU, from the parameters it drew on the host
(its W, b, signs, permutations): the same numbers as the CPU map up to rounding, whatever
the device.  :func:`transform` returns a device array; the maps it takes are in
:data:`MAPS` (dense input only: sparse rows and warped kernels stay on the CPU)."""
from __future__ import annotations

import math

import numpy as np

from .._numba import ZERO_TOL
from . import device_code as ck
from . import gemm


def _project(fmap, X, dX):
    """The GEMM of a dense-W map: X W^T on the device."""
    return gemm.project(dX, np.ascontiguousarray(fmap.random_weights_, dtype=X.dtype))


def _dense(fmap, X, dX):
    """rff, rff_pairs, orf, arccos (dense W): the GEMM, then the cosine pass or (arc-cosine,
    linear) the activation of the directions, with the map's own zero bound."""
    P = _project(fmap, X, dX)
    kernel = fmap.kernel_
    if kernel.shift_invariant:
        return _trig(fmap, P)
    return ck.activation(P, kernel.activation,
                         math.sqrt(kernel.activation_weight / fmap.n_components),
                         ZERO_TOL * fmap.projection_bound(X))


def _positive(fmap, X, dX):
    """positive, positive_orf: exp(w.x / l - |x|^2 / l^2) / sqrt(D)."""
    return ck.positive(_project(fmap, X, dX), fmap.exp_shift(X),
                       1.0 / math.sqrt(fmap.n_components))


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
    if fmap.name not in MAPS:  # rffbench.cuda.MAPS names the same
        raise ValueError(f"features={fmap.name} has no CUDA transform: use one of "
                         f"{', '.join(sorted(MAPS))}")
    kernel = fmap.kernel_
    if getattr(kernel, "warps", False):
        raise ValueError(f"kernel={kernel.name} warps its inputs: not on the GPU")
    if fmap.name in ("sorf", "fastfood") and not kernel.shift_invariant:
        raise ValueError(f"features={fmap.name} with kernel={kernel.name}: the CUDA "
                         "transform of the structured maps takes shift-invariant kernels")
    X = np.ascontiguousarray(X)
    return MAPS[fmap.name](fmap, X, ck.to_device(X) if dX is None else dX)
