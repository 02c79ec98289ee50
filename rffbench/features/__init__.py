"""``FEATURE_MAPS``: config name -> feature-map class (scikit-learn transformers).

One module per family; every map takes ``kernel``, ``n_components`` (= D, the
output dimension) and ``random_state``.
"""
from ..errors import ConfigError
import numpy as np
import scipy.sparse as sp

from .binning import RandomBinning
from .fourier import FeatureMap, FourierMap, RandomFourierFeatures, RandomFourierPairs
from .nystrom import Nystrom
from .peers import SklearnRBF
from .qmc import QuasiMonteCarloFeatures
from .structured import Fastfood, OrthogonalRandomFeatures, StructuredOrthogonalRandomFeatures

FEATURE_MAPS = {cls.name: cls for cls in (
    RandomFourierFeatures, RandomFourierPairs, OrthogonalRandomFeatures,
    StructuredOrthogonalRandomFeatures, Fastfood, QuasiMonteCarloFeatures, RandomBinning,
    SklearnRBF, Nystrom)}


def gram_of(Z, rows=slice(None), out=None):
    """Dense Z[rows] @ Z^T for dense or scipy.sparse features (into ``out`` if given).

    numpy runs ``Z @ Z.T`` as syrk when ``rows`` is everything."""
    A = Z[rows]
    if sp.issparse(Z):
        G = (A @ Z.T).toarray()
        if out is None:
            return G
        out[...] = G
        return out
    return np.matmul(A, Z.T, out=out)


def feature_map_class(name):
    """The registered class for ``name`` (ConfigError naming the choices otherwise)."""
    if name not in FEATURE_MAPS:
        raise ConfigError(f"features={name!r} is unknown: use one of {', '.join(FEATURE_MAPS)}")
    return FEATURE_MAPS[name]


__all__ = ["FEATURE_MAPS", "Fastfood", "FeatureMap", "FourierMap", "Nystrom",
           "OrthogonalRandomFeatures", "QuasiMonteCarloFeatures", "RandomBinning",
           "RandomFourierFeatures", "RandomFourierPairs", "SklearnRBF",
           "StructuredOrthogonalRandomFeatures", "feature_map_class", "gram_of"]
