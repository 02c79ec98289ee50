"""Config composition and the range checks (one-line errors naming the key)."""
import pytest

from rffbench.config import Config, validate
from rffbench.errors import ConfigError
from tests.helpers import FakeEntryPoint, compose_config


def _group_options():
    """Every option of the kernel, features, dataset and model groups: each registered name
    (a yaml file is optional) and each yaml file of conf/ (a file without a registered
    name is caught here too)."""
    from pathlib import Path

    from rffbench.datasets import DATASETS
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import KERNELS
    from rffbench.models import MODELS

    conf = Path(__file__).resolve().parents[1] / "conf"
    for group, registry in (("kernel", KERNELS), ("features", FEATURE_MAPS),
                            ("dataset", DATASETS), ("model", MODELS)):
        files = {p.stem for p in (conf / group).glob("*.yaml")}
        for name in sorted(set(registry.builtins()) | files):
            yield pytest.param(group, name, id=f"{group}={name}")


def _partner(group, name):
    """A map's first declared kernel (else gaussian), a kernel's first map."""
    from rffbench.features import FEATURE_MAPS, maps_for_kernel

    if group == "features":
        return [f"kernel={(FEATURE_MAPS[name].KERNELS or ['gaussian'])[0]}"]
    if group == "dataset" and name == "file":  # a file of one's own: its path is required
        return ["dataset.path=data.csv"]
    return [f"features={maps_for_kernel(name)[0]}"] if group == "kernel" else []




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


@pytest.mark.parametrize("group,name", list(_group_options()))
def test_every_group_option_composes(group, name):
    extra = _partner(group, name)
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
    (["dataset.d=5"], r"dataset.d=5 is not allowed: it has no effect here \(dataset=digits "
                      r"does not use dataset.d \(d is fixed by the data\)"),
    (["dataset=file"], r"dataset.path=None is not allowed: dataset=file needs dataset.path"),
    (["dtype=float16"], r"dtype='float16' is not allowed: use one of float64, float32"),
    (["threads=0"], r"threads=0 is not allowed"),
    (["measure.approximation.n_points=1"], r"measure.approximation.n_points=1 is not allowed"),
    (["measure.timing.repeats=2"], r"measure.timing.repeats=2 is not allowed"),
    (["measure.bounds.trials=1"], r"measure.bounds.trials=1 is not allowed: use an integer >= 2"),
    (["measure.bounds.delta=0"],
     r"measure.bounds.delta=0 is not allowed: use a number in \(0, 1\)"),
    (["measure.bounds.delta=[0.5,1]"], r"measure.bounds.delta=\[0.5, 1\] is not allowed"),
    (["measure.bounds.delta=abc"], r"measure.bounds.delta='abc' is not allowed"),
    (["measure.bounds.n_points=1"], r"measure.bounds.n_points=1 is not allowed"),
    (["measure.bounds.diameter=ball"], r"measure.bounds.diameter='ball' is not allowed"),
    (["kernel.name=rbf"], r"kernel.name='rbf' is not allowed: use one of gaussian, laplacian"),
    (["features.name=fast"], r"features.name='fast' is not allowed: use one of rff"),
    # the protocol keys (issue: reproduce the papers)
    (["dataset.standardize=false"], r"dataset.standardize=False is not allowed: it was "
                                    r"replaced by dataset.scale"),
    (["dataset.scale=unit"], r"dataset.scale='unit' is not allowed: use one of standardize, "
                             r"max, xmax, none"),
    (["dataset.split=first"], r"dataset.split='first' is not allowed: use one of random, "
                              r"ordered"),
    (["D_unit=features"], r"D_unit='features' is not allowed: use one of output, frequencies"),
    (["measure.approximation.cross=both"], r"measure.approximation.cross='both' is not "
                                           r"allowed: use false, halves, independent"),
    (["measure.approximation.redraws=0"], r"measure.approximation.redraws=0 is not allowed"),
    (["measure.approximation.rows=test"], r"measure.approximation.rows='test' is not allowed: "
                                          r"use one of train, test_first"),
    (["dataset=ijcnn1", "dataset.encoding=onehot"], r"dataset.encoding='onehot' is not "
                                                    r"allowed: use one of libsvm, pulse_index"),
    (["report.center=mode"], r"report.center='mode' is not allowed: use one of median, mean"),
    (["report.center=mean", "report.interval=wilson"], r"report.interval='wilson' is not "
                                                       r"allowed: use one of lognormal, t, "),
    (["report.center=mean", "report.level=1"], r"report.level=1.0 is not allowed: use a "
                                               r"number in \[0.5, 1\)"),
    (["report.center=mean", "report.level=0.2"], r"report.level=0.2 is not allowed"),
    (["report.center=mean", "report.interval=bca", "report.resamples=50"],
     r"report.resamples=50 is not allowed: use an integer >= 100"),
    (["report.center=median", "report.interval=t"],
     r"report.interval='t' is not allowed: it has no effect here \(report.center=median: "
     r"the band is the seeds' min to max\)"),
    (["report.latex=tex"], r"report.latex='tex' is not allowed: use one of plain, siunitx, "
                           r"none"),
    (["report.center=mean", "report.resamples=500"], r"report.resamples=500 is not allowed: "
                                                     r"it has no effect here \(report.interval="
                                                     r"lognormal resamples nothing\)"),
    (["kernel.lengthscale=knn0"], r"kernel.lengthscale='knn0' is not allowed: use a number in "
                                  r"1e-100..1e\+100, 'median' or 'knn<k>'"),
    (["measure.variance.redraws=1"], r"measure.variance.redraws=1 is not allowed"),
    (["measure.variance.pairs=all"], r"measure.variance.pairs='all' is not allowed"),
    (["measure.variance.distances=[]"], r"measure.variance.distances=\[\] is not allowed"),
    (["measure.variance.sums=[-1]"], r"measure.variance.sums=\[-1.0\] is not allowed"),
    (["kernel=arccos1", "features=orf", "features.pairs=true"],
     r"features.pairs=True is not allowed with kernel=arccos1: cos/sin pairs"),
    (["features=orf", "+features.params.layout=spiral"],
     r"features.params.layout='spiral' is not allowed: use one of blocks, frame"),
    (["features=ssr", "+features.params.radius=node"],
     r"features.params.radius='node' is not allowed: use one of vertex, rule"),
    (["features=ssr", "+features.params.centre=maybe"],
     r"features.params.centre='maybe' is not allowed: use true or false"),
    (["features=qmc", "features.sequence=sobel"], r"features.sequence='sobel' is not allowed"),
])
@pytest.mark.slow
def test_bad_values_are_one_line_config_errors(overrides, match):
    with pytest.raises(ConfigError, match=match) as exc:
        validate(compose_config(overrides))
    assert "\n" not in str(exc.value)


def test_unknown_group_option_fails_at_compose():
    from hydra.errors import MissingConfigException

    with pytest.raises(MissingConfigException, match="dataset/nope"):
        compose_config(["dataset=nope"])


def test_protocol_keys_compose():
    conf = validate(compose_config(["dataset.scale=max", "dataset.split=ordered",
                                    "D_unit=frequencies",
                                    "measure.approximation.cross=true",
                                    "measure.approximation.redraws=7", "report.center=mean",
                                    "kernel.lengthscale=knn50"]))
    assert conf.dataset.scale == "max" and conf.dataset.split == "ordered"
    assert conf.measure.approximation.cross == "halves"  # true is the old spelling of halves
    assert conf.measure.approximation.redraws == 7 and conf.report.center == "mean"
    assert conf.kernel.lengthscale == "knn50" and conf.D_unit == "frequencies"


@pytest.mark.parametrize("features,kernel,n_freq,D", [
    ("rff", "gaussian", 100, 100), ("rff_pairs", "gaussian", 100, 200),
    ("orf", "gaussian", 100, 200), ("orf", "arccos0", 100, 100), ("ssr", "gaussian", 34, 68),
    ("ssr", "arccos1", 34, 34), ("arccos", "arccos1", 50, 50), ("qmc", "arccos0", 30, 30)])
def test_frequencies_unit_sets_the_output_dimension_per_map(features, kernel, n_freq, D):
    conf = validate(compose_config([f"features={features}", f"kernel={kernel}", f"D={n_freq}",
                                    "D_unit=frequencies"]))
    assert conf.output_dim(16) == D
    from rffbench.features import FEATURE_MAPS

    assert FEATURE_MAPS[features].n_freq_for(D, kernel) == n_freq


def test_the_measure_block_comes_from_the_registered_measurements(monkeypatch, caplog):
    """One field per measurement, each its class's Config; a plug-in that does not load,
    has no Config with ``enabled`` or a different name is left out with a warning."""
    from dataclasses import dataclass, fields

    from rffbench import measure
    from rffbench.config import MeasureConfig

    names = [f.name for f in fields(MeasureConfig)]
    builtins = sorted(measure.MEASUREMENTS.builtins())  # the modules' names, in their order
    assert {"approximation", "bounds", "learning", "speed", "timing", "variance"} <= \
        set(builtins) and names[:len(builtins)] == builtins
    for f in fields(MeasureConfig):
        assert f.type is measure.MEASUREMENTS[f.name].Config

    @dataclass
    class NoEnabled:
        size: int = 3

    class Bad(measure.Measurement):
        name = "bad"
        Config = NoEnabled

    class Renamed(measure.Measurement):
        name = "other"
        Config = measure.MEASUREMENTS["timing"].Config

    eps = {"bad": FakeEntryPoint("bad", Bad), "renamed": FakeEntryPoint("renamed", Renamed),
           "broken": FakeEntryPoint("broken", ImportError("no module named y"))}
    monkeypatch.setattr(measure.MEASUREMENTS, "plugin_names", lambda: eps)
    measure.refresh()
    try:
        with caplog.at_level("WARNING"):
            got = measure.measurement_classes()
        assert list(got) == builtins  # the built-ins; the three fakes left out
        text = caplog.text
        assert "measure.bad" in text and "'enabled'" in text
        assert "measure.renamed" in text and "'other'" in text
        assert "broken" in text and "no module named y" in text
    finally:
        monkeypatch.undo()
        measure.refresh()
