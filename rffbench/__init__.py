"""rffbench: benchmarking random Fourier features against the exact kernel machine."""
__version__ = "0.1.0"

import os as _os
import sys as _sys

#: Thread-pool settings measured to help on small machines (docs/performance.md):
#: OpenBLAS workers and numba's OpenMP workers otherwise spin-wait after their
#: work and steal the cores from each other; on 2 cores a chunked GEMM + numba
#: pass ran 3.4 s instead of 0.19 s.  Defaults only: the user's values win.  They
#: take effect only if set before numpy (OpenBLAS) is first imported, which
#: run.py and the test-suite ensure.
_RUNTIME_DEFAULTS = {"OPENBLAS_THREAD_TIMEOUT": "1", "OMP_WAIT_POLICY": "passive"}
_NUMPY_WAS_LOADED = "numpy" in _sys.modules
for _k, _v in _RUNTIME_DEFAULTS.items():
    _os.environ.setdefault(_k, _v)


def runtime_env():
    """The thread-pool settings in force, as a record string, with numba's threading layer
    once a parallel function has run (``numba_layer=omp``): a process on the workqueue
    layer transformed 5-10x slower than one on OpenMP on a 2-core machine, so a timing is
    read with the layer it ran on (the report lists each distinct value with its runs)."""
    s = ";".join(f"{k}={_os.environ.get(k, '')}" for k in _RUNTIME_DEFAULTS)
    s += ";numpy-loaded-first" if _NUMPY_WAS_LOADED else ""
    numba = _sys.modules.get("numba")
    if numba is not None:
        try:
            s += f";numba_layer={numba.threading_layer()}"
        except ValueError:  # no parallel function has run in this process
            pass
    return s
