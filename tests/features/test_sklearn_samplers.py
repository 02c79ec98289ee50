"""rffbench.features.sklearn_samplers: the scikit-learn samplers as maps."""
import numpy as np
import pytest

from rffbench.features import FEATURE_MAPS


@pytest.mark.parametrize("name,sampler", [
    ("sklearn_rbf", "RBFSampler"), ("sklearn_polysketch", "PolynomialCountSketch"),
    ("sklearn_skewed_chi2", "SkewedChi2Sampler"), ("sklearn_chi2", "AdditiveChi2Sampler")])
def test_sklearn_maps_with_their_defaults_are_scikit_learns_samplers(name, sampler, rng):
    """In Python, an sklearn_* map with its defaults wraps scikit-learn's sampler with
    scikit-learn's defaults (gamma 1, coef0 0, inputs unscaled): every parameter but the
    seed is the same, and the deterministic chi2 sampler gives the same features."""
    import sklearn.kernel_approximation as ka

    X = np.abs(rng.standard_normal((60, 7))) * 3.0  # a median distance far from 1
    fmap = FEATURE_MAPS[name](n_components=21 if name == "sklearn_chi2" else 100).fit(X)
    ours = {k: v for k, v in fmap.sampler_.get_params().items() if k != "random_state"}
    theirs = {k: v for k, v in getattr(ka, sampler)().get_params().items()
              if k != "random_state"}
    assert ours == theirs
    if name == "sklearn_chi2":  # d (2 s - 1) = 21: scikit-learn's default sample_steps=2
        np.testing.assert_array_equal(fmap.transform(X), ka.AdditiveChi2Sampler().fit_transform(X))
    # a lengthscale given (as a run gives its kernel) still sets the scale
    other = FEATURE_MAPS[name](n_components=fmap.n_components, lengthscale=1.0).fit(X)
    assert other.kernel_.ls == 1.0
