"""``DATASETS``: the registry of datasets, rffbench's and the plug-ins'.

The built-in sources are collected from each source module's ``SOURCES`` (name -> loader),
as the maps from their modules' ``MAPS``: a new source in one of these modules is its
loader and its ``SOURCES`` entry; a new module, one entry in ``MODULES``.
"""
from __future__ import annotations

from ..registry import Registry
from . import bundled, fashion_mnist, fetched, files, mlbench, shipped, synthetic
from .base import loader_check
from .bundled import UCI

#: the modules of rffbench's dataset sources, each listing its sources in ``SOURCES``
MODULES = (synthetic, bundled, shipped, fashion_mnist, mlbench, fetched, files)

DATASETS = Registry("rffbench.datasets", "dataset",
                    {name: loader for module in MODULES
                     for name, loader in module.SOURCES.items()}, loader_check)

__all__ = ["DATASETS", "MODULES", "UCI"]
