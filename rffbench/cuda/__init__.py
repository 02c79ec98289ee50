"""rffbench on an NVIDIA GPU: the maps' passes and the exact kernel product as numba CUDA
kernels (NVIDIA's ``numba-cuda`` package: ``pip install -e '.[gpu]'``).

Nothing of the CPU path imports this package.  :func:`unavailable` says, in one line, what
is missing for the CUDA path here (the package, or a GPU); :mod:`.kernels` holds the
kernels and their launchers, :mod:`.gemm` the one function through which every GEMM goes
(cuBLAS through CuPy on a GPU; numpy where the kernels run on numba's CUDA simulator),
:mod:`.maps` a fitted map's transform, :mod:`.timing` CUDA events around a call.

The simulator (``NUMBA_ENABLE_CUDASIM=1``, set before numba is imported) runs each CUDA
thread as a Python thread: exact, slow, and what the tests use where there is no GPU
(``tests/cuda/``, run by ``tests/test_cuda.py`` in a process of its own).
"""
from __future__ import annotations

import os

#: the package that provides the CUDA target (numba's own numba.cuda is deprecated)
PACKAGE = "numba-cuda"
#: the CUDA kernel product's profiles (rffbench.cuda.device_code): k = exp(-a |x - y|^2),
#: exp(-a |x - y|), exp(-a |x - y|_1)
SQ_EXP, EXP_L2, EXP_L1 = 0, 1, 2
#: the maps with a CUDA transform (rffbench.cuda.maps.MAPS; named here so that a config
#: check needs no GPU package)
MAPS = ("arccos", "fastfood", "orf", "positive", "positive_orf", "rff", "rff_pairs", "sorf")


def simulated():
    """Whether numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def unavailable():
    """None where CUDA kernels can run here (a GPU, or the simulator), else one line saying
    what is missing."""
    try:
        import numba_cuda  # noqa: F401
        from numba import cuda
    except ImportError:
        return (f"the CUDA path needs NVIDIA's {PACKAGE} package: pip install -e '.[gpu]' "
                "(or pip install numba-cuda)")
    if simulated():
        return None
    try:
        import cupy  # noqa: F401  (cuBLAS: the maps' GEMM, rffbench.cuda.gemm)
    except ImportError:
        return ("the CUDA path's GEMM needs CuPy: pip install -e '.[gpu]' (or pip install "
                "cupy-cuda12x)")
    try:
        if not cuda.is_available():
            return "no CUDA GPU is visible here (numba.cuda.is_available() is false)"
    except Exception as exc:  # a broken driver: its own exception types
        return f"CUDA cannot start here: {type(exc).__name__}: {exc}"
    return None


def require(device="cuda", named=None):
    """ConfigError (one line) unless CUDA kernels can run here: ``<named> cannot run here:
    <what is missing>``, ``named`` as the caller's user wrote the device (default
    ``device='cuda'``, the API's; the command line's is ``device=cuda``).  What a run checks
    at its start and the API before its first device call (on_device, exact KRR's fit)."""
    from ..errors import ConfigError

    reason = unavailable()
    if reason:
        raise ConfigError(f"{named or f'device={device!r}'} cannot run here: {reason}")
