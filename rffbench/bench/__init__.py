"""Transform benchmark: rffbench maps vs scikit-learn RBFSampler vs the machine's limit.

    python -m rffbench.bench                       # the two reference shapes
    python -m rffbench.bench --shape 50000,16,2048 --dtype float32 --out bench.csv
    python -m rffbench.bench --maps rff,rff_pairs,sorf,fastfood --shape 10000,1024,8192
    python -m rffbench.bench --startup             # cold / warm `python run.py`
    python -m rffbench.bench --exact 10000,100000  # exact KRR: cg vs Cholesky, time, RSS
    python -m rffbench.bench --stream 10000000     # ridge on a streamed .npy: time, peak RSS
    python -m rffbench.bench --dask                # backend=dask (LocalCluster) vs local
    python -m rffbench.bench --dask 100000,5000    # ... on fewer rows
    python -m rffbench.bench --products 12000,16   # exact kernel products vs their limit
    python -m rffbench.bench --products 12000,16 --save a.csv   # ... later, another commit:
    python -m rffbench.bench --products 12000,16 --compare a.csv  # time ratios new / saved
    python -m rffbench.bench --cuda --out gpu.csv  # the device check (a GPU, '.[gpu]')

The full speed experiment (records, report figures) is ``python run.py -m
experiment=speed``; this script is the quick check.

For each shape (N, d, D), in ``--processes`` worker processes one after the other
(default 3; rffbench.measure.workers: started once, shared by every shape), each
interleaved (A B C A B C ...) after a warm-up call of each, every call's output
released before the next: the transform of every rffbench map in ``--maps`` (Gaussian
kernel; default ``rff`` and ``rff_pairs``),
scikit-learn ``RBFSampler.transform`` (same Gaussian kernel, same D), the *limit*: a
BLAS GEMM of the same shape into a preallocated output plus one streaming pass over
that output (numba ``scale_inplace``), and the first touch of a fresh N x D output
(column ``first_touch_s``: a parallel pass over a new array minus the same pass over a
kept one).  A time is the median
of the processes' medians of ``--repeats`` calls; ``process_medians`` lists them and
``unstable`` says whether they differ by more than 1.3x (the machine decided them:
docs/performance.md, "Timing on a virtual machine").  Ratios are taken within each
process, so they are meaningful on a noisy shared machine where absolute times are not;
a fresh-output map's fraction of the limit is taken on its time less the first touch.

One module per benchmark (``shape``, ``startup``, ``exact``, ``stream``, ``backend`` for
``--dask``, ``products``, ``gpu`` for ``--cuda``), ``compare`` (``--save`` /
``--compare``) and ``cli`` (the flags).
"""
from .backend import dask_bench
from .cli import main
from .compare import compare, read_saved
from .exact import exact_bench, exact_one
from .kernel_products import PRODUCT_KERNELS, products_bench
from .shape import DEFAULT_SHAPES, bench_shape
from .startup import default_runs, startup
from .stream import stream_bench

__all__ = ["DEFAULT_SHAPES", "PRODUCT_KERNELS", "bench_shape", "compare", "dask_bench",
           "default_runs", "exact_bench", "exact_one", "main", "products_bench", "read_saved",
           "startup", "stream_bench"]
