"""scikit-learn's bundled real data (digits, breast_cancer, wine, diabetes).
"""
from __future__ import annotations


import numpy as np

from .base import DatasetLoader


class SklearnDataset(DatasetLoader):
    """A dataset bundled with scikit-learn (``sklearn.datasets.<fn_name>``)."""

    KEYS = {}

    def __init__(self, fn_name, task, source, licence, shape):
        self.fn_name, self.task, self.source, self.licence = fn_name, task, source, licence
        self._shape = shape
        self.__doc__ = f"{source} ({task})"

    def load(self, cfg, seed):
        import sklearn.datasets as skd

        X, y = getattr(skd, self.fn_name)(return_X_y=True)
        return X.astype(np.float64), y, dict(task=self.task, source=self.source,
                                             licence=self.licence)

    def shape(self, cfg):
        return self._shape


