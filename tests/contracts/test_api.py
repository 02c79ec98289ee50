"""The Python API's defaults and scikit-learn conventions: one default lengthscale
(median) for Python and the command line, gamma as an alternative, the input's dtype
for fitted arrays, scipy.sparse input, exact kernel ridge as estimators."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.kernel_approximation import RBFSampler
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from rffbench.config import KernelConfig, validate
from rffbench.errors import ConfigError
from rffbench.exact import ExactKRR, ExactKRRClassifier
from rffbench.experiment import resolve_kernel
from rffbench.features import FEATURE_MAPS, RandomFourierFeatures
from rffbench.kernels import KERNELS, Gaussian, Laplacian, Matern
from tests.helpers import compose_config


def test_one_default_lengthscale_for_python_and_the_command_line(rng):
    assert KernelConfig().lengthscale == "median"
    assert all(cls().lengthscale == "median" for cls in KERNELS.values())
    X = rng.normal(size=(300, 5)) * 3
    f = RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    assert f.kernel_.lengthscale_ == pytest.approx(
        resolve_kernel(validate(compose_config()).kernel, X, 0).ls)


@pytest.mark.parametrize("cls,sk", [(Gaussian, rbf_kernel), (Laplacian, laplacian_kernel)])
def test_gamma_is_scikit_learns(cls, sk, rng):
    X, Y = rng.normal(size=(20, 4)), rng.normal(size=(7, 4))
    k = cls(gamma=0.3)
    np.testing.assert_allclose(k(X, Y), sk(X, Y, gamma=0.3), rtol=1e-12, atol=1e-15)
    assert k.gamma_ == pytest.approx(0.3)


def test_rff_with_gamma_draws_rbfsamplers_frequencies(rng):
    """Same gamma: the frequency scale of scikit-learn's RBFSampler (its W has sd sqrt(2 gamma))."""
    X = rng.normal(size=(10, 6))
    ours = RandomFourierFeatures(gamma=0.2, n_components=20000, random_state=0).fit(X)
    theirs = RBFSampler(gamma=0.2, n_components=20000, random_state=0).fit(X)
    sd = np.sqrt(2 * 0.2)
    n = ours.random_weights_.size
    # sample sd of n normals: relative SE 1/sqrt(2n); 5 standard errors
    for W in (ours.random_weights_, theirs.random_weights_):
        assert abs(W.std() / sd - 1) < 5 / np.sqrt(2 * n)


def test_gamma_conflicts_and_kernels_without_gamma(rng):
    X = rng.normal(size=(10, 2))
    with pytest.raises(ConfigError, match="both given"):
        Gaussian(lengthscale=2.0, gamma=0.1).fit(X)
    with pytest.raises(ConfigError, match="kernel=matern: scikit-learn has no gamma"):
        RandomFourierFeatures(kernel="matern", gamma=0.1).fit(X)
    with pytest.raises(ConfigError, match="set them in one place"):
        RandomFourierFeatures(kernel=Gaussian(lengthscale=2.0), lengthscale=3.0).fit(X)
    with pytest.raises(ConfigError, match="kernel.gamma=-1.0 is not allowed"):
        validate(compose_config(["kernel.gamma=-1"]))
    with pytest.raises(ConfigError, match="both given"):
        validate(compose_config(["kernel.gamma=0.1", "kernel.lengthscale=2"]))
    cfg = validate(compose_config(["kernel.gamma=0.02"]))
    assert resolve_kernel(cfg.kernel, X, 0).ls == pytest.approx(5.0)


def test_map_lengthscale_sets_the_kernels(rng):
    X = rng.normal(size=(10, 2))
    f = RandomFourierFeatures(kernel=Matern(nu=2.5), lengthscale=0.7, n_components=4).fit(X)
    assert f.kernel_.ls == 0.7 and f.kernel_.nu == 2.5 and f.kernel.lengthscale == "median"


@pytest.mark.parametrize("name", list(FEATURE_MAPS))
def test_fitted_arrays_and_features_in_the_inputs_dtype(name, rng, dtype):
    cls = FEATURE_MAPS[name]
    kernel = (cls.KERNELS or ("gaussian",))[0]
    X = rng.normal(size=(60, 5))
    if KERNELS[kernel]().input_floor() > -np.inf:  # chi2 kernels: non-negative data
        X = np.abs(X)
    X = X.astype(dtype)
    f = cls(kernel=kernel, n_components=16, random_state=0).fit(X)
    assert f.transform(X).dtype == dtype
    # a wrapped scikit-learn peer holds them in its sampler_ (PolynomialCountSketch: ints
    # only), a composed map (compact) in its fitted parts
    parts = [v for k, v in vars(f).items() if k.endswith("_") and hasattr(v, "transform")]
    holders = parts if parts else [f]
    arrays = {k: v.dtype for holder in holders for k, v in vars(holder).items()
              if k.endswith("_") and not k.startswith("_") and isinstance(v, np.ndarray)
              and v.dtype.kind == "f"}
    assert all(v == dtype for v in arrays.values()), arrays
    assert arrays or name in ("sklearn_polysketch", "sklearn_chi2")  # no float arrays


@pytest.mark.parametrize("name", list(FEATURE_MAPS))
def test_sparse_input_gives_the_dense_copys_features(name, rng):
    cls = FEATURE_MAPS[name]
    X = sp.random(80, 30, density=0.1, format="csr", random_state=1) * 3
    kw = dict(kernel=(cls.KERNELS or ("gaussian",))[0], n_components=32, random_state=2)
    a = cls(**kw).fit(X).transform(X)
    b = cls(**kw).fit(X.toarray()).transform(X.toarray())
    a, b = (z.toarray() if sp.issparse(z) else z for z in (a, b))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_exact_krr_estimators(rng):
    X = rng.normal(size=(120, 3))
    y = np.sin(X[:, 0]) + 0.05 * rng.normal(size=120)
    m = ExactKRR(lam=1e-2).fit(X[:100], y[:100])
    assert m.predict(X[100:]).shape == (20,) and m.score(X[100:], y[100:]) > 0.8
    assert m.kernel_.lengthscale_ > 0  # median, as everywhere
    labels = np.where(y > 0, "pos", "neg")
    c = ExactKRRClassifier(lam=1e-2).fit(X[:100], labels[:100])
    assert set(c.predict(X[100:])) <= {"pos", "neg"} and c.score(X[100:], labels[100:]) > 0.8
    assert c.decision_function(X[100:]).shape == (20,)
    with pytest.raises(ConfigError, match="model.lam=0 is not allowed"):
        ExactKRR(lam=0).fit(X, y)
