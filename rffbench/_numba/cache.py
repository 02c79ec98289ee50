"""numba's on-disk cache, made fresh for the whole package at once.

numba keys the cached machine code of a function by the contents of the file that
defines it, and of that file only: a compiled function inlines the helpers it calls
from the other modules of this package (the BLAS call of ``blas.py`` inside the feature
maps' passes, the exp of ``elementwise.py`` inside every kernel's tiles), so a change to
a helper left every caller's cache in place, stale: after an update of an editable
install the old code kept running, with no sign of it.

Here every function of this package is keyed by the contents of *all* the package's
modules (:func:`package_stamp`): any change to any of them recompiles everything once.
The locators are numba's own (the folder given by ``NUMBA_CACHE_DIR``, else the
modules' ``__pycache__``, else the user-wide folder), each with the package-wide stamp
instead of the file's; functions outside this package keep numba's rule.  Imported
first by the package, before any function is decorated.
"""
from __future__ import annotations

import hashlib
import os

from numba.core import caching

#: this package's folder: the functions whose cache takes the package-wide stamp
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def package_stamp(folder=PACKAGE_DIR):
    """sha256 of the names and contents of every ``.py`` module in ``folder`` (sorted)."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.digest()


_STAMP = package_stamp()


def _in_package(py_file):
    return os.path.dirname(os.path.abspath(py_file)) == PACKAGE_DIR


def _package_locator(base):
    """``base`` (one of numba's locators backed by a source file) for this package's
    functions only, with the package-wide stamp."""

    class PackageLocator(base):
        @classmethod
        def from_function(cls, py_func, py_file):
            if not _in_package(py_file):
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return _STAMP

    PackageLocator.__name__ = PackageLocator.__qualname__ = "Package" + base.__name__
    return PackageLocator


def install():
    """Put the package's locators first in numba's list (once); returns them."""
    classes = caching.CacheImpl._locator_classes
    ours = [c for c in classes if getattr(c, "_rffbench_package", False)]
    if ours:
        return ours
    mixin = caching._SourceFileBackedLocatorMixin
    ours = [_package_locator(c) for c in classes if issubclass(c, mixin)]
    for c in ours:
        c._rffbench_package = True
    classes[:0] = ours
    return ours


LOCATORS = install()
