"""Every declared constraint (rffbench.checks) refuses the values it says it refuses, with
one line naming the key, the value and what is allowed: config blocks, measurement blocks
and the kernels' own parameters."""
import dataclasses

import pytest

from rffbench.config import Config
from rffbench.errors import ConfigError
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import KERNELS


def _blocks(cls=Config, prefix=""):
    """(key prefix, dataclass) of the config and every block under it."""
    yield prefix, cls
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
            if dataclasses.is_dataclass(default):
                yield from _blocks(type(default), f"{prefix}{f.name}.")


def _cases():
    for prefix, cls in _blocks():
        for name, c in (getattr(cls, "constraints", None) or {}).items():
            for bad in c.bad_values():
                yield pytest.param(cls, prefix + name, name, bad, id=f"{prefix}{name}={bad!r}")


CASES = list(_cases())


def test_every_block_declares_constraints():
    keys = {p[0][1] for p in CASES}
    for key in ("dataset.n", "model.cg_tol", "kernel.nu", "kernel.degree", "backend.workers",
                "report.center", "seed", "dtype", "measure.bounds.delta",
                "measure.speed.repeats", "measure.variance.n_pairs"):
        assert key in keys, key


@pytest.mark.parametrize("cls,key,name,bad", CASES)
def test_declared_constraint_refuses(cls, key, name, bad):
    with pytest.raises(ConfigError) as err:
        cls(**{name: bad})
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"{key}={bad!r} is not allowed: "), msg
    c = cls.constraints[name]
    assert msg.endswith(c.message())


@pytest.mark.parametrize("prefix,cls", list(_blocks()))
def test_defaults_satisfy_their_constraints(prefix, cls):
    obj = cls()
    for name, c in (getattr(cls, "constraints", None) or {}).items():
        if name in ("cross",):  # normalised by __post_init__ (true -> halves)
            continue
        assert c.ok(getattr(obj, name)), (prefix + name, getattr(obj, name))


def _class_cases(registry):
    """(class, parameter, bad value) of every constraint a built-in kernel or map declares."""
    for cname, cls in registry.builtins().items():
        for name, c in cls.all_constraints().items():
            for bad in c.bad_values():
                yield pytest.param(cls, name, bad, id=f"{cname}.{name}={bad!r}")


@pytest.mark.parametrize("kcls,name,bad", list(_class_cases(KERNELS)))
def test_kernel_parameter_constraints(kcls, name, bad):
    with pytest.raises(ConfigError, match=rf"^kernel\.{name}=.* is not allowed: use "):
        kcls(lengthscale=1.0, **{name: bad}).fit(None)


def test_kernel_block_takes_the_kernels_declarations():
    """kernel.nu is checked by matern's declaration, not a copy of it."""
    from rffbench.config import KernelConfig

    assert KernelConfig.constraints["nu"] is KERNELS["matern"].constraints["nu"]
    assert KernelConfig.constraints["degree"] is KERNELS["polynomial"].constraints["degree"]


@pytest.mark.parametrize("mcls,name,bad", list(_class_cases(FEATURE_MAPS)))
def test_map_parameter_constraints(mcls, name, bad):
    kernel = mcls.KERNELS[0] if mcls.KERNELS else "gaussian"
    key = rf"features\.{name}" if name in mcls.CONFIG_PARAMS else rf"features\.params\.{name}"
    with pytest.raises(ConfigError, match=rf"^{key}=.* is not allowed: use "):
        mcls.check_params(64, kernel, **{name: bad})


def test_maps_declare_their_parameters():
    declared = {(m, k) for m, cls in FEATURE_MAPS.builtins().items()
                for k in cls.all_constraints()}
    for pair in [("qmc", "sequence"), ("qmc", "pairs"), ("orf", "pairs"),
                 ("ssr", "radius"), ("ssr", "centre"),
                 ("leverage", "oversample"), ("leverage", "leverage_lam"),
                 ("orf", "layout"), ("gauss_hermite", "nodes")]:
        assert pair in declared, pair
