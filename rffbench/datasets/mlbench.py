"""R mlbench's classic benchmarks (letter, satellite, shuttle, dna) from Debian's
r-cran-mlbench, read without R.
"""
from __future__ import annotations

import functools
import os

import numpy as np

from ..checks import Key
from ..errors import DataError
from .base import DatasetLoader

#: folders searched for mlbench's .rda files (dataset.path overrides): an extracted copy
#: (docs/quickstart.md: apt-get download r-cran-mlbench, no R needed), then R's site libraries
MLBENCH_DIRS = ("~/.local/share/rffbench/mlbench", "/usr/lib/R/site-library/mlbench/data",
                "/usr/local/lib/R/site-library/mlbench/data")
MLBENCH_INSTALL = ("apt-get download r-cran-mlbench && dpkg-deb -x r-cran-mlbench_*.deb "
                   "/tmp/mlbench && mkdir -p ~/.local/share/rffbench && cp -r "
                   "/tmp/mlbench/usr/lib/R/site-library/mlbench/data "
                   "~/.local/share/rffbench/mlbench")
MLBENCH_LICENCE = ("UCI Machine Learning Repository, CC BY 4.0; as distributed in Debian's "
                   "r-cran-mlbench (GPL-2)")


def _mlbench_dir(cfg, file):
    dirs = [cfg.path] if cfg.path else list(MLBENCH_DIRS)
    env = os.environ.get("RFFBENCH_MLBENCH_DIR")
    if env and not cfg.path:
        dirs.insert(0, env)
    for d in dirs:
        d = os.path.expanduser(d)
        if os.path.isfile(os.path.join(d, file)):
            return d
    raise DataError(f"dataset={cfg.name}: {file} not found in {', '.join(dirs)}; get mlbench's "
                    f"data files (no R needed): `{MLBENCH_INSTALL}`, or `sudo apt-get install "
                    "r-cran-mlbench`, or set dataset.path=<folder with the .rda files>")


@functools.lru_cache(maxsize=4)
def _read_mlbench(name, path, mtime, target):
    """(X, y) of an mlbench .rda file; cached per process (a sweep's runs read it once)."""
    import warnings

    import rdata

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "Unknown encoding"
            frames = rdata.read_rda(path)
    except Exception as exc:
        raise DataError(f"dataset={name}: cannot read {path}: {type(exc).__name__}: "
                        f"{exc}") from None
    import pandas as pd

    df = next(iter(frames.values()), None)
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"dataset={name}: {path} holds no data frame (found "
                        f"{type(df).__name__}): not mlbench's file")
    if target not in df.columns:
        raise DataError(f"dataset={name}: {path} has no column {target!r}")
    feats = df.drop(columns=[target])
    X = np.column_stack([np.asarray(feats[c].astype(str).astype(np.float64))
                         if feats[c].dtype.name == "category" else
                         np.asarray(feats[c], dtype=np.float64) for c in feats.columns])
    return X, np.asarray(df[target].cat.codes, dtype=np.int64)


class MLBench(DatasetLoader):
    """One data frame of R's mlbench package (an .rda file read by the ``rdata``
    package): every column but ``target`` is a feature (factors of numbers, as DNA's 0/1
    indicators, become numbers), ``target`` the class."""

    KEYS = {"path": Key(None, None, "the folder of mlbench's .rda files (null = "
                                     "RFFBENCH_MLBENCH_DIR, then " + ", ".join(MLBENCH_DIRS) + ")")}

    def __init__(self, file, target, about, shape):
        self.file, self.target, self.about, self._shape = file, target, about, shape
        self.__doc__ = f"{about} (classification)"

    def shape(self, cfg):
        return self._shape

    def load(self, cfg, seed):
        folder = _mlbench_dir(cfg, self.file)
        path = os.path.join(folder, self.file)
        X, y = _read_mlbench(cfg.name, path, os.path.getmtime(path), self.target)
        return X.copy(), y.copy(), dict(task="classification", licence=MLBENCH_LICENCE,
                                        source=f"{self.about} (R mlbench, {path})")


#: the sources this module registers (rffbench.datasets.builtin collects them)
SOURCES = {
    "letter": MLBench("LetterRecognition.rda", "lettr",
                      "Letter recognition (Slate 1991): 20,000 x 16 glyph features, 26 classes",
                      (20000, 16)),
    "satellite": MLBench("Satellite.rda", "classes",
                         "Statlog Landsat satellite: 6,435 x 36 multi-spectral pixels, 6 classes",
                         (6435, 36)),
    "shuttle": MLBench("Shuttle.rda", "Class",
                       "Statlog shuttle: 58,000 x 9 sensor values, 7 classes (80% class 1)",
                       (58000, 9)),
    "dna": MLBench("DNA.rda", "Class",
                   "Statlog DNA splice junctions: 3,186 x 180 binary indicators, 3 classes",
                   (3186, 180)),
}
