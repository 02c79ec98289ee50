"""tests/cuda run where CUDA kernels can: on a GPU, or on numba's CUDA simulator
(NUMBA_ENABLE_CUDASIM=1 before numba is imported: tests/test_cuda.py runs this folder so in
a process of its own).  Elsewhere the folder is not collected (test_cuda.py says why)."""
from rffbench.cuda import unavailable

collect_ignore_glob = ["test_*.py"] if unavailable() else []
