"""Every compiled loop of rffbench, and nothing else (no config, no I/O), by domain:

* :mod:`~rffbench._numba.elementwise`: cosine, sine, exponential and arc-cosine written to
  vectorise (numba has no SVML), and their rows by dtype;
* :mod:`~rffbench._numba.blas`: one BLAS GEMM call for products inside compiled loops;
* :mod:`~rffbench._numba.passes`: the feature maps' passes over their outputs;
* :mod:`~rffbench._numba.gram`: exact Gram matrices and the kernels' row values, compiled
  per kernel (``literally``: only the code a kernel uses);
* :mod:`~rffbench._numba.products`: kernel-times-matrix products and Grams by tiles (each
  tile in one thread's cache), the intersection kernel's through sorted coordinates;
* :mod:`~rffbench._numba.pivots`: the pivoted Cholesky rules' pivots, one round at a time;
* :mod:`~rffbench._numba.reductions`: maxima and sums of the approximation errors;
* :mod:`~rffbench._numba.hadamard`: the structured maps' fast Walsh-Hadamard transforms;
* :mod:`~rffbench._numba.binning`: random binning's hashes, the intersection kernel's unary
  codes.
* :mod:`~rffbench._numba.threads`: the chunks of the per-kernel products and Grams on
  Python threads (their loops compiled once per kernel code, not once more for a parallel
  loop of their own).

Every function is compiled with ``cache=True`` the first time a run needs it, and only
then (a module holds no compiled code until its functions are called); its cached code is
keyed by the contents of every module here (:mod:`~rffbench._numba.cache`), since a
function inlines the helpers it calls from the other modules.  Each public
function has a plain-numpy reference in the test-suite (``tests/_numba/test_<module>.py``) that
it is compared against, and the entry points that call them are compared with numpy over
generated shapes and layouts (``tests/contracts/test_differential.py``).  The names below are what
the rest of rffbench uses
(``from rffbench import _numba as nbk``).
"""
from . import cache  # noqa: F401  (first: the cache's locators, before any function)

# isort: split
import numpy as np

from . import gram as _gram
from .binning import binning_keys, unary_codes, unary_counts
from .blas import blas_single_thread, gemm_each_thread, matmul
from .elementwise import (
    EXP_MIN_ARG,
    FAST_TRIG_MAX,
    FAST_TRIG_MAX_F32,
    FMA,
    fast_acos,
    fast_cos,
    fast_cos_scalar,
    fast_exp,
    fast_exp_f32,
    fast_exp_f32_scalar,
    fast_exp_full,
    fast_exp_full_scalar,
    fast_exp_scalar,
    fast_exp_upper,
    fast_sin,
    fast_sin_scalar,
)
from .gram import (
    CODES,
    KERNEL_TILE,
    MATERN_T_MAX,
    anova_gram,
    coordinate_aux,
    coordinate_gram,
    dot_gemm_rows,
    dot_profile_inplace,
    row_norms,
    sqdist_from_gemm_profile,
    sqdist_gemm_rows,
)
from .hadamard import (
    ROW_BLOCK,
    fastfood_project,
    fwht_columns,
    fwht_tiles_repeat,
    sorf_project,
    srht_project,
)
from .passes import (
    ACT_IDENTITY,
    ACT_RELU,
    ACT_STEP,
    GEMM_BLOCK,
    ZERO_TOL,
    activation_inplace,
    cos_offset_scale_inplace,
    cos_rows_repeat,
    count_sketches,
    elementary_symmetric,
    exp_rows_repeat,
    fill_inplace,
    gemm_cos_offset,
    gemm_sincos,
    group_products,
    positive_features_inplace,
    scale_columns_inplace,
    scale_inplace,
    sincos_pairs_inplace,
)
from .pivots import pivot_round
from .products import (
    kernel_gram_tiles,
    kernel_times,
    mirror_diagonal,
    mirror_tile,
    mirror_upper,
    sorted_minima_times,
)
from .reductions import abs_max_sum_sq, max_abs_diff_upper


def as_compiled_input(A):
    """``A`` as the compiled loops take an input array: C-contiguous and writeable (a copy
    where it is not).  numba compiles a function once per argument type, and the
    read-only flag is part of an array's type: a read-only input (a ``setflags(write=
    False)`` array, a read-only memory map, a broadcast row) compiled every function it
    reached a second time, on every clean install (a quarter of the test-suite's cold
    compile time).  The entry points from user data (a kernel's rows, a map's input)
    pass their arrays through here: one compiled version per dtype."""
    A = np.ascontiguousarray(A)
    return A if A.flags.writeable else A.copy()


#: every code of the Gram loops (tiles, coordinate kinds, profiles) by its name in gram.py
globals().update({name: getattr(_gram, name) for name in CODES})

#: what the rest of rffbench uses: every public name above (the codes included)
__all__ = sorted(name for name in globals() if not name.startswith("_")
                 and name not in ("np", "cache"))
