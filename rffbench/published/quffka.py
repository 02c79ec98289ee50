"""Extract the per-run errors that Munkhoeva et al. (NeurIPS 2018) stored behind their
kernel-approximation figure into ``munkhoeva2018.csv``.

Their repository (github.com/maremun/quffka) keeps ``paper_figures/data/All_KA``: a pickle
of a dict dataset -> kernel -> method -> array (5 values of n, runs) of the relative
Frobenius error ||K - K_hat||_F / ||K||_F (``quffka/experiment.py``: ``relative_errors``,
``quffka/performance.py``: ``error``).  It is read with
:func:`rffbench.published.safe.load_arrays` (numpy arrays only, nothing run) and
summarised per point: mean, standard deviation, runs and distinct values (their ``QMC``
runs repeat: the ghalton sequence is seeded by the clock in seconds)::

    python -m rffbench.published.quffka All_KA --commit SHA > rffbench/published/munkhoeva2018.csv
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from .extract import ExtractError, commit_hash, finish, summary
from .extract import level as walk
from .safe import load_arrays

#: their dataset names -> (rffbench dataset name, d, first rows sampled from, rows per
#: sample) (quffka/dataset.py: DIMS and PARAMS; MNIST and CIFAR100: the 50,000 training
#: images)
DATASETS = {"LETTER": ("letter", 16, 10000, 550), "USPS": ("usps", 256, 4500, 550),
            "Powerplant": ("powerplant", 4, 8500, 550), "MNIST": ("mnist", 784, 50000, 550),
            "CIFAR100": ("cifar100", 3072, 50000, 550), "LEUKEMIA": ("leukemia", 7129, 38, 10)}
KERNELS = {"RBF": "gaussian", "Arccos 0": "arccos0", "Arccos 1": "arccos1"}
#: runs per point of each dataset (quffka/dataset.py: PARAMS[2]) and n = start..max
N_VALUES = (1, 2, 3, 4, 5)

HEADER = """\
# paper: Munkhoeva, Kapushev, Burnaev & Oseledets, "Quadrature-based features for kernel approximation", NeurIPS 2018
# source: https://github.com/maremun/quffka commit {commit}, file paper_figures/data/All_KA (the per-run errors behind their kernel-approximation figure)
# extracted: python -m rffbench.published.quffka All_KA --commit {commit} (numpy arrays read by rffbench.published.safe.load_arrays: nothing in the pickle is run)
# quantity: relative Frobenius error ||K - K_hat||_F / ||K||_F of K(X, Y), X and Y two independent samples of `samples` rows of the dataset's `first_rows` rows scaled by x / x.max(), drawn once per dataset; the Gaussian kernel with gamma = 1/d, the arc-cosine kernels of order 0 and 1; n_freq = 2 n (d + 1) frequency vectors (Gaussian: [cos, sin] of each, 2 n_freq outputs)
# columns: mean, sd (ddof 1) and median over the runs; distinct = distinct values among the runs (QMC repeats: ghalton's permutations are seeded by the clock in seconds)
"""


def extract(path):
    """DataFrame of every stored point: dataset, d, first_rows, samples, kernel, method, n,
    n_freq, runs, distinct, mean, sd, median."""
    import pandas as pd

    data = load_arrays(path)
    rows = []

    def level(obj, where, what, known=None):
        return walk(obj, where, what, known, whose=": not quffka's All_KA")

    for ds, kernels in level(data, "the top level", "dataset", DATASETS):
        name, d, first, samples = DATASETS[ds]
        for kname, methods in level(kernels, ds, "kernel", KERNELS):
            for method, arr in level(methods, f"{ds}/{kname}", "method"):
                if not isinstance(arr, (np.ndarray, list, tuple)):
                    raise ExtractError(f"{ds}/{kname}/{method} is a "
                                       f"{type(arr).__name__}, not an array")
                try:
                    arr = np.asarray(arr, dtype=np.float64)
                except (TypeError, ValueError) as exc:
                    raise ExtractError(f"{ds}/{kname}/{method}: not an array of "
                                       f"numbers ({exc})") from None
                if arr.ndim != 2 or arr.shape[0] != len(N_VALUES) or arr.shape[1] < 2:
                    raise ExtractError(f"{ds}/{kname}/{method}: shape {arr.shape}, "
                                       f"expected ({len(N_VALUES)}, runs >= 2)")
                if not np.all(np.isfinite(arr)):
                    raise ExtractError(f"{ds}/{kname}/{method}: values that are not "
                                       "finite numbers")
                for i, n in enumerate(N_VALUES):
                    v = arr[i]
                    rows.append(dict(dataset=name, d=d, first_rows=first, samples=samples,
                                     kernel=KERNELS[kname], method=method,
                                     n=n, n_freq=2 * n * (d + 1), **summary(v)))
    return pd.DataFrame(rows).sort_values(["dataset", "kernel", "method", "n"],
                                          ignore_index=True)



def main(argv=None):
    prog = "python -m rffbench.published.quffka"
    ap = argparse.ArgumentParser(prog=prog,
                                 description="All_KA (quffka's stored errors) -> CSV on stdout")
    ap.add_argument("path")
    ap.add_argument("--commit", required=True, type=commit_hash,
                    help="the quffka commit the file comes from")
    args = ap.parse_args(argv)
    return finish(prog, lambda: extract(args.path), HEADER.format(commit=args.commit),
                  where=f"{args.path}: ")


if __name__ == "__main__":
    sys.exit(main())
