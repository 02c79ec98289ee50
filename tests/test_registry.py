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


FAMILY_PACKAGES = [  # package, the tuple of its unit modules, the list each module keeps
    ("rffbench.features", "FAMILIES", "MAPS"),
    ("rffbench.kernels", "FAMILIES", "KERNELS"),
    ("rffbench.datasets.builtin", "MODULES", "SOURCES"),
]


@pytest.mark.parametrize("package,families,listing", FAMILY_PACKAGES,
                         ids=[p for p, _, _ in FAMILY_PACKAGES])
def test_every_unit_module_is_registered(package, families, listing):
    """A module of the package that lists units (MAPS, KERNELS, SOURCES) is among the
    package's family modules, so its units reach the registry; a map or kernel class with
    a name of its own, defined in one of those modules, is in its module's list (a new
    family module or class forgotten there fails here, not as an unknown name later)."""
    import importlib
    import inspect
    import pkgutil

    from rffbench.features import FEATURE_MAPS, FeatureMap
    from rffbench.kernels import KERNELS, Kernel

    face = importlib.import_module(package)
    registered = {m.__name__ for m in getattr(face, families)}
    pkg = importlib.import_module(package.rsplit(".builtin", 1)[0])
    found = set()
    for info in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."):
        if info.name.endswith(".__main__"):  # a command: importing it runs it
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, listing):
            found.add(info.name)
        for cls in (c for _, c in inspect.getmembers(module, inspect.isclass)
                    if c.__module__ == info.name and "name" in vars(c)
                    and not inspect.isabstract(c)):
            for base, registry in ((FeatureMap, FEATURE_MAPS), (Kernel, KERNELS)):
                if issubclass(cls, base) and cls is not base:
                    assert registry.builtins().get(cls.name) is cls, (info.name, cls)
    assert found == registered, (sorted(found - registered), sorted(registered - found))
    assert len(found) >= 3
