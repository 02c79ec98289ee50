"""rffbench.features.leverage: leverage-score sampling, its parameters and weights."""
import numpy as np
import pytest

from rffbench.config import validate
from rffbench.errors import ConfigError
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import Gaussian
from tests.helpers import compose_config


def test_leverage_parameters_and_weights(rng):
    """Its draws follow the leverages: weights are 1/sqrt(m M q); bad parameters name the key."""
    X = rng.normal(size=(200, 3))
    f = FEATURE_MAPS["leverage"](kernel=Gaussian(lengthscale=1.0), n_components=40,
                                 random_state=0, oversample=3).fit(X)
    assert f.n_candidates_ == 60 and f.fit_rows_ == 200 and f.leverage_.shape == (60,)
    q = f.leverage_ / f.leverage_.sum()
    # each drawn frequency is weighted by 1/sqrt(m M q) of its candidate
    np.testing.assert_allclose(f.feature_weights_, np.sqrt(1 / (20 * 60 * q[f.picked_])),
                               rtol=1e-12)
    assert np.all(f.leverage_ >= 0) and np.all(f.leverage_ <= 2 + 1e-12)  # two columns each
    with pytest.raises(ConfigError, match=r"features.params.oversample=0 is not allowed"):
        validate(compose_config(["features=leverage", "D=64", "+features.params.oversample=0"]))
    with pytest.raises(ConfigError, match=r"features.params.leverage_lam=-1.0 is not allowed"):
        validate(compose_config(["features=leverage", "D=64",
                                 "+features.params.leverage_lam=-1.0"]))
