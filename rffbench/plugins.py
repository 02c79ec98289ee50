"""What a run checks of the plug-ins it uses (maps, kernels, datasets that are not
rffbench's own), so that a plug-in that misbehaves stops its run with one line naming
the plug-in (its distribution and entry point, or its import path), what was checked and
the key to change, instead of a traceback, a silent NaN or a wrong number.  The other runs
of a sweep go on (a failed run is recorded as failed).

- a **map**'s ``fit`` and ``transform`` run inside a checked subclass
  (:func:`checked_map_class`): an exception becomes one line; ``transform``'s output
  must be an array (or scipy.sparse matrix) of shape (rows of the input, D), in the
  input's float dtype, all finite (:func:`output_problem`, also what
  :func:`rffbench.testing.check_feature_map` reports).  Calls being timed
  (:data:`rffbench.clock.TIMED`) are not checked: their warm-up call on the same input
  is, so a plug-in's timings carry no cost of ours.
- a **kernel**'s Gram on a sample of the training rows (:func:`check_kernel`): shape,
  finite, symmetric, positive semidefinite, before any measurement.
- a **dataset** loader's result (:func:`load_with`): three values ``(X, y, info)``; its
  exceptions become one line (the shapes and values are then checked by
  :func:`rffbench.datasets.load_dataset` for every dataset, naming the plug-in).

rffbench's own entries are tested instead of checked at run time.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .clock import TIMED
from .errors import PluginError, RffbenchError, first_line

#: training rows on which a plug-in kernel's Gram is checked
KERNEL_CHECK_ROWS = 200


def output_problem(Z, n_rows, D, dtype):
    """What is wrong with a map's transform output ``Z`` for ``n_rows`` input rows of float
    ``dtype`` and output dimension ``D`` (None: nothing)."""
    if not (isinstance(Z, np.ndarray) or sp.issparse(Z)):
        return f"returned a {type(Z).__name__}, not a numpy array (or scipy.sparse matrix)"
    if Z.ndim != 2 or Z.shape != (n_rows, D):
        return (f"returned shape {Z.shape} for {n_rows} input rows; expected ({n_rows}, {D}) "
                "(one row per input row, one column per output feature)")
    if Z.dtype != np.dtype(dtype):
        return f"returned {Z.dtype} values for {np.dtype(dtype)} input (expected the input's dtype)"
    values = Z.data if sp.issparse(Z) else Z
    if values.dtype.kind not in "fc" or np.isfinite(values).all():  # ints are finite
        return None
    bad = ~np.isfinite(Z.toarray() if sp.issparse(Z) else Z)
    i, j = np.argwhere(bad)[0]
    return (f"returned {int(bad.sum())} NaN/inf value(s) (first at row {i}, column {j}) for "
            "finite input")


def output_dim(fmap):
    """A fitted map's output columns: ``_n_features_out`` (D = n_components, or what the
    map's fit found, e.g. random binning's occupied bins)."""
    return getattr(fmap, "_n_features_out", fmap.n_components)


def _float_dtype(X):
    dt = getattr(X, "dtype", np.dtype(np.float64))
    return dt if dt in (np.float32, np.float64) else np.dtype(np.float64)


class _Checked:
    """Mixin of :func:`checked_map_class`: ``fit`` and ``transform`` of the plug-in map,
    checked.  ``_plugin`` (the registry key) and ``_who`` (the plug-in's description)
    are set on the generated class."""

    def _fail(self, what):
        from .features import FeatureMap

        own = {k: v for k, v in self.get_params(deep=False).items()
               if k not in FeatureMap._get_param_names()}
        given = ", ".join(f"{k}={v!r}" for k, v in own.items())
        return PluginError(f"features.name={self._plugin!r} ({self._who}): {what}; "
                           + (f"check its parameters (features.params: {given}), " if own
                              else "") + "fix the plug-in or choose another features.name")

    def fit(self, X, y=None):
        try:
            out = super().fit(X, y)
        except RffbenchError:
            raise
        except (Exception, SystemExit) as exc:  # a plug-in's sys.exit too
            raise self._fail(f"fit raised {type(exc).__name__}: {first_line(exc)}") from None
        return self if out is None else out

    def transform(self, X, out=None):
        try:
            Z = super().transform(X) if out is None else super().transform(X, out=out)
        except RffbenchError:
            raise
        except (Exception, SystemExit) as exc:  # a plug-in's sys.exit too
            raise self._fail(f"transform raised {type(exc).__name__}: "
                             f"{first_line(exc)}") from None
        if not TIMED.get():
            problem = output_problem(Z, X.shape[0], output_dim(self), _float_dtype(X))
            if problem:
                raise self._fail(f"transform {problem}")
        return Z

    def __reduce__(self):  # pickles (Dask) as the plug-in's class, checked again there
        return (_rebuild, (self.__class__.__mro__[2], self._plugin, self._who,
                           self.__getstate__()))


_CLASSES = {}


def _checked(cls, key, who):
    if (cls, key) not in _CLASSES:
        _CLASSES[cls, key] = type(cls.__name__, (_Checked, cls),
                                  {"_plugin": key, "_who": who, "__module__": cls.__module__,
                                   "__doc__": cls.__doc__})
    return _CLASSES[cls, key]


def _rebuild(cls, key, who, state):
    obj = _checked(cls, key, who).__new__(_checked(cls, key, who))
    obj.__setstate__(state)
    return obj


def checked_map_class(name):
    """The map class a run uses for ``features.name``: rffbench's own as it is, a
    plug-in's inside the checks of :class:`_Checked`."""
    from .features import FEATURE_MAPS

    cls = FEATURE_MAPS.get_or_raise(name, "features.name")
    if name in FEATURE_MAPS.builtins():
        return cls
    return _checked(cls, name, FEATURE_MAPS.describe(name))


def check_kernel(name, kernel, X):
    """Raise PluginError unless a plug-in kernel's Gram on (up to KERNEL_CHECK_ROWS of)
    the rows X is an (m, m) finite, symmetric, positive semidefinite matrix.  The
    tolerances are rounding's: |K - K^T| <= 1e-9 max|K|, and the smallest eigenvalue
    >= -m 1e-10 lambda_max (a Gram's entries carry ~1e-12 relative error; its
    eigenvalues move by at most m times that)."""
    from .kernels import KERNELS

    if name in KERNELS.builtins():
        return
    who = KERNELS.describe(name)
    S = np.asarray(X[:KERNEL_CHECK_ROWS], dtype=np.float64)
    m = S.shape[0]

    def fail(what):
        return PluginError(f"kernel.name={name!r} ({who}): {what}; fix the plug-in or choose "
                           "another kernel.name")

    try:
        G = kernel.gram(S, S)
    except RffbenchError:
        raise
    except (Exception, SystemExit) as exc:  # a plug-in's sys.exit too
        raise fail(f"gram raised {type(exc).__name__}: {first_line(exc)}") from None
    G = G.toarray() if sp.issparse(G) else G
    if not isinstance(G, np.ndarray) or G.shape != (m, m):
        raise fail(f"gram(X, X) of {m} rows returned "
                   f"{getattr(G, 'shape', type(G).__name__)}; expected ({m}, {m})")
    G = np.asarray(G, dtype=np.float64)
    if not np.isfinite(G).all():
        raise fail(f"its Gram on {m} training rows has NaN/inf entries")
    top = float(np.max(np.abs(G))) if G.size else 0.0
    asym = float(np.max(np.abs(G - G.T))) if G.size else 0.0
    if asym > 1e-9 * max(top, 1e-300):
        raise fail(f"its Gram on {m} training rows is not symmetric (max |K - K^T| = "
                   f"{asym:.3g}, max |K| = {top:.3g}): a kernel has k(x, y) = k(y, x)")
    ev = np.linalg.eigvalsh((G + G.T) / 2)
    if ev[0] < -m * 1e-10 * max(ev[-1], 1e-300):
        raise fail(f"its Gram on {m} training rows is not positive semidefinite (smallest "
                   f"eigenvalue {ev[0]:.3g}, largest {ev[-1]:.3g}): a kernel's Gram has no "
                   "negative eigenvalue")
    _check_explicit_features(kernel, S, G, top, fail)


def _check_explicit_features(kernel, S, G, top, fail):
    """A kernel that declares an explicit feature map (``feature_dimension``: exact KRR's
    products then go through it) must reproduce its Gram: phi phi^T = K to 1e-9 max|K|."""
    try:
        M = kernel.feature_dimension(S.shape[1])
        if M is None:
            return
        P = np.asarray(kernel.explicit_features(kernel.inputs(S)), dtype=np.float64)
    except RffbenchError:
        raise
    except (Exception, SystemExit) as exc:
        raise fail(f"its explicit feature map raised {type(exc).__name__}: "
                   f"{first_line(exc)}") from None
    if P.shape != (S.shape[0], M) or not np.isfinite(P).all():
        raise fail(f"explicit_features returned {P.shape} (finite: {np.isfinite(P).all()}); "
                   f"feature_dimension says ({S.shape[0]}, {M}), finite")
    err = float(np.max(np.abs(P @ P.T - G))) if G.size else 0.0
    if err > 1e-9 * max(top, 1e-300):
        raise fail(f"its explicit features do not reproduce its Gram (max |phi phi^T - K| = "
                   f"{err:.3g}, max |K| = {top:.3g})")


def load_with(loader, cfg, seed, where):
    """``loader.load(cfg, seed)`` of dataset ``where`` (its name as the error names it: a
    plug-in's with its distribution) as (X, y, info), its exceptions and a result of
    another form as one line (rffbench's own loaders raise DataError)."""
    try:
        out = loader.load(cfg, seed)
    except RffbenchError:
        raise
    except (Exception, SystemExit) as exc:  # a plug-in's sys.exit too
        raise PluginError(f"{where}: the loader raised {type(exc).__name__}: "
                          f"{first_line(exc)}") from None
    if not (isinstance(out, tuple) and len(out) == 3 and isinstance(out[2], dict)):
        got = (f"a tuple of {len(out)} values" if isinstance(out, tuple)
               else f"a {type(out).__name__}")
        raise PluginError(f"{where}: the loader returned {got}; a loader returns three "
                          "values (X, y, info) with info a dict of task, source and licence")
    return out
