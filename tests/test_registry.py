"""rffbench.registry: the registries list built-ins and installed plug-ins, resolve import
paths only from the command line, and name what they hold when a name is unknown."""

import pytest

from rffbench.errors import ConfigError
from tests.helpers import DIST, compose_config


def test_registry_installed_never_follows_an_import_path(tmp_path, monkeypatch):
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import KERNELS

    marker = tmp_path / "IMPORTED"
    (tmp_path / "evil2.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nX = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for reg in (FEATURE_MAPS, KERNELS):
        assert reg.installed("evil2:X") is None
        assert reg.installed("rff" if reg is FEATURE_MAPS else "gaussian") is not None
        assert reg.installed(None) is None
    assert not marker.exists()


def test_registries_list_the_plugin(plugin):
    from rffbench.datasets import DATASETS
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import KERNELS

    assert FEATURE_MAPS["stratified_rff"] is plugin.StratifiedRFF
    assert KERNELS["two_scale"] is plugin.TwoScale
    assert DATASETS["two_moons"] is plugin.two_moons
    from rffbench.config import DatasetConfig
    from rffbench.datasets import data_plan

    plan = data_plan(DatasetConfig(name="two_moons", n=500))  # from the shape it declares
    assert [n.what for n in plan.phases["load"]] == ["loading dataset=two_moons (500 x 2)"]
    assert FEATURE_MAPS.origin("stratified_rff") == f"plug-in {DIST}"
    cfg = compose_config(["features=stratified_rff", "kernel=two_scale",
                          "dataset=two_moons"])
    assert (cfg.features.name, cfg.kernel.name, cfg.dataset.name) == (
        "stratified_rff", "two_scale", "two_moons")


@pytest.mark.parametrize("name,match", [
    ("nosuch_module_xyz:Map", "cannot load the import path .*ModuleNotFoundError"),
    ("collections:OrderedDict", "is not a feature map: it must be a subclass of "
                                "rffbench.features.base.FeatureMap"),
    ("nonsense", "features.name='nonsense' is not allowed: use one of rff"),
])
def test_bad_plugin_names(name, match):
    from rffbench.config import FeaturesConfig

    with pytest.raises(ConfigError, match=match):
        FeaturesConfig(name=name)
