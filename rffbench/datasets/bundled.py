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


UCI = "UCI Machine Learning Repository (via scikit-learn), CC BY 4.0"
#: the sources this module registers (rffbench.datasets.builtin collects them)
SOURCES = {
    "digits": SklearnDataset("load_digits", "classification",
                             "scikit-learn load_digits: 8x8 handwritten digits (UCI)", UCI,
                             (1797, 64)),
    "breast_cancer": SklearnDataset("load_breast_cancer", "classification",
                                    "scikit-learn load_breast_cancer: Wisconsin diagnostic (UCI)",
                                    UCI, (569, 30)),
    "wine": SklearnDataset("load_wine", "classification", "scikit-learn load_wine (UCI)", UCI,
                           (178, 13)),
    "diabetes": SklearnDataset("load_diabetes", "regression",
                               "scikit-learn load_diabetes (Efron et al. 2004)",
                               "distributed with scikit-learn, BSD-3-Clause", (442, 10)),
}
