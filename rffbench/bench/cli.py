"""``python -m rffbench.bench``: the command line (flags, the kind of benchmark they ask for,
the memory check before any array) over the benchmark modules."""
from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile

import numba
import pandas as pd

from ..checks import MAX_REPEATS
from ..cli import check_cwd
from ..errors import BenchError, ConfigError, RffbenchError, first_line, os_error_text
from ..exact import default_rank
from ..experiment import apply_threads
from ..features import FEATURE_MAPS
from ..memory import MEMORY_FRACTION, available_bytes, human
from ..peers import PEERS
from ..results import write_atomic
from .backend import dask_bench
from .compare import compare, read_saved
from .exact import EXACT_MIN_N, exact_bench, exact_one
from .gpu import cuda_bench
from .kernel_products import PRODUCT_KERNELS, products_bench
from .shape import DEFAULT_SHAPES, bench_shape
from .startup import startup
from .stream import stream_bench


def _ints(flag, count=None, lo=1, names=None):
    """argparse type: comma-separated integers >= lo (``count`` of them); ``lo`` may be
    a tuple, one lower end per position (``names``)."""
    los = tuple(lo) if isinstance(lo, tuple) else None

    def parse(text):
        parts = [p.strip() for p in str(text).split(",")]
        try:
            vals = [int(p) for p in parts]
        except ValueError:
            vals = None
        ends = los or (lo,) * len(vals or ())
        if vals is None or (count is not None and len(vals) != count) or \
                any(v < e for v, e in zip(vals, ends)):
            if names and los:
                what = " and ".join(f"{n} >= {e}" for n, e in zip(names, los))
                raise argparse.ArgumentTypeError(
                    f"{flag} {text!r}: use {count} comma-separated integers {','.join(names)}"
                    f" with {what}")
            raise argparse.ArgumentTypeError(
                f"{flag} {text!r}: use {count or 'a list of'} comma-separated "
                f"{','.join(names)} >= {lo}" if names else
                f"{flag} {text!r}: use comma-separated integers >= {lo}")
        return vals
    return parse


def _number(flag, lo=None, hi=None, lo_open=False, hi_open=False, integer=False):
    """argparse type: a finite number in the given range."""
    def parse(text):

        try:
            v = int(text) if integer else float(text)
        except ValueError:
            v = None
        ok = v is not None and math.isfinite(v) and \
            (lo is None or (v > lo if lo_open else v >= lo)) and \
            (hi is None or (v < hi if hi_open else v <= hi))
        if not ok:
            rng = ((f"> {lo:g}" if lo_open else f">= {lo:g}") if lo is not None else "") + \
                ((" and " if lo is not None else "") + (f"< {hi:g}" if hi_open else
                                                        f"<= {hi:g}") if hi is not None else "")
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: use "
                                             f"{'an integer' if integer else 'a number'} {rng}")
        return v
    return parse


def _names(flag, allowed):
    """argparse type: comma-separated names among ``allowed`` ('' = none)."""
    def parse(text):
        vals = [p.strip() for p in str(text).split(",") if p.strip()]
        bad = [v for v in vals if v not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"{flag} {bad[0]!r} is not one: use comma-"
                                             f"separated names of {', '.join(allowed)}")
        return vals
    return parse


#: the kinds of benchmark (one per run of the command) and the flags only each one reads
KINDS = {
    "shape": ("--shape", "--dtype", "--maps", "--peers"),
    "startup": (),
    "exact": ("--lam", "--tol", "--rank"),
    "stream": ("--in-memory", "--data-dir"),
    "dask": (),
    "products": ("--kernels",),
    "cuda": ("--cuda-maps", "--cuda-product"),
}
#: the flags that several kinds read, and which (any other kind refuses them)
SHARED_FLAGS = {"--repeats": ("shape", "startup", "dask", "products", "cuda"),
                "--threads": ("shape", "products"), "--processes": ("shape", "products")}


def _represents(cls, kernel):

    try:
        cls.check_kernel(kernel)
    except ConfigError:
        return False
    return True


def _parser():

    ap = argparse.ArgumentParser(prog="python -m rffbench.bench",
                                 description=sys.modules[__package__].__doc__.splitlines()[0])
    ap.add_argument("--shape", action="append", default=None, type=_ints(
        "--shape", 3, names=("N", "d", "D")),
        help="N,d,D (repeatable); default: 100000,8,1024 and 20000,512,4096")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    dense_gaussian = [m for m, cls in FEATURE_MAPS.builtins().items()
                      if not cls.tags.sparse_output and _represents(cls, "gaussian")]
    ap.add_argument("--maps", default=["rff", "rff_pairs"],
                    type=_names("--maps", dense_gaussian),
                    help="comma-separated rffbench maps (Gaussian kernel), e.g. rff,sorf,fastfood")
    ap.add_argument("--repeats", type=_number("--repeats", lo=1, hi=MAX_REPEATS, integer=True),
                    default=None,
                    help="timed repeats (default 7; --products 5, --dask 3)")
    ap.add_argument("--peers", default=["torch", "jax"],
                    type=_names("--peers", [p for p in PEERS if p != "numpy"]),
                    help="comma-separated peers timed in their own process where installed "
                         "(rffbench.peers); '' = none")
    ap.add_argument("--threads", type=_number("--threads", lo=1, integer=True), default=None)
    ap.add_argument("--processes", type=_number("--processes", lo=1, hi=100, integer=True),
                    default=None,
                    help="worker processes each shape or kernel is timed in, one after the "
                         "other (default 3; started once, shared by every shape): every time "
                         "is the median of their medians")
    ap.add_argument("--out", default=None, help="also write the table as CSV")
    ap.add_argument("--startup", action="store_true",
                    help="time the default `python run.py` cold (empty numba cache) and warm")
    ap.add_argument("--exact", default=None, type=_ints("--exact", lo=EXACT_MIN_N),
                    help="comma-separated n_train: exact KRR by cg and (n <= 20000) Cholesky")
    ap.add_argument("--lam", type=_number("--lam", lo=0, lo_open=True), default=None,
                    help="--exact: ridge lam (default 1e-2)")
    ap.add_argument("--tol", type=_number("--tol", lo=0, hi=1, lo_open=True, hi_open=True),
                    default=None, help="--exact: cg tolerance (default 1e-5)")
    ap.add_argument("--rank", type=_number("--rank", lo=1, integer=True), default=None,
                    help="--exact: preconditioner rank")
    ap.add_argument("--exact-one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--stream", default=None, type=_ints("--stream", lo=10),
                    help="comma-separated n: ridge (D=1024, d=16) on a streamed .npy of n rows")
    ap.add_argument("--in-memory", action="store_true",
                    help="--stream: the same rows as dataset=synthetic, loaded whole")
    ap.add_argument("--data-dir", default=None, help="--stream: where the .npy files go")
    ap.add_argument("--dask", nargs="?", const=[1_000_000, 20_000], default=None,
                    type=_ints("--dask", 2, lo=2, names=("n_ridge", "n_exact")),
                    help="backend=dask on a 2-worker LocalCluster vs the local path: ridge on "
                         "n_ridge rows, exact KRR by cg on n_exact (default 1000000,20000)")
    ap.add_argument("--products", default=None,
                    type=_ints("--products", 2, lo=(2, 1), names=("n", "d")),
                    help="n,d: one exact kernel product per kernel (--kernels) vs its limits")
    ap.add_argument("--kernels", default=None,
                    type=_names("--kernels", list(PRODUCT_KERNELS)),
                    help="--products: comma-separated kernels (default: all)")
    ap.add_argument("--device", default=None, choices=["cuda"],
                    help="cuda: the device check (pip install -e '.[gpu]', a GPU): the CUDA "
                         "tests, the maps (--cuda-maps) and K v (--cuda-product) on the "
                         "device vs the CPU and PyTorch, with the card's name and peaks")
    ap.add_argument("--cuda-maps", default=None,
                    type=_ints("--cuda-maps", 3, names=("N", "d", "D")),
                    help="--device cuda: N,d,D of the maps (default 100000,8,1024)")
    ap.add_argument("--cuda-product", default=None,
                    type=_ints("--cuda-product", 2, lo=(2, 1), names=("n", "d")),
                    help="--device cuda: n,d of the exact Gaussian product K v (default "
                         "12000,16)")
    ap.add_argument("--save", default=None, help="write the table as CSV (as --out)")
    ap.add_argument("--compare", default=None,
                    help="a CSV saved by --save: print time ratios new / saved")
    ap.add_argument("--factor", type=_number("--factor", lo=1), default=None,
                    help="--compare: exit 1 if any row is more than this many times slower "
                         "(>= 1)")
    return ap


def _kind(args):
    """The benchmark the flags ask for; BenchError for two at once, or a flag of another."""
    chosen = [k for k, on in (("startup", args.startup), ("exact", args.exact),
                              ("stream", args.stream), ("dask", args.dask),
                              ("products", args.products), ("cuda", args.device == "cuda"))
              if on]
    if len(chosen) > 1:
        raise BenchError(f"--{chosen[0]} and --{chosen[1]} are two benchmarks: run them one at "
                         "a time")
    kind = chosen[0] if chosen else "shape"
    defaults = {"--shape": None, "--dtype": "float64", "--maps": ["rff", "rff_pairs"],
                "--peers": ["torch", "jax"], "--lam": None, "--tol": None, "--rank": None,
                "--in-memory": False, "--data-dir": None, "--kernels": None,
                "--cuda-maps": None, "--cuda-product": None}
    for other, flags in KINDS.items():
        for flag in flags:
            if other != kind and getattr(args, flag[2:].replace("-", "_")) != defaults[flag]:
                raise BenchError(f"{flag} has no effect with {_kind_name(kind)}: it is a flag "
                                 f"of {_kind_name(other)}")
    for flag, kinds in SHARED_FLAGS.items():
        if getattr(args, flag[2:]) is not None and kind not in kinds:
            raise BenchError(f"{flag} has no effect with {_kind_name(kind)}: it is a flag of "
                             + ", ".join(_kind_name(k) for k in kinds))
    if args.factor is not None and not args.compare:
        raise BenchError("--factor has no effect without --compare")
    if args.out and args.save and args.out != args.save:
        raise BenchError(f"--out {args.out} and --save {args.save} are the same option (the "
                         "table as CSV): give one of them")
    if args.threads is not None:

        if args.threads > numba.config.NUMBA_NUM_THREADS:
            raise BenchError(f"--threads {args.threads}: use 1..{numba.config.NUMBA_NUM_THREADS}"
                             " (numba's pool size, NUMBA_NUM_THREADS)")
    return kind


def _kind_name(kind):
    return "the transform benchmark (--shape)" if kind == "shape" else \
        "--device cuda" if kind == "cuda" else f"--{kind}"


def _check_memory(kind, args):
    """BenchError naming the flag when the benchmark's arrays cannot fit, before any."""

    avail = available_bytes()
    if avail is None:
        return
    budget = MEMORY_FRACTION * avail
    item = 4 if args.dtype == "float32" else 8
    if kind == "shape":
        for N, d, D in args.shape or DEFAULT_SHAPES:
            # X, W, the limit's output, a reused output and each transform's fresh one
            # (and scikit-learn's float64 copy)
            need = item * (N * d + d * D + 3 * N * D) + 8.0 * N * D
            if need > budget:
                raise BenchError(f"--shape {N},{d},{D} needs {human(need)}, more than "
                                 f"{MEMORY_FRACTION:.0%} of the {human(avail)} available: use "
                                 "a smaller N or D")
    elif kind == "products":
        n, d = args.products
        need = 8.0 * (3 * n * d + 3 * n + 2 * 3000 * 3000) + 4.0 * 2 * 3000 * 3000
        if need > budget:
            raise BenchError(f"--products {n},{d} needs {human(need)}, more than "
                             f"{MEMORY_FRACTION:.0%} of the {human(avail)} available")
    elif kind == "exact":

        for n in args.exact:
            r = args.rank or default_rank(n)
            chol = 8.0 * n * n if n <= 20000 else 0.0
            need = max(chol, 8.0 * (n * 16 * 3 + 2 * n * min(r, n) + 16 * n))
            if need > budget:
                raise BenchError(f"--exact {n} needs {human(need)}, more than "
                                 f"{MEMORY_FRACTION:.0%} of the {human(avail)} available")
    elif kind == "dask":
        n_ridge, n_exact = args.dask
        n = max(n_ridge, n_exact)
        # the synthetic data (3.5 copies while loading), ridge's 3 D x D matrices and a chunk
        # per worker, the cg data and preconditioner
        need = 3.5 * 8.0 * n * 17 + 8.0 * (3 * 1024 * 1024 + 2 * 4096 * 1024) \
            + 8.0 * (2 * n_exact * 16 + 2 * n_exact * min(n_exact, 2000))
        if need > budget:
            raise BenchError(f"--dask {n_ridge},{n_exact} needs {human(need)}, more than "
                             f"{MEMORY_FRACTION:.0%} of the {human(avail)} available")
    elif kind == "stream" and not args.in_memory:

        where = args.data_dir or tempfile.gettempdir()
        try:
            free = shutil.disk_usage(where).free
        except OSError as exc:
            raise BenchError(f"--data-dir {where}: {exc.strerror or exc}") from None
        need = sum(8.0 * n * 17 for n in args.stream)
        if need > 0.9 * free:
            raise BenchError(f"--stream {','.join(map(str, args.stream))} writes {human(need)} "
                             f"of .npy files into {where}, which has {human(free)} free: use "
                             "fewer rows or another --data-dir")


def main(argv=None):


    check_cwd("python -m rffbench.bench")
    args = _parser().parse_args(argv)
    try:
        kind = _kind(args)
        _check_memory(kind, args)
        saved = read_saved(args.compare) if args.compare else None
        df = _run(kind, args)
    except BenchError as exc:
        print(f"python -m rffbench.bench: error: {exc}", file=sys.stderr)
        return 2
    except RffbenchError as exc:  # a refusal from rffbench itself (config, memory)
        print(f"python -m rffbench.bench: error: {first_line(exc)}", file=sys.stderr)
        return 2
    if df is None:
        return 0
    out = args.out or args.save
    if out:

        try:
            write_atomic(df, out)
        except OSError as exc:
            print(f"python -m rffbench.bench: error: {os_error_text(exc, 'cannot write --save')}",
                  file=sys.stderr)
            return 2
    if args.compare:
        try:
            cmp = _show(compare(df.to_dict("records"), saved))
        except BenchError as exc:
            print(f"python -m rffbench.bench: error: {exc}", file=sys.stderr)
            return 2
        slow = cmp[cmp.new_over_saved > args.factor] if args.factor else cmp.iloc[:0]
        if len(slow):
            print(f"{len(slow)} row(s) more than {args.factor:g}x slower than {args.compare}")
            return 1
    return 0


def _run(kind, args):
    """The rows of benchmark ``kind`` for the checked ``args``, shown; a DataFrame with a
    ``time_s`` column (each row's main time), or None (--exact-one prints its JSON)."""
    if args.exact_one:

        print(json.dumps(exact_one(**json.loads(args.exact_one))))
        return None
    if kind == "products":
        n, d = args.products
        return _show(products_bench(n, d, tuple(args.kernels or PRODUCT_KERNELS),
                                    args.repeats or 5, args.threads, args.processes or 3))
    if kind == "cuda":
        N, d, D = args.cuda_maps or (100_000, 8, 1024)
        n, dp = args.cuda_product or (12000, 16)
        return _show(cuda_bench(N, d, D, n, dp, repeats=args.repeats or 10))
    if kind == "dask":
        n_ridge, n_exact = args.dask
        return _show(dask_bench(n_ridge=n_ridge, n_exact=n_exact, repeats=args.repeats or 3))
    if kind == "stream":
        return _show([stream_bench(v, data_dir=args.data_dir, in_memory=args.in_memory)
                      for v in args.stream])
    if kind == "exact":
        return _show(exact_bench(args.exact, lam=args.lam or 1e-2, tol=args.tol or 1e-5,
                                 rank=args.rank))
    if kind == "startup":
        return _show(startup(repeats=args.repeats or 3))

    threads = apply_threads(args.threads)
    rows = []
    for N, d, D in args.shape or DEFAULT_SHAPES:
        rows += bench_shape(N, d, D, args.dtype, args.repeats or 7, maps=tuple(args.maps),
                            peers=tuple(args.peers), processes=args.processes or 3,
                            threads=threads)
    cols = ["N", "d", "D", "dtype", "threads", "impl", "time_s", "spread_s",
            "process_medians", "process_ratio", "unstable", "speedup_vs_sklearn",
            "fraction_of_limit", "first_touch_s", "note", "loads", "machine"]
    return _show([{c: r.get(c) for c in cols} for r in rows])


def _show(rows):
    """Print a benchmark's rows as a table; the DataFrame."""

    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.precision", 4,
                           "display.max_colwidth", 90):
        print(df.to_string(index=False))
    return df
