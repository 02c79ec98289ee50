"""``FEATURE_MAPS``: config name -> feature-map class (scikit-learn transformers).

One module per family; every map takes ``kernel``, ``n_components`` (= D, the
output dimension), ``lengthscale`` / ``gamma`` and ``random_state``.
``FEATURE_MAPS`` is a :class:`~rffbench.registry.Registry`: plug-ins add maps
through the entry-point group ``rffbench.feature_maps`` or an import path
(subclasses of :class:`FeatureMap`).
"""
import scipy.sparse as sp

from .. import _numba as nbk
from ..registry import Registry, subclass_check
from . import (
    activation,
    binning,
    fourier,
    intersection,
    leverage,
    nystrom,
    polynomial,
    qmc,
    quadrature,
    sketch,
    sklearn_samplers,
    structured,
)
from .base import FeatureMap, MapTags, maps_for_kernel
from .fourier import FourierMap

#: the modules of rffbench's maps, each listing its maps in ``MAPS`` (a new map in one of
#: them is its class and its MAPS entry; a new module, one entry here)
FAMILIES = (fourier, structured, qmc, binning, activation, polynomial, sketch, intersection,
            quadrature, leverage, nystrom, sklearn_samplers)

FEATURE_MAPS = Registry("rffbench.feature_maps", "features",
                        {cls.name: cls for module in FAMILIES for cls in module.MAPS},
                        subclass_check(FeatureMap, "a feature map",
                                       hooks=[("_fit", "fit"), ("_transform_into", "transform")]))
#: every map class by its class name (``from rffbench.features import RandomFourierPairs``)
globals().update({cls.__name__: cls for module in FAMILIES for cls in module.MAPS})


def gram_of(Z, rows=slice(None), out=None):
    """Dense Z[rows] @ Z^T for dense or scipy.sparse features (into ``out`` if given).

    numpy runs ``Z @ Z.T`` as syrk when ``rows`` is everything.

    Parameters
    ----------
    Z : array or scipy.sparse matrix of shape (n, D)
        Features.
    rows : slice or index array, default all rows
        The rows of the left factor.
    out : ndarray or None, default None
        A preallocated (len(rows), n) array to write into.

    Returns
    -------
    ndarray of shape (len(rows), n)
        ``out`` when given.
    """
    A = Z[rows]
    if sp.issparse(Z):
        G = (A @ Z.T).toarray()
        if out is None:
            return G
        out[...] = G
        return out
    return nbk.matmul(A, Z.T, out=out)


def feature_map_class(name):
    """The registered class for ``name`` (ConfigError naming the choices otherwise)."""
    return FEATURE_MAPS.get_or_raise(name)


__all__ = ["FEATURE_MAPS", "FAMILIES", "FeatureMap", "FourierMap", "MapTags", "feature_map_class",
           "maps_for_kernel",
           "gram_of", *(cls.__name__ for module in FAMILIES for cls in module.MAPS)]
