"""Where the heavy loops of one experiment run: this process (``local``, the default) or a
Dask cluster (``dask``: ``pip install 'rffbench[dask]'``).

Two loops are distributed, the ones that grow with n:

* the ridge accumulation (rffbench.models.accumulate): the training rows in blocks
  of ``model.chunk_rows``, one task per block computing the block's features and its
  sums (Z^T Z, Z^T Y, sum z, sum y, n), then a tree reduction of those sums;
* the kernel products of exact KRR's conjugate gradients (rffbench.exact): the
  training rows are sent to the cluster once; each product is one task per
  block of rows, K[rows, :] V.

The feature map is fitted here, as on the local path, and shipped to the workers
whole: its frequencies never depend on the partitioning, so both paths fit the same
model and agree to rounding (the sums are added in another order).  Streamed data
(.npy/.parquet) is read by the workers from the file themselves (a cluster needs the
path on a shared file system); in-memory data is sent with the tasks.

``backend.address`` null starts a ``dask.distributed.LocalCluster`` of
``backend.workers`` processes with ``backend.threads_per_worker`` threads each;
an address (``tcp://host:8786``) connects to a running scheduler, e.g. one that
dask-jobqueue's SLURMCluster started.
"""
from __future__ import annotations

import logging
from concurrent.futures import CancelledError

import numpy as np

from .errors import RffbenchError, first_line
from .stream import is_streamed

log = logging.getLogger(__name__)

BACKENDS = ("local", "dask")
EXTRA = "pip install 'rffbench[dask]'"

_CLIENT = {}


def _import_distributed():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:
        raise RffbenchError(f"backend=dask needs dask and distributed: {EXTRA}") from None
    return distributed


#: the port a Dask scheduler listens on unless told otherwise
DEFAULT_PORT = 8786
SCHEMES = ("tcp", "tls", "ucx", "ws", "wss", "inproc")


def normalise_address(address):
    """A scheduler address as distributed takes it, from the ways people write one:
    spaces and a trailing slash dropped, ``tcp://`` added to ``host:port``, the default
    port 8786 added to a bare host.  ConfigError (one line) for what is not an address."""
    from .errors import ConfigError

    a = str(address).strip().rstrip("/")
    scheme, sep, rest = a.rpartition("://")
    scheme = scheme.lower() if sep else "tcp"
    if scheme not in SCHEMES or not rest:
        raise ConfigError(f"backend.address={address!r} is not a Dask scheduler address: write "
                          f"tcp://host:{DEFAULT_PORT} (schemes: {', '.join(SCHEMES)})")
    if scheme != "inproc":
        host, colon, port = rest.rpartition(":")
        if not colon or host.endswith(":") or (rest.startswith("[") and not host.endswith("]")):
            host, port = rest, str(DEFAULT_PORT)  # a bare host (or IPv6 in brackets)
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError(f"backend.address={address!r} is not a Dask scheduler address: "
                              f"write tcp://host:{DEFAULT_PORT} (a port in 1..65535)")
        rest = f"{host}:{port}"
    return f"{scheme}://{rest}"


def check_local_cluster(workers, threads_per_worker):
    """A LocalCluster runs on this machine: at most one thread per core in all (as
    ``threads``), ConfigError naming the keys otherwise."""
    from .errors import ConfigError
    from .memory import cores

    n = cores()
    if workers * threads_per_worker > n:
        raise ConfigError(f"backend.workers={workers} x backend.threads_per_worker="
                          f"{threads_per_worker} is not allowed: a LocalCluster runs on this "
                          f"machine, which has {n} cores: use backend.workers x "
                          f"backend.threads_per_worker <= {n} (or backend.address=<a "
                          "scheduler> for a larger cluster)")


def _resolve(address):
    """RffbenchError at once when the host of a tcp/tls/ws address has no address (a typo:
    distributed retries it until backend.timeout)."""
    import socket

    scheme, _, rest = address.partition("://")
    if scheme not in ("tcp", "tls", "ws", "wss"):
        return
    host = rest.rpartition(":")[0].strip("[]")
    try:
        socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError) as exc:
        raise RffbenchError(f"backend.address={address!r}: cannot connect to a Dask scheduler "
                            f"there (the host {host!r} is unknown: "
                            f"{getattr(exc, 'strerror', None) or exc})") from None


def client(address=None, workers=2, threads_per_worker=1, timeout=60.0):
    """The process's Dask client for these settings (started once, reused)."""
    address = normalise_address(address) if address else None
    key = (address, workers, threads_per_worker)
    c = _CLIENT.get(key)
    if c is not None and c.status == "running":
        return c
    distributed = _import_distributed()
    # distributed logs every connection, worker start and close at INFO: a screenful per
    # run under Hydra's INFO logging.  Its warnings and errors still show (and rffbench
    # says what happened to the run: a worker lost, the cluster lost).
    if logging.getLogger("distributed").getEffectiveLevel() < logging.WARNING:
        logging.getLogger("distributed").setLevel(logging.WARNING)
    if address:
        _resolve(address)
        try:
            c = distributed.Client(address, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as exc:  # unreachable, refused, timed out
            raise RffbenchError(f"backend.address={address!r}: cannot connect to a Dask "
                                f"scheduler there ({first_line(exc)}; waited up to "
                                f"backend.timeout={timeout:g} s)") from None
    else:
        check_local_cluster(workers, threads_per_worker)
        t = str(threads_per_worker)  # numba and BLAS inside a worker: its own threads only
        env = {"NUMBA_NUM_THREADS": t, "OMP_NUM_THREADS": t, "OPENBLAS_NUM_THREADS": t,
               "MKL_NUM_THREADS": t}
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                                           processes=True, dashboard_address=None, env=env)
        c = distributed.Client(cluster)
    log.info("dask: %s", c)
    _CLIENT[key] = c
    return c


#: what a call to a cluster raises when the cluster is lost (distributed's CommClosedError
#: and tornado's StreamClosedError are OSErrors; cancelled tasks: CancelledError)
LOST = (OSError, TimeoutError, CancelledError)


def lost(what, exc):
    """The one line of a cluster lost during ``what``."""
    first = first_line(exc)
    return RffbenchError(f"backend=dask: {what} failed, the cluster was lost "
                         f"({type(exc).__name__}: {first})")


def gather(c, futs, what, timeout):
    """The results of ``futs``, waiting in slices: RffbenchError (one line) when the
    scheduler is lost, or when no worker has been left for ``timeout`` seconds
    (``backend.timeout``; instead of waiting forever).  A worker lost while others
    remain is Dask's to handle (it reschedules the tasks); :func:`workers_lost` counts
    such losses."""
    import time

    from distributed import wait

    alone_since = None
    try:
        while True:
            if c.status not in ("running", "connecting"):  # it gave up reconnecting
                raise OSError(f"the client is {c.status}")
            try:
                with c.as_current():  # distributed.wait takes the default client
                    wait(futs, timeout=min(1.0, timeout), return_when="ALL_COMPLETED")
                return c.gather(futs)
            except TimeoutError:  # not done within the slice: is any worker left?
                pass
            n = len(c.scheduler_info().get("workers", {}))
            if n:
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
            elif time.monotonic() - alone_since > timeout:
                raise RffbenchError(f"backend=dask: no worker left for backend.timeout={timeout:g}"
                                    f" s during {what} (all workers gone?); start workers or "
                                    "raise backend.timeout")
    except LOST as exc:
        # the scheduler lost (distributed's CommClosedError and tornado's StreamClosedError
        # are OSErrors), or the tasks cancelled (FutureCancelledError); a task's own error
        # is raised as it is
        raise lost(what, exc) from None


def share(c, obj, what, timeout):
    """``obj`` on the cluster for the tasks that use it, as the result of a task of its
    own that holds it (a future), not as scattered data.  Scattered data has no lineage:
    lost with its worker, it cannot be recomputed; and a broadcast scatter hangs for
    good when a worker dies during it (distributed's ``Scheduler.replicate`` waits for
    the dead worker to receive its copy while holding the scheduler's replication lock,
    so every later scatter waits too: a worker killed mid cg hung the run).  A task's
    result is recomputed from the task, which the scheduler keeps, when its worker is
    lost; the workers copy it from each other as their tasks need it.  Its own key
    (``pure=False``): two equal objects under one content-hashed key lose each other's
    data when one is released (the 'lost dependencies' of a second cg solve).  A lost
    scheduler is one line; no worker for ``timeout`` seconds is :func:`gather`'s line."""
    import warnings

    try:
        with warnings.catch_warnings():
            # the data travels inside the task on purpose (that is its lineage)
            warnings.filterwarnings("ignore", message="Sending large graph")
            return c.submit(_held, obj, pure=False)
    except Exception as exc:
        if isinstance(exc, OSError) or c.status != "running":  # the scheduler is gone
            first = first_line(exc)
            raise RffbenchError(f"backend=dask: cannot send {what} to the workers: the "
                                f"cluster was lost ({type(exc).__name__}: {first}); nothing "
                                "recorded, re-run the same command once it is back") from None
        raise


def _held(obj):
    return obj


def _removed_workers(dask_scheduler=None):
    """(On the scheduler) the workers, by address, that it has removed without being
    asked to (killed, crashed, out of memory, a connection lost; not those retired on
    purpose): those with such a removal in their own event topic.  Each worker's own
    topic: the shared "all" topic keeps only the last 1000 events and every gather logs
    one there, so a long cg run pushed the removals out of it (counted 0).  Workers, not
    removal events: one worker killed once can be removed twice (its stream closes and
    its nanny unregisters it), and is one worker lost."""
    return sorted(topic for topic, events in dask_scheduler.get_events().items()
                  if topic != "all" and any(isinstance(e, dict)
                                            and e.get("action") == "remove-worker"
                                            and not e.get("expected") for _, e in events))


def lost_workers(c):
    """The addresses of the workers that left the cluster since it started without
    being retired (Dask reschedules their tasks), read on the scheduler (its events hold
    objects that do not travel to the client); empty if the scheduler refuses
    run_on_scheduler."""
    try:
        return list(c.run_on_scheduler(_removed_workers))
    except Exception:  # a scheduler that refuses run_on_scheduler: unknown
        return []


def workers_lost(c):
    """How many workers left the cluster since it started (the records say so)."""
    return len(lost_workers(c))


def close_all():
    for c in _CLIENT.values():
        try:
            cluster = c.cluster
            c.close()
            if cluster is not None:
                cluster.close()
        except Exception:  # shutting down: nothing more to do
            pass
    _CLIENT.clear()


class DaskBackend:
    """The ridge accumulation and the kernel products of exact KRR on a Dask client."""

    name = "dask"

    def __init__(self, address=None, workers=2, threads_per_worker=1, timeout=60.0):
        self.client = client(address, workers, threads_per_worker, timeout)
        self.timeout = timeout

    # -- numba on the workers -------------------------------------------------
    def numba_events(self):
        """{worker: numba compilations and cache loads so far} (a rffbench.clock probe:
        a timed call during which a worker compiled is timed again)."""
        try:
            return self.client.run(_worker_numba_events)
        except Exception:  # a cluster lost mid-way: gather's line says so
            return {}

    def warm_up(self, kernel, fmap, X, precision="float64"):
        """Each worker compiles (or loads from its cache) the numba code of its tasks on
        a few rows of ``X`` (the sums of ``fmap``'s features unless None, a kernel product
        in ``precision``), before anything is timed.  A cluster lost meanwhile is one
        line, as in :func:`gather`."""
        try:
            self.client.run(_worker_warm_up, kernel, fmap, np.ascontiguousarray(X[:16]),
                            precision)
        except LOST as exc:
            raise lost("warming up the workers", exc) from None

    # -- ridge ---------------------------------------------------------------
    def accumulate(self, fmap, X, Y, rows):
        """NormalEquations of fmap's features of X: one task per block of ``rows`` rows,
        the block sums added in a binary tree."""
        from .models import NormalEquations
        from .plugins import output_dim

        c = self.client
        fmap_f = share(c, fmap, "the feature map", self.timeout)
        src = share(c, X, "the streamed rows' source", self.timeout) if is_streamed(X) else None
        parts = []
        for s in range(0, X.shape[0], rows):
            e = min(s + rows, X.shape[0])
            if src is not None:
                parts.append(c.submit(_streamed_block_sums, fmap_f, src, s, e, Y[s:e],
                                      pure=False))
            else:
                parts.append(c.submit(block_sums, fmap_f, X[s:e], Y[s:e], pure=False))
        while len(parts) > 1:  # tree reduction: log2(blocks) rounds, pairs added on workers
            nxt = [c.submit(_add_sums, parts[i], parts[i + 1], pure=False)
                   for i in range(0, len(parts) - 1, 2)]
            if len(parts) % 2:
                nxt.append(parts[-1])
            parts = nxt
        G, b, zsum, ysum, n = gather(c, [parts[0]], "the ridge accumulation", self.timeout)[0]
        ne = NormalEquations(output_dim(fmap), Y.shape[1])  # (the fitted map's width)
        ne.G[...] = G
        ne.b[...], ne.zsum[...], ne.ysum[...], ne.n = b, zsum, ysum, n
        return ne

    # -- exact KRR -----------------------------------------------------------
    def kernel_operator(self, kernel, X, precision="float64"):
        return DaskKernelOperator(self.client, kernel, X, precision=precision,
                                  timeout=self.timeout)


def _worker_numba_events():
    from .clock import numba_events

    return numba_events()


def _worker_warm_up(kernel, fmap, X, precision):
    """(On a worker) the tasks' numba code on a few rows: the features and their sums,
    a kernel product with the tiles of ``precision`` (mixed: float32)."""
    from .clock import watch_numba
    from .exact import prepared_times

    watch_numba()
    if fmap is not None:
        block_sums(fmap, X, np.ones((X.shape[0], 1)))
    Xw = kernel.inputs(X, dtype=np.float64)
    Xw = Xw if precision == "float64" else Xw.astype(np.float32)
    prepared_times(kernel, Xw, Xw, np.ones((X.shape[0], 1)), fused=True)


def block_sums(fmap, X, Y):
    """(On a worker) rffbench.models.block_sums, numba's compiler watched (rffbench.clock)."""
    from .clock import watch_numba
    from .models import block_sums as sums

    watch_numba()
    return sums(fmap, X, Y)


def _streamed_block_sums(fmap, X, s, e, Y):
    return block_sums(fmap, X[s:e], Y)


def _add_sums(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4]


class DaskKernelOperator:
    """K V on the workers: X sent once (:func:`share`), one task per block of rows computing
    K[rows, :] V with the kernel's numba Gram in tiles.  The same interface as
    rffbench.exact.KernelOperator (matvec, columns, diagonal, n, n_features: None, its
    products always go through the fused products on the workers: the tiles, or the
    intersection kernel's sorted coordinates; ``route``); it does not use the
    symmetry (each task owns its rows), so it evaluates the kernel n^2 times a product
    instead of n^2 / 2, in parallel over the workers.  Each task is the fused numba
    product of rffbench.exact (``prepared_times``)."""

    n_features = None

    def __init__(self, client, kernel, X, rows=None, precision="float64", timeout=60.0):
        from .exact import KernelOperator
        from .exact.tiles import product_route, route_precision

        # columns and diagonal (n r work) stay here
        self.local = KernelOperator(kernel, X, precision=precision)
        self.n = self.local.n
        self.route = product_route(self.local.spec)  # the workers' prepared_times
        self.precision_used = route_precision(self.route, precision)
        self.client, self.timeout = client, timeout
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        self.rows = rows or max(512, -(-self.n // (4 * n_workers)))
        # the workers' rows in the tiles' precision (mixed: float32 tiles, float64 sums;
        # the routes that are float64 whatever was asked get float64 rows)
        self._X = share(client, self.local.Xw if self.precision_used == "float64"
                          else self.local.Xw.astype(np.float32), "the training rows", timeout)
        self._k = share(client, kernel, "the kernel", timeout)
        self.products = 0

    def matvec(self, V):
        V = np.ascontiguousarray(V, dtype=np.float64)
        Vf = share(self.client, V, "a kernel product's right-hand side", self.timeout)
        futs = [self.client.submit(_rows_times, self._k, self._X, s, min(s + self.rows, self.n),
                                   Vf, pure=False) for s in range(0, self.n, self.rows)]
        self.products += 1
        return np.vstack(gather(self.client, futs, "a kernel product of exact KRR",
                                self.timeout))

    def columns(self, idx):
        return self.local.columns(idx)

    def diagonal(self):
        return self.local.diagonal()


def _rows_times(kernel, Xw, s, e, V):
    """K[s:e, :] V from prepared rows (the worker's part of a product)."""
    from .clock import watch_numba
    from .exact import prepared_times

    watch_numba()
    return prepared_times(kernel, Xw[s:e], Xw, V, fused=True)


def get_backend(bcfg):
    """A backend object for ``backend`` config (None: local)."""
    if bcfg is None or bcfg.name == "local":
        return None
    return DaskBackend(bcfg.address, bcfg.workers, bcfg.threads_per_worker, bcfg.timeout)
