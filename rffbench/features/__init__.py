"""``FEATURE_MAPS``: config name -> feature-map class (scikit-learn transformers).

One module per family; every map takes ``kernel``, ``n_components`` (= D, the
output dimension), ``lengthscale`` / ``gamma`` and ``random_state``.
``FEATURE_MAPS`` is a :class:`~rffbench.registry.Registry`: plug-ins add maps
through the entry-point group ``rffbench.feature_maps`` or an import path
(subclasses of :class:`FeatureMap`).
"""
import numpy as np
import scipy.sparse as sp

from .activation import ArcCosineFeatures, PositiveRandomFeatures
from .binning import RandomBinning
from .fourier import FeatureMap, FourierMap, RandomFourierFeatures, RandomFourierPairs
from .leverage import LeverageRFF
from .nystrom import Nystrom
from .peers import SklearnAdditiveChi2, SklearnRBF, SklearnSkewedChi2
from .polynomial import RandomMaclaurin, SklearnPolynomialCountSketch, TensorSketch
from .qmc import QuasiMonteCarloFeatures
from .quadrature import GaussHermiteFeatures, SphericalRadialFeatures
from ..registry import Registry, subclass_check
from .structured import Fastfood, OrthogonalRandomFeatures, StructuredOrthogonalRandomFeatures

FEATURE_MAPS = Registry("rffbench.feature_maps", "features", {cls.name: cls for cls in (
    RandomFourierFeatures, RandomFourierPairs, OrthogonalRandomFeatures,
    StructuredOrthogonalRandomFeatures, Fastfood, QuasiMonteCarloFeatures, RandomBinning,
    SklearnRBF, Nystrom, PositiveRandomFeatures, ArcCosineFeatures, RandomMaclaurin, TensorSketch,
    SklearnPolynomialCountSketch, SphericalRadialFeatures, GaussHermiteFeatures, LeverageRFF, SklearnAdditiveChi2,
    SklearnSkewedChi2)}, subclass_check(FeatureMap, "a feature map",
                                hooks=[("_fit", "fit"), ("_transform_into", "transform")]))


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
    return FEATURE_MAPS.get_or_raise(name)


__all__ = ["FEATURE_MAPS", "ArcCosineFeatures", "Fastfood", "GaussHermiteFeatures", "LeverageRFF",
           "PositiveRandomFeatures",
           "RandomMaclaurin", "SklearnAdditiveChi2", "SklearnPolynomialCountSketch",
           "SklearnSkewedChi2", "SphericalRadialFeatures",
           "TensorSketch", "FeatureMap", "FourierMap", "Nystrom",
           "OrthogonalRandomFeatures", "QuasiMonteCarloFeatures", "RandomBinning",
           "RandomFourierFeatures", "RandomFourierPairs", "SklearnRBF",
           "StructuredOrthogonalRandomFeatures", "feature_map_class", "gram_of"]
