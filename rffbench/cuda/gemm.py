"""The one function through which the CUDA path's GEMMs go: cuBLAS through CuPy on a GPU,
numpy where the kernels run on numba's CUDA simulator (which cannot run cuBLAS).  The tests
and the device check call :func:`project` alone, so replacing the GEMM is one place."""
from __future__ import annotations

import numpy as np

from . import simulated


def project(X, Wt):
    """X @ Wt (n x d times d x m) as a device array (numba's or CuPy's), X and Wt host or
    device arrays of one dtype."""
    from numba import cuda

    if simulated():
        host = [a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a)
                for a in (X, Wt)]
        return cuda.to_device(np.ascontiguousarray(host[0] @ host[1]))
    import cupy

    return cupy.matmul(cupy.asarray(X), cupy.asarray(Wt))
