"""``--dask``: backend=dask on a LocalCluster against the local path."""
from __future__ import annotations

from .. import backends
from ..config import DatasetConfig
from ..datasets import load_dataset
from ..exact import ExactKRR
from ..features import FEATURE_MAPS
from ..kernels import make_kernel
from ..measure.speed import interleaved
from ..models import FeatureRidge


def dask_bench(n_ridge=1_000_000, n_exact=20_000, d=16, D=1024, workers=2, repeats=3):
    """backend=dask on a LocalCluster (``workers`` processes, 1 thread each) against the
    local path (all cores) in this process: ridge's accumulation on n_ridge synthetic rows
    (D features) and exact KRR by cg on n_exact rows.  Medians of ``repeats`` after a
    warm-up; returns rows with the time of each and the ratio dask / local."""

    data = load_dataset(DatasetConfig(name="synthetic", n=max(n_ridge, n_exact), d=d), seed=0)
    X, y = data.X_train, data.y_train[:, None]
    be = backends.DaskBackend(workers=workers, threads_per_worker=1)
    fmap = FEATURE_MAPS["rff"](n_components=D, random_state=0).fit(X[:n_ridge])
    k = make_kernel("gaussian").fit(X[:n_exact])
    tasks = {
        "ridge": lambda b: FeatureRidge(1e-3, backend=b).fit(fmap, X[:n_ridge], y[:n_ridge]),
        "exact_krr_cg": lambda b: ExactKRR(k, 1e-2, solver="cg", tol=1e-5, random_state=0,
                                           backend=b).fit(X[:n_exact], y[:n_exact]),
    }
    rows = []
    for name, fn in tasks.items():
        res = interleaved({"local": lambda fn=fn: fn(None), "dask": lambda fn=fn: fn(be)},
                          repeats)
        rows.append(dict(task=name, n=n_ridge if name == "ridge" else n_exact,
                         time_s=res["dask"][0], local_s=res["local"][0], dask_s=res["dask"][0],
                         dask_over_local=res["dask"][0] / res["local"][0], workers=workers))
    backends.close_all()
    return rows
