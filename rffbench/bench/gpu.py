"""``--device cuda``: the device check.  On a machine with a GPU (``pip install -e '.[gpu]'``),
one command, a few minutes:

1. the CUDA test-suite (``tests/cuda``: every kernel against numpy, every map's CUDA
   transform against its CPU transform) on the real device;
2. every map with a CUDA transform (rffbench.cuda.maps) timed on the device against the
   same fitted map on the CPU, in this process, float32 and float64: the device time is
   CUDA events around the call (the output left on the device), the first call (the
   kernels' compilation) and the copies host -> device (X) and device -> host (the
   features) recorded apart; the fraction of the card's memory bandwidth the call reaches
   (bytes: X read, the features written, and the GEMM's intermediate written and read
   again where there is one);
3. the exact Gaussian kernel product K v on the device against the CPU's fused tiles
   (rffbench.exact.KernelOperator), and the fraction of the card's float64 peak (2 + 3 d
   flops per pair, the exponential counted as one);
4. PyTorch on CUDA (where installed) in its own process with the same W and b:
   sqrt(2/D) cos(X W + b).

The card's name, compute capability and peaks (bandwidth from its memory clock and bus
width; float32 / float64 rates from its SM count, clock and the cores per SM of its
architecture) go into every row.  On numba's CUDA simulator the same command runs at tiny
shapes (the tests do so): its times are the simulator's, not a GPU's.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..clock import time_call
from ..cuda.timing import device_times
from ..cuda.timing import synchronize as _sync
from ..errors import BenchError

#: (float32, float64) cores per SM by compute capability major.minor (NVIDIA's tables)
CORES_PER_SM = {(7, 0): (64, 32), (7, 5): (64, 2), (8, 0): (64, 32), (8, 6): (128, 2),
                (8, 7): (128, 2), (8, 9): (128, 2), (9, 0): (128, 64), (10, 0): (128, 64)}
#: the maps timed, each with the kernel it is timed on
MAPS = (("rff", "gaussian"), ("rff_pairs", "gaussian"), ("orf", "gaussian"),
        ("sorf", "gaussian"), ("fastfood", "gaussian"), ("arccos", "arccos0"),
        ("positive", "gaussian"))
ROOT = Path(__file__).resolve().parents[2]


def device_info():
    """{name, compute_capability, sms, peak_gbps, peak_gflops32, peak_gflops64} of the
    current device (NaN where it does not say: the simulator)."""
    from numba import cuda

    dev = cuda.get_current_device()
    nan = float("nan")
    name = getattr(dev, "name", b"CUDA simulator")
    name = name.decode() if isinstance(name, bytes) else str(name)
    cc = tuple(getattr(dev, "compute_capability", (0, 0)))
    sms = getattr(dev, "MULTIPROCESSOR_COUNT", None)
    mem_khz = getattr(dev, "MEMORY_CLOCK_RATE", None)
    bus = getattr(dev, "GLOBAL_MEMORY_BUS_WIDTH", None)
    clk_khz = getattr(dev, "CLOCK_RATE", None)
    gbps = 2.0 * mem_khz * 1e3 * bus / 8 / 1e9 if mem_khz and bus else nan
    per = CORES_PER_SM.get(cc)
    f32, f64 = ((2.0 * sms * c * clk_khz * 1e3 / 1e9 for c in per) if per and sms and clk_khz
                else (nan, nan))
    return dict(device=name, compute_capability=f"{cc[0]}.{cc[1]}", sms=sms or 0,
                peak_gbps=gbps, peak_gflops32=f32, peak_gflops64=f64)


def _host_times(fn, repeats):
    return time_call(fn, repeats)[0]


def map_rows(N, d, D, repeats, info):
    """One row per (map, dtype): device, CPU, copies, compile, bandwidth fraction."""
    from numba import cuda

    from ..cuda import maps as cmaps
    from ..cuda.device_code import to_host
    from ..features import FEATURE_MAPS

    rows = []
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        X = rng.normal(size=(N, d)).astype(dtype)
        item = X.itemsize
        h2d = _host_times(lambda: (cuda.to_device(X), _sync()), max(1, min(repeats, 3)))
        dX = cuda.to_device(X)
        for name, kernel in MAPS:
            fmap = FEATURE_MAPS[name](kernel=kernel, n_components=D, random_state=0,
                                      lengthscale=1.0).fit(X)
            first, dev_s, spread = device_times(lambda: cmaps.transform(fmap, X, dX), repeats)
            out = cmaps.transform(fmap, X, dX)
            _sync()
            t = time.perf_counter()
            host_out = to_host(out)
            d2h = time.perf_counter() - t
            cpu_s = _host_times(lambda: fmap.transform(X), max(1, min(repeats, 3)))
            gemm = name in ("rff", "rff_pairs", "orf", "arccos", "positive")
            m = getattr(fmap, "n_freq_", D)
            nbytes = item * (N * d + N * D + (2 * N * m if gemm else 0))
            gbps = nbytes / dev_s / 1e9 if dev_s else float("nan")
            rows.append(dict(info, kind="map", impl=f"rffbench {name}", kernel=kernel,
                             N=N, d=d, D=D, dtype=np.dtype(dtype).name, device_s=dev_s,
                             spread_s=spread, first_call_s=first, h2d_s=h2d, d2h_s=d2h,
                             cpu_s=cpu_s, cpu_over_device=cpu_s / dev_s if dev_s else None,
                             gbps=gbps, fraction_of_peak=gbps / info["peak_gbps"],
                             max_abs_diff=float(np.abs(host_out - fmap.transform(X)).max())))
    return rows


def product_rows(n, d, repeats, info):
    """K v of the Gaussian kernel (lengthscale 1) on the device and on the CPU."""
    from ..cuda import device_code as ck
    from ..exact import KernelOperator
    from ..kernels import make_kernel

    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    v = rng.normal(size=(n, 1))
    from numba import cuda

    dX, dv = cuda.to_device(X), cuda.to_device(v)
    first, dev_s, spread = device_times(lambda: ck.kernel_matvec(dX, dX, dv, ck.SQ_EXP, 0.5),
                                        repeats)
    got = ck.kernel_matvec(X, X, v, ck.SQ_EXP, 0.5)
    op = KernelOperator(make_kernel("gaussian", lengthscale=1.0), X)
    cpu_s = _host_times(lambda: op.matvec(v), max(1, min(repeats, 3)))
    gflops = n * n * (2 + 3 * d) / dev_s / 1e9 if dev_s else float("nan")
    return [dict(info, kind="product", impl="rffbench K v (gaussian)", kernel="gaussian",
                 N=n, d=d, D=None, dtype="float64", device_s=dev_s, spread_s=spread,
                 first_call_s=first, cpu_s=cpu_s,
                 cpu_over_device=cpu_s / dev_s if dev_s else None, gflops=gflops,
                 fraction_of_peak=gflops / info["peak_gflops64"],
                 max_abs_diff=float(np.abs(got - op.matvec(v)).max()))]


TORCH_SCRIPT = r"""
import json, sys, numpy as np, torch
X, W, b = (np.load(sys.argv[1] + f) for f in ("/X.npy", "/W.npy", "/b.npy"))
reps = int(sys.argv[2])
dev = torch.device("cuda")
Xt, Wt, bt = (torch.from_numpy(a).to(dev) for a in (X, W, b))
scale = float(np.sqrt(2.0 / W.shape[1]))
f = lambda: torch.cos(Xt @ Wt + bt) * scale
f(); torch.cuda.synchronize()
ts = []
for _ in range(reps):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record(); f(); e1.record(); e1.synchronize(); ts.append(e0.elapsed_time(e1) / 1e3)
print(json.dumps(dict(device_s=float(np.median(ts)), spread_s=float(max(ts) - min(ts)),
                      torch=torch.__version__, out=f().cpu().numpy()[:4].tolist())))
"""


def torch_rows(N, d, D, repeats, info):
    """PyTorch's sqrt(2/D) cos(X W + b) on CUDA in its own process, the same W and b as
    rffbench's rff (float32); a row saying why not where torch or its CUDA is missing."""
    from ..features import FEATURE_MAPS

    base = dict(info, kind="map", impl="torch rff", kernel="gaussian", N=N, d=d, D=D,
                dtype="float32")
    X = np.random.default_rng(0).normal(size=(N, d)).astype(np.float32)
    fmap = FEATURE_MAPS["rff"](kernel="gaussian", n_components=D, random_state=0,
                               lengthscale=1.0).fit(X)
    with tempfile.TemporaryDirectory() as tmp:
        for name, a in (("X", X), ("W", fmap.random_weights_), ("b", fmap.random_offset_)):
            np.save(f"{tmp}/{name}.npy", np.ascontiguousarray(a, dtype=np.float32))
        p = subprocess.run([sys.executable, "-c", TORCH_SCRIPT, tmp, str(repeats)],
                           capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return [dict(base, note=f"not timed: {tail[:200]}")]
    res = json.loads(p.stdout.strip().splitlines()[-1])
    diff = float(np.abs(np.asarray(res.pop("out")) - fmap.transform(X)[:4]).max())
    return [dict(base, device_s=res["device_s"], spread_s=res["spread_s"],
                 note=f"torch {res['torch']}", max_abs_diff=diff)]


def test_rows(info):
    """The CUDA test-suite on this device (``tests/cuda``, in its own process)."""
    tests = ROOT / "tests" / "cuda"
    if not tests.is_dir():
        return [dict(info, kind="tests", impl="tests/cuda", note="not found (an installed "
                                                                   "package without tests/)")]
    from ..cuda import simulated

    # on the simulator the tests are Python threads: one process (no xdist workers to start)
    serial = ["-n", "0"] if simulated() else []
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        *serial, str(tests)], cwd=ROOT, capture_output=True, text=True,
                       timeout=1800, env=dict(os.environ))
    summary = (p.stdout.strip().splitlines() or ["no output"])[-1]
    return [dict(info, kind="tests", impl="tests/cuda", device_s=time.perf_counter() - t,
                 note=f"exit {p.returncode}: {summary}")]


def cuda_bench(N, d, D, n_product, d_product, repeats=10, tests=True, peers=True):
    """The device check's rows (module docs); BenchError in one line where the CUDA path
    cannot run here."""
    from ..cuda import unavailable

    reason = unavailable()
    if reason:
        raise BenchError(f"--device cuda: {reason}")
    info = device_info()
    rows = test_rows(info) if tests else []
    rows += map_rows(N, d, D, repeats, info)
    rows += product_rows(n_product, d_product, repeats, info)
    if peers:
        rows += torch_rows(N, d, D, repeats, info)
    from ..cuda import simulated

    if simulated():
        for r in rows:
            if r["kind"] != "tests":
                r["note"] = "CUDA simulator: the device times are not a GPU's"
    return rows
