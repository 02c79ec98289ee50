"""``DATASETS``: the registry of datasets, rffbench's and the plug-ins'.
"""
from __future__ import annotations


from ..registry import Registry
from .base import loader_check
from .bundled import SklearnDataset
from .fashion_mnist import FashionMNIST
from .files import UserFile
from .mlbench import MLBench
from .synthetic import Synthetic


UCI = "UCI Machine Learning Repository (via scikit-learn), CC BY 4.0"
DATASETS = Registry("rffbench.datasets", "dataset", {
    "synthetic": Synthetic(),
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
    "fashion_mnist": FashionMNIST(),
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
    "file": UserFile(),
}, loader_check)


