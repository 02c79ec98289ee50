"""Extract the floating-point baseline that Büchel et al. (Nature Machine Intelligence 2024)
stored per seed into ``buechel2024.csv``.

Their repository (github.com/IBM/kernel-approximation-using-analog-in-memory-computing)
keeps, per dataset, ``imka-ridge-regression/resources/hardware/<dataset>/fp_err.pkl`` and
``fp_acc.pkl``: dill pickles (``experiments/hardware/hardware_general.py``: ``save``) of
``{method: {kernel: {s: [one value per seed]}}}``, the inner levels defaultdicts of
lambdas.  What they hold, read from that script and ``hwkeap/``:

* methods ``rff``, ``orf``, ``sorf`` (``config_<dataset>.yml``: ``rf``; FAVOR+ is only in
  the attention experiment, not in these files); kernels ``rbf`` (gamma = 0.05,
  ``hwkeap/utils/misc.py``: ``init_kernel``) and ``arccos0``; s = 1..5 stands for
  ``int(2**s * d) - s`` frequency vectors (the RBF maps output [cos, sin] of each);
  seeds 0..9;
* ``fp_err``: ||K - K_hat||_F / ||K||_F on the first 1,000 rows of their test set (their
  validation and test halves joined), each split standardised with its own mean and
  standard deviation;
* ``fp_acc``: the test accuracy of a ridge classifier (alpha = 0.5, an intercept, targets
  0/1, predictions rounded after clipping to [0, 1]) trained on the features of their
  training set.

The files are read with :func:`rffbench.published.safe.load_numbers`: the lambdas are
never rebuilt, nothing of the file runs::

    python -m rffbench.published.buechel DIR --commit SHA > rffbench/published/buechel2024.csv

(DIR: their ``resources/hardware``; ``--datasets``: the ones rffbench has, letter, magic
and ijcnn1.)

The same repository replicates the protocol of Liu, Huang, Chen & Suykens's survey
("Random Features for Kernel Approximation: A Survey on Algorithms, Theory, and Beyond",
TPAMI 2021) on ijcnn1 (``experiments/replications/liu.py``, ``config_liu.yml``) and stores
its results as plain pickles ``experiments/hardware/resources/err.pkl`` and ``acc.pkl`` of
the same layout, with the kernels rbf (gamma 0.05), arccos0 and arccos1 and sizes
``2**s * d`` (d = 13: the pulse index as one column and the 12 others, each LIBSVM file
z-scored by its own statistics; trained on ijcnn1.tr, tested on ijcnn1.val + ijcnn1.t, the
error on the first 1,000 test rows, a float32 ridge classifier)::

    python -m rffbench.published.buechel DIR --replication liu --commit SHA \
        > rffbench/published/liu2021.csv

(DIR: their ``experiments/hardware/resources``.)  Their ``elp.pkl`` (the time of the map
and the product on 1,000 rows on their machine) is not extracted.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from ..errors import first_line
from .extract import ExtractError, commit_hash, finish, level, summary
from .papers import buechel_n_freq, liu_n_freq
from .safe import UnsafePickleError, load_numbers

#: their dataset names -> d (``config_<dataset>.yml``), and the rffbench name where
#: rffbench has the data
DIMS = {"letter": 16, "magic": 10, "eeg": 14, "skin": 3, "cod-rna": 8, "ijcnn1": 13}
HAVE = {"letter": "letter", "magic": "magic", "ijcnn1": "ijcnn1"}
KERNELS = {"rbf": "gaussian", "arccos0": "arccos0"}
LIU_KERNELS = {**KERNELS, "arccos1": "arccos1"}
METHODS = ("rff", "orf", "sorf")
S_VALUES = (1, 2, 3, 4, 5)
#: file stem -> the metric it holds
FILES = {"fp_err": "rel_fro_error", "fp_acc": "test_accuracy"}
LIU_FILES = {"err": "rel_fro_error", "acc": "test_accuracy"}

HEADER = """\
# paper: Büchel, Camposampiero, Vasilopoulos, Lammie, Le Gallo, Rahimi & Sebastian, "Kernel approximation using analogue in-memory computing", Nature Machine Intelligence 2024 (doi:10.1038/s42256-024-00943-2); code and data MIT-licensed
# source: https://github.com/IBM/kernel-approximation-using-analog-in-memory-computing commit {commit}, files imka-ridge-regression/resources/hardware/<dataset>/fp_err.pkl and fp_acc.pkl (the floating-point baseline of their Supplementary Figures 1-6, per seed)
# extracted: python -m rffbench.published.buechel resources/hardware --commit {commit} (dill pickles read by rffbench.published.safe.load_numbers: nothing in them is run)
# quantity: rel_fro_error = ||K - K_hat||_F / ||K||_F on the first 1,000 test rows; test_accuracy = binary ridge classifier (alpha 0.5) on the features; z-scored data (LETTER: its train and test files each by its own statistics; MAGIC: the whole file, then split at random into halves; ijcnn1: LIBSVM's files as 13 columns (the one-hot pulse index as one number, then the 12 others), each file by its own statistics, trained on ijcnn1.tr, tested on ijcnn1.val + ijcnn1.t); rbf = Gaussian kernel with gamma 0.05 (lengthscale sqrt(10)); n_freq = int(2^s d) - s frequency vectors (Gaussian: [cos, sin] of each); frequencies from a normal truncated at +-3 (rff), QR of a truncated normal scaled by chi_d (orf), three signed Hadamard blocks (sorf)
# columns: mean, sd (ddof 1) and median over the seeds' values; distinct = distinct values
"""


LIU_HEADER = """\
# paper: Liu, Huang, Chen & Suykens, "Random Features for Kernel Approximation: A Survey on Algorithms, Theory, and Beyond", IEEE TPAMI 2021 (doi:10.1109/TPAMI.2021.3097011): its ijcnn1 experiment as replicated by Büchel et al. (Nature Machine Intelligence 2024); code and data MIT-licensed
# source: https://github.com/IBM/kernel-approximation-using-analog-in-memory-computing commit {commit}, files imka-ridge-regression/experiments/hardware/resources/err.pkl and acc.pkl, written by imka-ridge-regression/experiments/replications/liu.py (config_liu.yml), per seed
# extracted: python -m rffbench.published.buechel experiments/hardware/resources --replication liu --commit {commit} (plain pickles read by rffbench.published.safe.load_numbers: nothing in them is run)
# quantity: rel_fro_error = ||K - K_hat||_F / ||K||_F on the first 1,000 test rows; test_accuracy = binary ridge classifier (alpha 0.5, float32) on the features; LIBSVM's ijcnn1 as 13 columns (the one-hot pulse index as one number, then the 12 others), each file z-scored by its own statistics, trained on ijcnn1.tr (35,000 rows), tested on ijcnn1.val + ijcnn1.t (106,691); rbf = Gaussian kernel with gamma 0.05 (lengthscale sqrt(10)); n_freq = 2^s d frequency vectors (Gaussian: [cos, sin] of each); frequencies from a normal truncated at +-3 (rff), QR of a truncated normal scaled by chi_d (orf), three signed Hadamard blocks (sorf)
# columns: mean, sd (ddof 1) and median over the seeds' values; distinct = distinct values
"""


def points(data, where, dataset, kernels_known=KERNELS, n_freq=buechel_n_freq):
    """Rows of one file's dict {method: {kernel: {s: [values]}}}: ``kernels_known`` (their
    name -> rffbench's), sizes ``n_freq(s, d)``."""
    d = DIMS[dataset]
    rows = []
    for method, kernels in level(data, where, "method", METHODS):
        for kernel, by_s in level(kernels, f"{where}/{method}", "kernel", kernels_known):
            for s, values in level(by_s, f"{where}/{method}/{kernel}", "s", S_VALUES):
                at = f"{where}/{method}/{kernel}/{s}"
                if not isinstance(values, list) or len(values) < 2 or not all(
                        isinstance(v, float) and math.isfinite(v) for v in values):
                    raise ExtractError(f"{at}: not a list of >= 2 finite numbers")
                v = np.asarray(values, dtype=np.float64)
                rows.append(dict(dataset=HAVE.get(dataset, dataset), d=d,
                                 kernel=kernels_known[kernel], method=method, s=s,
                                 n_freq=n_freq(s, d), **summary(v)))
    return rows


def _read(path):
    try:
        return load_numbers(path)
    except UnsafePickleError as exc:
        raise ExtractError(f"{path}: {first_line(exc)}") from None


def extract(folder, datasets=tuple(HAVE)):
    """DataFrame of every stored point of ``datasets`` under ``folder`` (their
    resources/hardware): dataset, d, kernel, method, s, n_freq, metric, runs, distinct,
    mean, sd, median."""
    rows = []
    for ds in datasets:
        for stem, metric in FILES.items():
            path = Path(folder) / ds / f"{stem}.pkl"
            rows += [dict(r, metric=metric) for r in points(_read(path), str(path), ds)]
    return _frame(rows)


def extract_liu(folder):
    """DataFrame of the Liu-survey replication's points under ``folder`` (their
    experiments/hardware/resources), the columns of :func:`extract`."""
    rows = []
    for stem, metric in LIU_FILES.items():
        path = Path(folder) / f"{stem}.pkl"
        rows += [dict(r, metric=metric) for r in points(_read(path), str(path), "ijcnn1",
                                                        LIU_KERNELS, liu_n_freq)]
    return _frame(rows)


def _frame(rows):
    import pandas as pd

    cols = ["dataset", "d", "kernel", "method", "s", "n_freq", "metric", "runs", "distinct",
            "mean", "sd", "median"]
    return pd.DataFrame(rows)[cols].sort_values(["dataset", "metric", "kernel", "method", "s"],
                                                ignore_index=True)


def _dataset(value):
    if value not in DIMS:
        raise argparse.ArgumentTypeError(f"--datasets={value!r}: use one of "
                                         f"{', '.join(DIMS)}")
    return value


def main(argv=None):
    prog = "python -m rffbench.published.buechel"
    ap = argparse.ArgumentParser(prog=prog, description="their fp_err.pkl / fp_acc.pkl -> CSV "
                                                        "on stdout")
    ap.add_argument("folder", help="their imka-ridge-regression/resources/hardware (with "
                                   "--replication liu: experiments/hardware/resources)")
    ap.add_argument("--commit", required=True, type=commit_hash,
                    help="the repository commit the files come from")
    ap.add_argument("--datasets", nargs="+", type=_dataset, default=None,
                    help="datasets to extract (default: the ones rffbench has: letter, magic, "
                         "ijcnn1)")
    ap.add_argument("--replication", choices=["liu"],
                    help="extract their replication of Liu et al.'s survey (err.pkl, acc.pkl) "
                         "instead")
    args = ap.parse_args(argv)
    if args.datasets is not None:
        twice = sorted({d for d in args.datasets if args.datasets.count(d) > 1})
        if twice:
            ap.error(f"--datasets: {twice[0]} given twice (each dataset's points would be "
                     "written twice)")
        if args.replication == "liu":
            ap.error("--datasets has no effect with --replication liu (its points are "
                     "ijcnn1's): leave it out")
    if args.replication == "liu":
        return finish(prog, lambda: extract_liu(args.folder), LIU_HEADER.format(
            commit=args.commit))
    return finish(prog, lambda: extract(args.folder, args.datasets or list(HAVE)),
                  HEADER.format(commit=args.commit))


if __name__ == "__main__":
    sys.exit(main())
