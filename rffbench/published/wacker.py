"""Extract the per-seed Gaussian-kernel errors that Wacker, Kanagawa & Filippone stored for
their random-feature comparison into ``wacker2022.csv``.

Their repository (github.com/joneswack/dp-rfs, Apache-2.0) keeps
``csv/gaussian_approx/<Dataset>_d<d_pad>_n<N>.csv``: one row per (seed, D, configuration)
of ``run_rf_gp_experiments.py`` with ``config/rf_parameters/gaussian.json``.  What the
rows hold, read from that script and ``random_features/``:

* 10 seeds; each draws its own 90/10 split of the pooled data (Fashion-MNIST: the official
  60,000/10,000 split), z-scores both parts with the training part's mean and standard
  deviation, takes the lengthscale as the median of the Euclidean distances among 5,000
  random training rows (the zero diagonal included) and draws the map once;
* ``k_rel_frob_error`` = ||K - K_hat||_F / ||K||_F on up to 5,000 random test rows;
* inputs zero-padded to d_pad = 2^ceil(log2 d) columns; D = d_pad x {1, ..., 5} outputs.
  ``method=rff, proj=gaussian``: [cos, sin] of D/2 i.i.d. Gaussian frequencies
  (``comp=1``: D complex features exp(i w.x), D frequencies, of which the error takes the
  real part: [cos, sin] of D frequencies); ``proj=srht``: the frequencies of SORF, blocks
  of d_pad rows sqrt(d_pad) H D1 H D2 H D3 (H normalised), the last block cut to its first
  rows (not shuffled).

Only the four ``rff`` configurations are extracted: rffbench has their maps
(``rff_pairs``, ``sorf``).  The other ten (``poly_sketch`` and ``maclaurin`` with
Rademacher, SRHT or CountSketch projections, real or complex) approximate the Gaussian
kernel as exp(-|x|^2/2) exp(-|y|^2/2) times a sketch of the Taylor series of exp(x.y), their
``maclaurin`` with a degree distribution optimised on each seed's data: rffbench has no such
map.  Their CSVs are plain data, read with pandas (a ``.csv.gz`` copy too)::

    python -m rffbench.published.wacker csv/gaussian_approx --commit SHA \\
        > rffbench/published/wacker2022.csv
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..readers import numbers, regular_file
from .extract import ExtractError, commit_hash, finish, summary

#: their file stem -> (rffbench dataset, d, d_pad, rows, split, test fraction, test rows
#: the error is measured on)
DATASETS = {
    "Letter_d16_n20000": ("letter", 16, 16, 20000, "random", 0.1, 2000),
    "Magic_d16_n19020": ("magic", 10, 16, 19020, "random", 0.1, 1902),
    "Powerplant_d4_n9568": ("powerplant", 4, 4, 9568, "random", 0.1, 957),
    "FashionMNIST_d1024_n70000": ("fashion_mnist", 784, 1024, 70000, "ordered", 1 / 7, 5000),
}
#: (proj, comp) of their method=rff rows -> the method's name here and D per frequency vector
CONFIGS = {("gaussian", 0): ("rff_gaussian", 2), ("gaussian", 1): ("rff_gaussian_complex", 1),
           ("srht", 0): ("rff_srht", 2), ("srht", 1): ("rff_srht_complex", 1)}
SEEDS = tuple(range(10))
MULTIPLES = (1, 2, 3, 4, 5)
COLUMNS = ("dataset", "method", "proj", "comp", "D", "seed", "k_rel_frob_error", "kernel_len")
#: the columns that hold numbers
NUMERIC = ("D", "seed", "k_rel_frob_error", "kernel_len")

HEADER = """\
# paper: Wacker, Kanagawa & Filippone, "Improved Random Features for Dot Product Kernels", arXiv:2201.08712 (2022), the Gaussian-kernel comparison; code and data Apache-2.0
# source: https://github.com/joneswack/dp-rfs commit {commit}, files csv/gaussian_approx/<Dataset>_d<d_pad>_n<N>.csv (rows method=rff; per seed)
# extracted: python -m rffbench.published.wacker csv/gaussian_approx --commit {commit}
# quantity: rel_fro_error = ||K - K_hat||_F / ||K||_F of the Gaussian kernel on `test_rows` random test rows; each seed its own split (`split`, `test_size`), z-scored with the training part's statistics, lengthscale = median distance among 5,000 training rows (`lengthscale`: its mean over the seeds), one draw of the map; inputs zero-padded to d_pad; D outputs: real = [cos, sin] of D/2 frequencies, complex = D frequencies (the real part of the complex estimate); gaussian = i.i.d. frequencies, srht = SORF blocks
# columns: mean, sd (ddof 1) and median over the seeds; distinct = distinct values; values = the 10 seeds' errors in seed order
"""


def extract(folder):
    """DataFrame of every stored point: dataset, d, d_pad, split, test_size, test_rows,
    kernel, method, D, n_freq, lengthscale, runs, distinct, mean, sd, median, values."""
    import pandas as pd

    rows = []
    for stem, (name, d, d_pad, n, split, test_size, test_rows) in DATASETS.items():
        path = next((p for p in (Path(folder) / f"{stem}.csv", Path(folder) / f"{stem}.csv.gz")
                     if p.is_file()), Path(folder) / f"{stem}.csv")
        try:
            df = pd.read_csv(regular_file(path))  # missing: OSError, finish() names it
        except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
            raise ExtractError(f"{path}: not a readable CSV ({exc})") from None
        missing = [c for c in COLUMNS if c not in df.columns]
        if missing:
            raise ExtractError(f"{path}: no column {missing[0]!r}: not dp-rfs's "
                               "gaussian_approx table")
        for col in NUMERIC:  # a word where a number belongs: the file, column and row
            num, i = numbers(df[col])
            if i is not None:
                raise ExtractError(f"{path}: column {col!r}, row {i + 2} of the file: "
                                   f"{df[col].iloc[i]!r} is not a number")
            df[col] = num
        df = df[df.method == "rff"]
        for (proj, comp), (method, per_freq) in CONFIGS.items():
            cfg = df[(df.proj == proj) & (df.comp == comp)]
            for k in MULTIPLES:
                D = k * d_pad
                at = f"{path}: method=rff proj={proj} comp={comp} D={D}"
                got = cfg[cfg.D == D].sort_values("seed")
                if tuple(got.seed) != SEEDS:
                    seeds = ", ".join(f"{x:g}" for x in sorted(got.seed.tolist()))
                    raise ExtractError(f"{at}: seeds [{seeds}], expected "
                                       f"0..{len(SEEDS) - 1} once each")
                v = got.k_rel_frob_error.to_numpy(np.float64)
                if not np.all(np.isfinite(v)) or not np.all(v > 0):
                    raise ExtractError(f"{at}: errors that are not positive finite numbers")
                if set(got.dataset) != {stem.split("_d")[0]}:
                    raise ExtractError(f"{at}: dataset column {sorted(set(got.dataset))}")
                rows.append(dict(dataset=name, d=d, d_pad=d_pad, split=split,
                                 test_size=round(test_size, 10), test_rows=test_rows,
                                 kernel="gaussian", method=method, D=D, n_freq=D // per_freq,
                                 lengthscale=float(got.kernel_len.mean()), **summary(v),
                                 values=";".join(f"{x:.8g}" for x in v)))
    return pd.DataFrame(rows).sort_values(["dataset", "method", "D"], ignore_index=True)


def main(argv=None):
    prog = "python -m rffbench.published.wacker"
    ap = argparse.ArgumentParser(prog=prog, description="dp-rfs's csv/gaussian_approx tables "
                                                        "-> CSV on stdout")
    ap.add_argument("folder", help="their csv/gaussian_approx")
    ap.add_argument("--commit", required=True, type=commit_hash,
                    help="the dp-rfs commit the files come from")
    args = ap.parse_args(argv)
    return finish(prog, lambda: extract(args.folder), HEADER.format(commit=args.commit),
                  kind="CSV")


if __name__ == "__main__":
    sys.exit(main())
