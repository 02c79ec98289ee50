"""What a dataset is: the loaded :class:`Dataset` and the :class:`DatasetLoader` interface
(rffbench's loaders and the plug-ins'), and the constants the loaders share.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..memory import Need, Plan

#: what a dataset's targets are
TASKS = ("regression", "classification")


#: rows generated per chunk by the synthetic loader (fixed: results must not
#: depend on it, since each chunk has its own seeded stream)
SYNTHETIC_CHUNK = 65536
#: a file target with at most this many distinct integer values is a class label
MAX_GUESSED_CLASSES = 50


@dataclass
class Dataset:
    name: str
    task: str  # "regression" | "classification"
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    source: str
    licence: str
    #: true diameter of the support when known (synthetic ball: 2 r)
    diameter: Optional[float] = None
    notes: list = field(default_factory=list)
    #: streamed data (rffbench.stream): per-column (min, max) of the training rows as
    #: the run sees them (standardised), so that checks need not read the file again
    col_range: Optional[tuple] = None

    @property
    def streamed(self):
        return self.col_range is not None

    @property
    def d(self):
        return self.X_train.shape[1]

    @property
    def n_classes(self):
        return int(self.y_train.max()) + 1 if self.task == "classification" else 0


# --------------------------------------------------------------------------
# loaders: cfg -> (X, y, info)
# --------------------------------------------------------------------------
#: peak bytes of loading per float64 value: the array, the split copies, the
#: standardised copies (and a cast)
LOAD_COPIES = 3.5


class DatasetLoader:
    """A dataset of the registry (module docs).  The docstring's first sentence is its
    line in ``--help``; subclasses implement :meth:`load` and declare :meth:`shape`."""

    #: the keys of the dataset block it reads beyond those every dataset has (name, n_max,
    #: test_size, split, scale): ``{key: rffbench.checks.Key(default, constraint, text)}``.
    #: A built-in source's keys become the dataset block's (rffbench.config generates them,
    #: as the kernel block from the kernels); the keys a source does not read are refused
    #: when set, as having no effect.  A plug-in may list names of the block's keys it
    #: reads; None: not declared (a plug-in function): none is refused
    KEYS = None

    def check_config(self, cfg):
        """Refuse, in one line naming the key, a dataset block this source cannot load
        (after every key's own constraint passed); nothing by default."""

    def load(self, cfg, seed):
        """Raw ``(X, y, info)`` (checked, split and scaled by :func:`load_dataset`)."""
        raise NotImplementedError

    def shape(self, cfg):
        """(rows, columns) it loads, known before loading, or None."""
        return None

    def plan(self, cfg):
        """The memory plan of loading (:class:`rffbench.memory.Plan`): from :meth:`shape`
        (the array, its split and scaled copies); empty when the shape is unknown."""
        plan = Plan()
        shape = self.shape(cfg)
        if shape is not None:
            n, d = shape
            plan.add("load", [Need(f"loading dataset={cfg.name} ({n} x {d})",
                                   lambda v: LOAD_COPIES * 8.0 * n * d)])
        return plan

    def __call__(self, cfg, seed):
        return self.load(cfg, seed)


class FunctionLoader(DatasetLoader):
    """A plug-in's function ``(cfg, seed) -> (X, y, info)`` as a loader (shape unknown)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def load(self, cfg, seed):
        return self.fn(cfg, seed)


def as_loader(obj):
    """A registry entry as a :class:`DatasetLoader` instance (a class is instantiated, a
    function wrapped)."""
    if isinstance(obj, type) and issubclass(obj, DatasetLoader):
        return obj()
    return obj if isinstance(obj, DatasetLoader) else FunctionLoader(obj)


def loader_check(name, obj):
    """The registry's check of a plug-in dataset: a DatasetLoader or a function."""
    from ..errors import ConfigError
    from ..registry import unimplemented

    cls = obj if isinstance(obj, type) else type(obj)
    if isinstance(obj, type) and not issubclass(obj, DatasetLoader) or not callable(obj):
        raise ConfigError(f"{name!r} is not a dataset: it must be a "
                          "rffbench.datasets.DatasetLoader (class or instance) or a function "
                          f"(cfg, seed) -> (X, y, info) (got {obj!r})")
    if issubclass(cls, DatasetLoader) and unimplemented(cls, DatasetLoader, [("load",)]) \
            and not isinstance(obj, FunctionLoader):
        raise ConfigError(f"{name!r} is not a usable dataset: {cls.__qualname__} does not "
                          "implement load (it leaves it to DatasetLoader)")


