"""Measurements: ``MEASUREMENTS[name]`` is a :class:`Measurement` subclass (see
:mod:`rffbench.measure.base` for what one declares).

Built-ins are found in this package's modules (a new measurement is its module), in
the order a run calls them (the modules' names, alphabetical); then the plug-ins' (entry
points of ``rffbench.measurements``).  Each block ``measure.<name>`` of the config is the
class's ``Config``: :func:`measure_config_class` builds the schema from them.
"""
from __future__ import annotations

import functools
import importlib
import logging
import pkgutil
from dataclasses import field, make_dataclass

from ..errors import ConfigError
from ..registry import Registry, subclass_check
from .base import Measurement

log = logging.getLogger(__name__)


def _builtins():
    """The Measurement classes of this package's modules, by module name: a built-in
    measurement is its module (and its test), nothing else to register."""
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):  # __main__: the timing worker's command, not a module
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Measurement) and obj.name and \
                    obj.__module__ == module.__name__:
                found[obj.name] = obj
    return found


MEASUREMENTS = Registry("rffbench.measurements", "measure", _builtins(),
                        check=subclass_check(Measurement, "a measurement"))


@functools.lru_cache(maxsize=None)
def measurement_classes():
    """{name: class} of every built-in and installed measurement.  A plug-in that does
    not load, or whose class lacks a Config with ``enabled``, is left out with a
    warning naming it (the rest of rffbench keeps working)."""
    out = {}
    for name in MEASUREMENTS:
        try:
            cls = MEASUREMENTS[name]
        except ConfigError as exc:
            log.warning("measurement plug-in left out: %s", exc)
            continue
        if cls.name != name:
            log.warning("measurement plug-in left out: measure.%s: its class %s has name "
                        "%r (they must be the same)", name, cls.__qualname__, cls.name)
            continue
        fields = getattr(getattr(cls, "Config", None), "__dataclass_fields__", {})
        if "enabled" not in fields:
            log.warning("measurement plug-in left out: measure.%s: %s.Config must be a "
                        "dataclass with an 'enabled' field", name, cls.__qualname__)
            continue
        out[name] = cls
    return out


def refresh():
    """Forget what :func:`measurement_classes` found (plug-ins installed since; what is
    computed from it elsewhere is keyed by the classes it returns)."""
    measurement_classes.cache_clear()


def measure_config_class(module="rffbench.config"):
    """The dataclass of the config's ``measure`` block: one field per measurement
    (``module`` holds it as ``MeasureConfig``, so that it pickles)."""
    cls = make_dataclass("MeasureConfig", [
        (name, m.Config, field(default_factory=m.Config))
        for name, m in measurement_classes().items()])
    cls.__module__ = module
    return cls


__all__ = ["MEASUREMENTS", "Measurement", "measurement_classes", "measure_config_class",
           "refresh"]
