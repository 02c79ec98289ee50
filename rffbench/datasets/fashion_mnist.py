"""Fashion-MNIST from Debian's dataset-fashion-mnist package.
"""
from __future__ import annotations

import os

import numpy as np

from ..checks import Key
from ..errors import DataError
from .base import DatasetLoader

FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"
FASHION_MNIST_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                       "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


def _read_idx(path):
    """An IDX file (gzip): big-endian magic (0, 0, dtype 0x08 = ubyte, ndim), dims, data."""
    import gzip

    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise DataError(f"{path}: not an IDX ubyte file")
    ndim = raw[3]
    dims = np.frombuffer(raw, dtype=">u4", count=ndim, offset=4).astype(np.int64)
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise DataError(f"{path}: {data.size} values for shape {tuple(dims)}")
    return data.reshape(tuple(dims))


class FashionMNIST(DatasetLoader):
    """Fashion-MNIST (Xiao et al. 2017), 70,000 28x28 grey images, 10 classes, from
    Debian's dataset-fashion-mnist files; pixels scaled to [0, 1].  The official
    60k/10k split is pooled: the split is the seeded one of every dataset."""

    KEYS = {"path": Key(None, None, "the folder of the four idx files (null = Debian's "
                                     + FASHION_MNIST_DIR + ")")}

    def shape(self, cfg):
        return (70000, 784)

    def load(self, cfg, seed):
        return _fashion_mnist(cfg)


def _fashion_mnist(cfg):
    folder = os.path.expanduser(cfg.path or FASHION_MNIST_DIR)
    missing = [f for f in FASHION_MNIST_FILES if not os.path.isfile(os.path.join(folder, f))]
    if missing:
        raise DataError(f"dataset=fashion_mnist: {', '.join(missing)} not found in {folder}; "
                        "install them with `sudo apt-get install dataset-fashion-mnist` or set "
                        "dataset.path=<folder with the IDX .gz files>")
    Xs, ys = [], []
    for img, lab in (FASHION_MNIST_FILES[:2], FASHION_MNIST_FILES[2:]):
        X = _read_idx(os.path.join(folder, img))
        y = _read_idx(os.path.join(folder, lab))
        if X.ndim != 3 or y.ndim != 1 or X.shape[0] != y.shape[0]:
            raise DataError(f"dataset=fashion_mnist: {img} / {lab} shapes {X.shape} / {y.shape} "
                            "do not match")
        Xs.append(X.reshape(X.shape[0], -1))
        ys.append(y)
    X = np.concatenate(Xs).astype(np.float64) / 255.0
    info = dict(task="classification", licence="MIT (Zalando Research)",
                source=f"Fashion-MNIST (Xiao, Rasul, Vollgraf 2017), {folder}")
    return X, np.concatenate(ys).astype(np.int64), info


#: the sources this module registers (rffbench.datasets.builtin collects them)
SOURCES = {"fashion_mnist": FashionMNIST()}
