"""Datasets shipped inside the package as files (small, under licences that allow it),
each file checked against its SHA-256 before it is used: powerplant.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..store import file_digest
from .base import DatasetLoader

#: the folder of the shipped files, one sub-folder per dataset with its SOURCE.md
DATA_DIR = Path(__file__).resolve().parent / "data"


def checked_file(name, path, sha256, how_to_get):
    """``path`` if it exists and has the checksum ``sha256``, else one line naming the file,
    what is wrong and ``how_to_get`` it (a damaged copy is never used)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"dataset={name}: {path} not found; {how_to_get}")
    got = file_digest(path)
    if got != sha256:
        raise DataError(f"dataset={name}: {path} is damaged or not the expected file (sha256 "
                        f"{got[:12]}..., expected {sha256[:12]}...); {how_to_get}")
    return path


@functools.lru_cache(maxsize=4)
def _read_npy(path, mtime):
    try:
        return np.load(path, allow_pickle=False)
    except Exception as exc:
        raise DataError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None


class ShippedArrays(DatasetLoader):
    """Two .npy files in ``rffbench/datasets/data/<name>/`` (features, target), checked
    against their SHA-256 before they are read."""

    KEYS = {}

    def __init__(self, name, files, task, about, licence, shape):
        self.name, self.files, self.task, self.about = name, files, task, about
        self.licence, self._shape = licence, shape
        self.__doc__ = f"{about} ({task}; shipped with rffbench)"

    def shape(self, cfg):
        return self._shape

    def load(self, cfg, seed):
        folder = DATA_DIR / self.name
        how = (f"it ships with rffbench (see {folder / 'SOURCE.md'}): reinstall the package "
               "or restore the file from its git history")
        arrays = []
        for file, sha in self.files.items():
            path = checked_file(self.name, folder / file, sha, how)
            arrays.append(_read_npy(str(path), path.stat().st_mtime))
        X, y = arrays
        if X.shape != self._shape or y.shape != (self._shape[0],):
            raise DataError(f"dataset={self.name}: {folder} holds {X.shape} features and "
                            f"{y.shape} targets, expected {self._shape}")
        return np.array(X, dtype=np.float64), np.array(y), dict(
            task=self.task, licence=self.licence, source=f"{self.about} ({folder})")


#: the sources this module registers (rffbench.datasets.builtin collects them)
SOURCES = {
    "powerplant": ShippedArrays(
        "powerplant",
        {"data.npy": "96de308b375888867365ca82900f109cfef969f3325ad291897ab4f95364ac2b",
         "labels.npy": "48e6f5bb1bb442a17ddcf5ae00211f1ebd14626a380c36c054ae65ce3d1a1e7c"},
        "regression",
        "Combined cycle power plant (UCI CCPP; Tüfekci 2014): 9,568 x 4 hourly ambient "
        "readings z-scored as in quffka's copy, net electrical output (MW)",
        "UCI Machine Learning Repository, CC BY 4.0; quffka's copy, MIT", (9568, 4)),
}
