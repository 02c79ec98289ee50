"""Every figure and table of the report, found by module as the measurements are.

A built-in measurement ``NAME`` (``rffbench/measure/NAME.py``) has its figures and
tables in ``rffbench/report/NAME.py`` (``FIGURES``: Figure specs, ``TABLES``: functions
of (records, origins) returning a Table, a list of them or None); a measurement without
such a module has none.  A plug-in measurement's come from its class's hooks
(:meth:`rffbench.measure.Measurement.figures` and ``tables``).  The figures across
measurements (``across``: the maps side by side) follow the measurements' own.
"""
from __future__ import annotations

import importlib

from . import across

#: figures that compare measurements (each measurement's own come from its module)
CROSS_FIGURES = {f.name: f for f in across.FIGURES}


def spec_module(name):
    """``rffbench.report.NAME`` of built-in measurement ``name``, or None (a plug-in's
    or one without figures and tables)."""
    from ..measure import MEASUREMENTS

    if name not in MEASUREMENTS.builtins():
        return None
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.{name}":
            raise
        return None


def all_figures():
    """{name: figure} of every figure: each registered measurement's (its report module,
    or a plug-in's ``figures()``, in the registry's order), then the figures across
    measurements.  A figure is called with the FigContext."""
    from ..measure import measurement_classes

    out = {}
    for name, cls in measurement_classes().items():
        module = spec_module(name)
        out.update({f.name: f for f in module.FIGURES} if module is not None
                   else cls().figures())
    out.update(CROSS_FIGURES)
    return out


def all_tables(df, origins):
    """Every registered measurement's tables of ``df`` (registry order)."""
    from ..measure import measurement_classes

    out = []
    for name, cls in measurement_classes().items():
        module = spec_module(name)
        if module is None:
            got = cls().tables(df, origins)
        else:
            got = []
            for make in module.TABLES:
                t = make(df, origins)
                got += t if isinstance(t, list) else [t]
        out += [t for t in got if t is not None]
    return out


__all__ = ["all_figures", "all_tables", "spec_module", "CROSS_FIGURES"]
