"""Config composition and the range checks (one-line errors naming the key)."""
import pytest

from conftest import compose_config
from rffbench.config import Config, validate
from rffbench.errors import ConfigError


def test_default_composes_and_validates():
    conf = validate(compose_config())
    assert isinstance(conf, Config)
    assert conf.kernel.name == "gaussian" and conf.features.name == "rff"
    assert conf.dataset.name == "digits" and conf.D == 1024 and conf.dtype == "float64"
    assert conf.measure.approximation.enabled and conf.measure.approximation.n_points is None
    b = conf.measure.bounds
    assert b.enabled and b.trials >= 2 and b.delta == [0.05] and b.n_points is None


@pytest.mark.parametrize("value,want", [("0.1", [0.1]), ("[0.01,0.1,0.05]", [0.1, 0.05, 0.01])])
def test_bounds_delta_scalar_or_list(value, want):
    conf = validate(compose_config([f"measure.bounds.delta={value}"]))
    assert conf.measure.bounds.delta == want


@pytest.mark.parametrize("group,names", [
    ("kernel", ["gaussian", "laplacian", "cauchy", "matern"]),
    ("features", ["rff", "rff_pairs", "orf", "sorf", "fastfood", "qmc", "binning", "sklearn_rbf",
                  "nystrom"]),
    ("dataset", ["synthetic", "digits", "breast_cancer", "wine", "diabetes", "fashion_mnist",
                 "letter", "satellite", "shuttle", "dna"]),
    ("model", ["ridge", "sgd"]),
])
def test_every_group_option_composes(group, names):
    for name in names:
        extra = ["kernel=laplacian"] if name == "binning" else []  # binning: Laplacian only
        conf = validate(compose_config([f"{group}={name}", *extra]))
        assert getattr(conf, group).name == name


@pytest.mark.parametrize("overrides,match", [
    (["D=0"], r"D=0 is not allowed: use an integer >= 1"),
    (["D=-5"], r"D=-5 is not allowed"),
    (["features=rff_pairs", "D=33"], r"D=33 is not allowed for features=rff_pairs"),
    (["kernel.lengthscale=0"], r"kernel.lengthscale=0 is not allowed: use a number in "
                               r"1e-100\.\.1e\+100"),
    (["kernel.lengthscale=1e200"], r"kernel.lengthscale=1e\+200 is not allowed: use a number in"),
    (["kernel.lengthscale=1e-101"], r"kernel.lengthscale=1e-101 is not allowed"),
    (["seed=4294967296"], r"seed=4294967296 is not allowed: use an integer in 0\.\.4294967295"),
    (["seed=-1"], r"seed=-1 is not allowed"),
    (["kernel.lengthscale=-2"], r"kernel.lengthscale=-2 is not allowed"),
    (["kernel.lengthscale=mean"], r"kernel.lengthscale='mean' is not allowed"),
    (["kernel=matern", "kernel.nu=2.0"], r"kernel.nu=2.0 is not allowed: use one of 0.5, 1.5"),
    (["dataset.test_size=1.0"], r"dataset.test_size=1.0 is not allowed: use a number with 0 <"),
    (["dataset.test_size=0"], r"dataset.test_size=0.0 is not allowed"),
    (["dataset=synthetic", "dataset.d=0"], r"dataset.d=0 is not allowed: use an integer >= 1"),
    (["dataset.d=5"], r"dataset.d=5 is not allowed for dataset=digits"),
    (["dataset=file"], r"dataset.path=None is not allowed: dataset=file needs dataset.path"),
    (["dtype=float16"], r"dtype='float16' is not allowed: use one of float64, float32"),
    (["threads=0"], r"threads=0 is not allowed"),
    (["measure.approximation.n_points=1"], r"measure.approximation.n_points=1 is not allowed"),
    (["measure.timing.repeats=2"], r"measure.timing.repeats=2 is not allowed"),
    (["measure.bounds.trials=1"], r"measure.bounds.trials=1 is not allowed: use an integer >= 2"),
    (["measure.bounds.delta=0"], r"measure.bounds.delta=0 is not allowed: use a number in \(0, 1\)"),
    (["measure.bounds.delta=[0.5,1]"], r"measure.bounds.delta=\[0.5, 1\] is not allowed"),
    (["measure.bounds.delta=abc"], r"measure.bounds.delta='abc' is not allowed"),
    (["measure.bounds.n_points=1"], r"measure.bounds.n_points=1 is not allowed"),
    (["measure.bounds.diameter=ball"], r"measure.bounds.diameter='ball' is not allowed"),
    (["kernel.name=rbf"], r"kernel.name='rbf' is not allowed: use one of gaussian, laplacian"),
    (["features.name=fast"], r"features.name='fast' is not allowed: use one of rff"),
])
def test_bad_values_are_one_line_config_errors(overrides, match):
    with pytest.raises(ConfigError, match=match) as exc:
        validate(compose_config(overrides))
    assert "\n" not in str(exc.value)


def test_unknown_group_option_fails_at_compose():
    from hydra.errors import MissingConfigException

    with pytest.raises(MissingConfigException, match="dataset/nope"):
        compose_config(["dataset=nope"])
