"""Optional peers of the cos + offset map (PyTorch, JAX), each timed in its own process.

Why a worker process: timed in the same process as numba and OpenBLAS, the peer's thread
pool and ours disturb each other (measured: PyTorch looked 1.09x behind ``rff`` at N =
10,000, d = 1024, D = 8192 in one process; in its own process, reusing its output, it is
1.2-1.3x ahead).  So the parent writes X, W and b as ``.npy`` files (``np.save``, no
pickle) into a temporary directory and runs ``python -m rffbench.peers DIR PEER THREADS
REPEATS OUTPUT``; the worker loads them (``allow_pickle=False``), builds the peer's
``cos(X @ W + b) * scale`` on the same W and b, warms it up, and prints one JSON line:
the median and spread of ``REPEATS`` calls, the peer's version and what it did.

``OUTPUT`` is how the output is allocated, to be matched on our side: ``fresh`` (a new
array per call, as ``FeatureMap.transform(X)``) or ``out`` (one preallocated buffer reused,
as ``FeatureMap.transform(X, out=buf)``).  JAX arrays are immutable, so JAX has only
``fresh``.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .clock import blas_info, time_call
from .errors import first_line

#: the peers, by the module that must be importable (numpy: the plain reference in a process
#: of its own, which also keeps the worker's plumbing tested where no optional peer is installed)
PEERS = {"torch": "torch", "jax": "jax", "numpy": "numpy"}
OUTPUTS = ("fresh", "out")
#: seconds a worker may take (warm-up, repeats and the import of the peer)
WORKER_TIMEOUT_S = 900


def installed(peer):
    """Whether the peer's module can be found (without importing it here)."""
    return importlib.util.find_spec(PEERS[peer]) is not None


def _torch_fn(X, W, b, scale, threads, output):
    import torch

    torch.set_num_threads(threads)
    Xt, Wt, bt = (torch.from_numpy(a) for a in (X, W, b))
    if output == "out":
        buf = torch.empty((X.shape[0], W.shape[1]), dtype=Xt.dtype)

        def fn():
            with torch.no_grad():
                torch.addmm(bt, Xt, Wt, out=buf)
                torch.cos(buf, out=buf)
                buf.mul_(scale)
    else:
        def fn():
            with torch.no_grad():
                return torch.cos(torch.addmm(bt, Xt, Wt)) * scale

    return fn, f"PyTorch {torch.__version__}, {threads} threads"


def _torch_blas():
    """PyTorch's BLAS as its build reports it (BLAS_INFO; MKL's version where it is MKL),
    its intra-op threads, and the BLAS libraries threadpoolctl sees in this process."""
    import re

    import torch

    shown = torch.__config__.show()
    info = re.search(r"BLAS_INFO=(\w+)", shown)
    mkl = re.search(r"Math Kernel Library Version ([\w.]+)", shown)
    words = [f"torch's BLAS {info.group(1) if info else 'unknown'}"
             + (f" {mkl.group(1)}" if mkl else ""), f"{torch.get_num_threads()} threads"]
    loaded = blas_info()
    return ", ".join(words) + (f" (also loaded: {loaded})" if loaded != "unknown" else "")


def _numpy_fn(X, W, b, scale, threads, output):
    if output == "out":
        buf = np.empty((X.shape[0], W.shape[1]), dtype=X.dtype)

        def fn():
            np.matmul(X, W, out=buf)
            np.add(buf, b, out=buf)
            np.cos(buf, out=buf)
            np.multiply(buf, scale, out=buf)
    else:
        def fn():
            return np.cos(X @ W + b) * scale

    return fn, f"numpy {np.__version__} (its BLAS's threads)"


def _jax_fn(X, W, b, scale, threads, output):
    if output != "fresh":
        raise ValueError("JAX arrays are immutable: output=fresh only")
    import jax

    if X.dtype == np.float64:
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    f = jax.jit(lambda X, W, b: jnp.cos(X @ W + b) * scale)
    Xj, Wj, bj = (jax.device_put(a) for a in (X, W, b))

    def fn():
        return f(Xj, Wj, bj).block_until_ready()

    # XLA's CPU client sizes its own thread pool (all cores); it has no per-call setting
    return fn, f"JAX {jax.__version__}, XLA's own CPU threads ({os.cpu_count()} cores)"


#: the peer's BLAS in its worker, in words (vendor, version, kernel, threads)
BLAS_OF = {"torch": _torch_blas, "numpy": blas_info,
           "jax": lambda: "XLA's own CPU GEMM (Eigen), no BLAS library"}


def worker(directory, peer, threads, repeats, output):
    """The worker's side: one JSON line on stdout (median, spread, note) or an error."""
    d = Path(directory)
    X, W, b = (np.load(d / f"{k}.npy", allow_pickle=False) for k in ("X", "W", "b"))
    scale = X.dtype.type(math.sqrt(2.0 / W.shape[1]))
    make = {"torch": _torch_fn, "jax": _jax_fn, "numpy": _numpy_fn}[peer]
    try:
        fn, note = make(X, W, b, scale, threads, output)
    except Exception as exc:  # not installed or unusable here: the record says why
        return dict(error=f"{peer} cannot be used: {type(exc).__name__}: {exc}")
    median, spread = time_call(fn, repeats)
    return dict(median=median, spread=spread, note=note, output=output, blas=BLAS_OF[peer]())


def time_peer(peer, X, W, b, threads, repeats, output="fresh"):
    """(median s, spread s, note, blas) of ``peer`` (PEERS) on the cos + offset map of X
    with these W and b, timed in its own process with ``threads`` threads (``blas``: the
    BLAS it ran, in words, as the worker saw it); median None and the reason in the note
    where it cannot run."""
    if peer not in PEERS:
        raise ValueError(f"unknown peer {peer!r}: use one of {', '.join(PEERS)}")
    if output not in OUTPUTS:
        raise ValueError(f"output={output!r}: use one of {', '.join(OUTPUTS)}")
    if not installed(peer):
        return None, None, f"{peer} not installed: an optional peer (pip install {peer})", None
    with tempfile.TemporaryDirectory(prefix="rffbench-peer-") as tmp:
        for k, a in (("X", X), ("W", W), ("b", b)):
            np.save(Path(tmp) / f"{k}.npy", np.ascontiguousarray(a), allow_pickle=False)
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        try:
            proc = subprocess.run([sys.executable, "-m", "rffbench.peers", tmp, peer,
                                   str(threads), str(repeats), output], capture_output=True,
                                  text=True, timeout=WORKER_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired:
            return None, None, f"{peer} worker took more than {WORKER_TIMEOUT_S} s", None
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = first_line((proc.stderr.strip().splitlines() or ["no output"])[-1])
        return None, None, f"{peer} worker failed (exit {proc.returncode}): {tail}", None
    res = json.loads(lines[-1])
    if "error" in res:
        return None, None, res["error"], None
    how = "one preallocated output reused" if output == "out" else "a fresh output per call"
    return res["median"], res["spread"], (f"{res['note']}, own process, same W and b, "
                                          f"{how}, median of {repeats}; BLAS: "
                                          f"{res['blas']}"), res["blas"]


def time_peer_outputs(peer, X, W, b, threads, repeats):
    """(output, median s, spread s, note, blas) for each output mode the peer has (JAX:
    fresh only), each timed by :func:`time_peer`; after a peer that cannot run, no more."""
    for output in OUTPUTS if peer != "jax" else ("fresh",):  # immutable JAX arrays
        t, spread, note, blas = time_peer(peer, X, W, b, threads, repeats, output)
        yield output, t, spread, note, blas
        if t is None:
            return


if __name__ == "__main__":
    directory, peer, threads, repeats, output = sys.argv[1:6]
    print(json.dumps(worker(directory, peer, int(threads), int(repeats), output)))
