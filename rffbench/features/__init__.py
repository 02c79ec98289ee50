"""``FEATURE_MAPS``: config name -> feature-map class (scikit-learn transformers).

One module per family; every map takes ``kernel``, ``n_components`` (= D, the
output dimension) and ``random_state``.
"""
from ..errors import ConfigError
from .fourier import FeatureMap, RandomFourierFeatures, RandomFourierPairs
from .nystrom import Nystrom
from .peers import SklearnRBF

FEATURE_MAPS = {cls.name: cls for cls in (RandomFourierFeatures, RandomFourierPairs, SklearnRBF,
                                          Nystrom)}


def feature_map_class(name):
    """The registered class for ``name`` (ConfigError naming the choices otherwise)."""
    if name not in FEATURE_MAPS:
        raise ConfigError(f"features={name!r} is unknown: use one of {', '.join(FEATURE_MAPS)}")
    return FEATURE_MAPS[name]


__all__ = ["FEATURE_MAPS", "FeatureMap", "Nystrom", "RandomFourierFeatures", "RandomFourierPairs",
           "SklearnRBF", "feature_map_class"]
