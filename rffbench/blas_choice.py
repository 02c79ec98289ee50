"""Which BLAS runs rffbench's matrix products: the process's choice, read once.

rffbench's GEMMs (the fused feature maps' row blocks, the Grams' tiles, the exact kernel
products, the limits' peak rate, the maps' and Grams' whole-matrix products) run on the
BLAS named by the environment variable ``RFFBENCH_BLAS`` when the process starts:

* ``default`` (or unset): the BLAS that numpy and scipy ship (OpenBLAS in their wheels):
  numba's compiled products call scipy's, the whole-matrix products numpy's;
* ``mkl``: Intel's oneMKL, from the ``mkl`` package (``pip install mkl``: its
  ``libmkl_rt`` in the environment's ``lib`` folder), for every one of those products.

The choice is per process because compiled code is linked to its BLAS when it is first
loaded (``rffbench._numba.blas``); the speed measurement's worker processes take theirs
from ``measure.speed.blas``, so one command can time both side by side.  LAPACK (the
Cholesky factorisations and solves) and the ridge's ``syrk`` stay scipy's in every case.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys

from .errors import RffbenchError

#: the environment variable read once per process
ENV = "RFFBENCH_BLAS"
#: the BLAS libraries rffbench's products can run on
CHOICES = ("default", "mkl")
#: the runtime library's file names of the ``mkl`` package, newest first
MKL_NAMES = ("libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so", "libmkl_rt.dylib",
             "mkl_rt.3.dll", "mkl_rt.2.dll")


def requested(environ=None):
    """The choice ``RFFBENCH_BLAS`` asks for (``default`` when unset or empty);
    RffbenchError naming the value and the choices otherwise."""
    value = (os.environ if environ is None else environ).get(ENV, "").strip().lower()
    value = value or "default"
    if value not in CHOICES:
        raise RffbenchError(f"{ENV}={value!r} is not allowed: use one of {', '.join(CHOICES)}")
    return value


def mkl_path(prefixes=None):
    """The path of oneMKL's runtime library in this environment (its ``lib`` folder,
    where the ``mkl`` package puts it, then the system's search), or None."""
    prefixes = [sys.prefix, sys.base_prefix] if prefixes is None else prefixes
    for prefix in prefixes:
        for folder in ("lib", "Library/bin"):
            for name in MKL_NAMES:
                hits = glob.glob(os.path.join(prefix, folder, name))
                if hits:
                    return hits[0]
    found = ctypes.util.find_library("mkl_rt")
    return found or None


def checked(environ=None):
    """The choice ``RFFBENCH_BLAS`` asks for, when it can run here; RffbenchError (one
    line naming the variable, its value and what is allowed) otherwise: the one check of
    the command's start (rffbench.entry) and of the compiled code's link."""
    choice = requested(environ)
    why = missing(choice)
    if why:
        raise RffbenchError(f"{ENV}={choice} is not allowed: {why}")
    return choice


def missing(choice, prefixes=None):
    """Why ``choice`` cannot run in this environment (one line), or None when it can."""
    if choice == "mkl" and mkl_path(prefixes) is None:
        return ("oneMKL's runtime library (libmkl_rt) is not installed in this environment: "
                "`pip install mkl` (x86-64), or use default")
    return None


def load_mkl(path=None):
    """oneMKL's runtime library, loaded for the whole process (``ctypes.CDLL``), and its
    version text, e.g. ``2026.2``."""
    lib = ctypes.CDLL(path or mkl_path(), mode=ctypes.RTLD_GLOBAL)
    buf = ctypes.create_string_buffer(256)
    lib.mkl_get_version_string(buf, len(buf))
    text = buf.value.decode(errors="replace")
    version = next((w for w in text.split() if w[:1].isdigit()), "unknown")
    return lib, version.split("-")[0]
