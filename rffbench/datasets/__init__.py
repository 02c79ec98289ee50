"""``DATASETS``: synthetic ball data, scikit-learn's bundled real data, user files.

Every loader returns raw ``(X, y, info)``; :func:`load_dataset` then checks the
values (finite, non-empty, consistent shapes), subsamples to ``n_max`` rows,
splits train/test (``dataset.split``: with the seed, stratified for
classification, or in the file's order), scales (``dataset.scale``: z-scores
with training statistics, division by the training rows' largest |value| or largest
value, or none) and casts to the run's dtype.  Nothing here touches the network.

``DATASETS`` is a :class:`~rffbench.registry.Registry` of :class:`DatasetLoader`
objects: each loads ``(cfg, seed) -> (X, y, info)`` (``info`` holds ``task``,
regression | classification, ``source`` and ``licence``) and says, before it
loads, how much memory loading takes (:meth:`DatasetLoader.plan`, from the
shape it declares).  Plug-ins add datasets through the entry-point group
``rffbench.datasets`` or an import path: a DatasetLoader (class or instance) or
a plain function ``(cfg, seed) -> (X, y, info)``, whose memory is then not
planned.

One module per kind of source (:mod:`.synthetic`, :mod:`.bundled`, :mod:`.files`,
:mod:`.fashion_mnist`, :mod:`.mlbench`, :mod:`.shipped`: files in the package,
:mod:`.fetched`: files fetched once by ``python -m rffbench.datasets fetch NAME``, both
checked before use), what they share (:mod:`.base`), the registry
(:mod:`.builtin`) and the preparation every dataset goes through (:mod:`.prepare`); the
names below are what the rest of rffbench uses.
"""
from .base import (
           LOAD_COPIES,
           MAX_GUESSED_CLASSES,
           SYNTHETIC_CHUNK,
           TASKS,
           Dataset,
           DatasetLoader,
           FunctionLoader,
           as_loader,
           loader_check,
)
from .builtin import DATASETS, UCI
from .bundled import SklearnDataset
from .fashion_mnist import FASHION_MNIST_DIR, FASHION_MNIST_FILES, FashionMNIST
from .files import FILE_FORMATS, UserFile, data_file
from .mlbench import MLBENCH_DIRS, MLBENCH_INSTALL, MLBENCH_LICENCE, MLBench
from .prepare import (
           MAX_ABS_VALUE,
           MIN_ABS_VALUE,
           data_plan,
           load_dataset,
           scale_by_max,
           standardize,
)
from .synthetic import Synthetic, synthetic_blocks, write_synthetic_npy

__all__ = ["DATASETS", "TASKS", "Dataset", "DatasetLoader", "FunctionLoader", "FILE_FORMATS",
           "FASHION_MNIST_DIR", "FASHION_MNIST_FILES", "LOAD_COPIES", "MAX_ABS_VALUE",
           "MAX_GUESSED_CLASSES", "MIN_ABS_VALUE", "MLBENCH_DIRS", "MLBENCH_INSTALL",
           "MLBENCH_LICENCE", "SYNTHETIC_CHUNK", "UCI", "as_loader", "data_file", "data_plan",
           "load_dataset", "loader_check", "scale_by_max", "standardize", "synthetic_blocks",
           "write_synthetic_npy", "FashionMNIST", "MLBench", "SklearnDataset", "Synthetic",
           "UserFile"]
