"""The config blocks of the units: kernel, features and dataset, each generated from what
the registered units declare (their keys, defaults, constraints and descriptions) on top of
the block's common keys, with the rule that says where each key has an effect
(:func:`chosen_reads`).  :mod:`rffbench.config` assembles them into the run's schema."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from .checks import (
    Applies,
    Check,
    Int,
    OneOf,
    Real,
    check_constraints,
    declared_keys,
    require,
    takes_text,
    unit_keys,
)
from .features.base import CHUNK_ROWS
from .kernels import MEDIAN_SUBSAMPLE, Kernel

#: dataset.scale: z-scores with training statistics, division by the training rows'
#: largest |value| or largest value (one number for every column), or the data as loaded
SCALES = ("standardize", "max", "xmax", "none")
#: dataset.split: seeded shuffle (stratified for classes), or the file's order
SPLITS = ("random", "ordered")


@dataclass
class KernelBlock:
    """kernel/: which kernel and its parameters."""

    #: the kernel (kernel=NAME; its class declares its own keys below and their defaults)
    name: str = "gaussian"
    #: a number > 0, "median" (median pairwise distance of training points) or "knn<k>"
    #: (mean distance to the k-th nearest neighbour, e.g. knn50)
    lengthscale: Any = "median"
    #: scikit-learn's gamma instead of the lengthscale (gaussian 1/(2 l^2), laplacian 1/l)
    gamma: Optional[float] = None
    #: training points used by the median heuristic (seeded subsample)
    median_subsample: int = MEDIAN_SUBSAMPLE
    #: further keyword arguments of the kernel's class (a plug-in kernel's own
    #: parameters), kernel.params.NAME=value; a name the class does not take is an error
    params: Dict[str, Any] = field(default_factory=dict)

    #: keys of this block that go to every kernel (the others only to kernels that take them)
    COMMON = ("lengthscale", "gamma", "median_subsample", "random_state")
    #: the common keys' constraints, as the Kernel base class declares them
    constraints = dict(Kernel.constraints)

    def __post_init__(self):
        from .kernels import KERNELS, check_lengthscale

        KERNELS.get_or_raise(self.name, "kernel.name")
        cls = KERNELS[self.name]
        dedicated = {f for f in self.__dataclass_fields__ if f not in ("name", "params")}
        extra = sorted(set(cls._get_param_names()) - set(self.COMMON) - dedicated)
        for k in self.params:
            require(k in extra, f"kernel.params.{k}", self.params[k],
                    takes_text(f"kernel={self.name}", "kernel.params", k, extra)
                    + (f" (set {k} as kernel.{k})" if k in dedicated else ""))
        # the dedicated keys, by the constraints their kernels declare (nu: matern's)
        check_constraints(self, "kernel")
        if self.params:  # the class's declared constraints, then its own checks
            declared = cls.all_constraints()
            check_constraints(self.params, "kernel.params",
                              {k: declared[k] for k in self.params if k in declared})
            KERNELS[self.name](lengthscale=1.0, **self.params).fit(None)
        self.lengthscale = check_lengthscale(self.lengthscale)
        if self.gamma is not None:
            KERNELS[self.name](lengthscale=self.lengthscale, gamma=self.gamma).fit(None)

    def kernel_params(self, **common):
        """Keyword arguments of the kernel's class: ``common`` (lengthscale, gamma, ...),
        the dedicated keys the class takes (nu for matern, degree and coef0 for
        polynomial, ...) and ``params``."""
        from .kernels import KERNELS

        takes = set(KERNELS[self.name]._get_param_names())
        dedicated = {f: getattr(self, f) for f in self.__dataclass_fields__
                     if f not in ("name", "params", *self.COMMON) and f in takes}
        return {**common, **dedicated, **self.params}


def _key_type(default):
    """The schema type of a declared key from its default (None: any value, checked by
    the key's constraint)."""
    if default is None:
        return Optional[Any]
    return type(default) if isinstance(default, (bool, int, float, str)) else Any


def block_from_declarations(name, base, keys, block):
    """A config dataclass: ``base``'s fields plus one field per declared key (``keys``:
    :func:`rffbench.checks.declared_keys`), each with its default, its constraint (in the
    block's ``constraints``) and its description naming the classes that take it (in
    ``field_docs``, read by the configuration reference)."""
    import dataclasses

    cls = dataclasses.make_dataclass(
        name, [(k, _key_type(d), field(default=d)) for k, (d, _, _, _) in keys.items()],
        bases=(base,), namespace={"__module__": __name__, "__doc__": base.__doc__})
    cls.constraints = {**getattr(base, "constraints", {}),
                       **{k: c for k, (_, c, _, _) in keys.items() if c is not None}}
    cls.field_docs = {k: f"{text} ({block}={', '.join(who)})".lstrip()
                      for k, (_, _, text, who) in keys.items()}
    return cls


def _kernel_keys():
    from .kernels import KERNELS

    return declared_keys(KERNELS.builtins().values(), lambda cls: [
        k for k in cls._get_param_names() if k not in KernelBlock.COMMON])


#: the kernel block: the common keys and one key per parameter a built-in kernel declares
#: (its constructor's default, its constraint, its numpydoc description)
KERNEL_KEYS = _kernel_keys()
KernelConfig = block_from_declarations("KernelConfig", KernelBlock, KERNEL_KEYS, "kernel")


def _kernels():
    from .kernels import KERNELS

    return KERNELS


def _maps():
    from .features import FEATURE_MAPS

    return FEATURE_MAPS


def _datasets():
    from .datasets import DATASETS

    return DATASETS


def chosen_reads(block, key, registry, keys_of, hints=None):
    """Applies: ``<block>.<key>`` has an effect when the entry chosen by ``<block>.name``
    (in ``registry()``) reads it: ``keys_of(entry)`` lists the keys it reads (None: not
    declared, a plug-in's: any).  The one rule behind the kernel's, the map's, the dataset's
    and the model's own keys; ``hints`` adds a phrase per key to the reason."""
    def when(c):
        keys = keys_of(registry()[getattr(c, block).name])
        return keys is None or key in keys

    def why(c):
        reg = registry()
        readers = [n for n in reg if reg.find(n) is not None and key in (keys_of(reg.find(n))
                                                                         or ())]
        return (f"{block}={getattr(c, block).name} does not use {block}.{key}"
                f"{(hints or {}).get(key, '')}; "
                + (f"{block}={' or '.join(readers)} does" if readers else "nothing does"))
    return Applies(when, why)


def _median_rule(c):
    from .kernels import data_rule

    return c.kernel.gamma is None and data_rule(c.kernel.lengthscale) is not None


#: where the kernel block's keys have an effect (rffbench.checks.Applies)
KernelConfig.applies = {
    **{k: chosen_reads("kernel", k, _kernels, lambda cls: cls._get_param_names())
       for k in KERNEL_KEYS},
    "median_subsample": Applies(_median_rule, lambda c: (
        f"kernel.lengthscale={c.kernel.lengthscale!r} is a number" if c.kernel.gamma is None
        else "kernel.gamma is set") + ": no median or knn rule samples training points"),
}


#: a map's common parameters and the config keys that set them (not features.params)
OWN_KEYS = {"n_components": "D", "lengthscale": "kernel.lengthscale", "gamma": "kernel.gamma",
            "random_state": "seed", "kernel": "kernel.name", "chunk_rows": "features.chunk_rows"}


@dataclass
class FeaturesBlock:
    """features/: which feature map."""

    #: the feature map (features=NAME; its class declares its keys and defaults)
    name: str = "rff"
    #: rows per GEMM + cosine pass in transform; null = about 4M output elements
    chunk_rows: Optional[int] = None
    #: further keyword arguments of the map's class (plug-in maps), e.g. {alpha: 0.5}
    params: Dict[str, Any] = field(default_factory=dict)

    constraints = {"chunk_rows": CHUNK_ROWS}

    def __post_init__(self):
        from .features import FEATURE_MAPS

        FEATURE_MAPS.get_or_raise(self.name, "features.name")
        check_constraints(self, "features")
        cls = FEATURE_MAPS[self.name]
        common = set(OWN_KEYS) | set(cls.CONFIG_PARAMS)
        extra = sorted(set(cls._get_param_names()) - common)
        for k in self.params:
            own = OWN_KEYS.get(k) or (f"features.{k}" if k in cls.CONFIG_PARAMS else None)
            require(k in extra, f"features.params.{k}", self.params[k],
                    f"set it with {own}={self.params[k]}" if own else
                    takes_text(f"features={self.name}", "features.params", k, extra))

    def map_params(self):
        """The chosen map's extra parameters (CONFIG_PARAMS) that are set."""
        from .features import FEATURE_MAPS

        params = {k: getattr(self, k) for k in FEATURE_MAPS[self.name].CONFIG_PARAMS
                  if getattr(self, k) is not None}
        return {**params, **self.params}


def _map_key_declarations():
    from .features import FEATURE_MAPS

    return unit_keys(FEATURE_MAPS.builtins(), lambda cls: cls.CONFIG_PARAMS)


#: the features block's keys that only some maps read: one key per key a built-in map
#: declares (FeatureMap.CONFIG_PARAMS: its config default, constraint and description)
MAP_KEYS = _map_key_declarations()
FeaturesConfig = block_from_declarations("FeaturesConfig", FeaturesBlock, MAP_KEYS, "features")
FeaturesConfig.applies = {k: chosen_reads("features", k, _maps, lambda cls: cls.CONFIG_PARAMS,
                                          {"pairs": " (rff is cos + offset, rff_pairs cos/sin "
                                                    "pairs: their form is fixed)"})
                          for k in MAP_KEYS}


@dataclass
class DatasetBlock:
    """dataset/: which data, how it is split and scaled."""

    #: the data (dataset=NAME, with conf/dataset/NAME.yaml where one sets keys; file: a
    #: file of your own)
    name: str = "digits"
    #: subsample the whole dataset to at most n_max rows (seeded; split=ordered: the
    #: first n_max rows); null = all
    n_max: Optional[int] = None
    #: fraction of the rows held out as the test set
    test_size: float = 0.25
    #: random: seeded shuffle, stratified for classes; ordered: the file's order, the first
    #: rows train and the last test_size of them test (papers' "the first N rows")
    split: str = "random"
    #: standardize: z-scores with training statistics; max: every value divided by the
    #: training rows' largest |value|; xmax: by their largest value (quffka's x / x.max(),
    #: the same as max on non-negative data); none: as loaded
    scale: str = "standardize"
    #: replaced by scale (true = standardize, false = none); setting it is an error
    standardize: Optional[bool] = None

    constraints = {
        "n_max": Int(4, none=True),
        "test_size": Real(gt=0, lt=1, text="use a number with 0 < test_size < 1"),
        "standardize": Check(lambda v: v is None, "it was replaced by dataset.scale (use "
                             "dataset.scale=standardize, dataset.scale=max or dataset.scale="
                             "none)", [True, False], none=True),
        "scale": OneOf(SCALES), "split": OneOf(SPLITS),
    }

    def __post_init__(self):
        from .datasets import DATASETS, as_loader

        DATASETS.get_or_raise(self.name, "dataset.name")
        check_constraints(self, "dataset")
        as_loader(DATASETS[self.name]).check_config(self)


def _loader_key_declarations():
    from .datasets import DATASETS, as_loader

    return unit_keys(DATASETS.builtins(), lambda obj: as_loader(obj).KEYS)


#: the dataset block's keys that only some sources read: one key per key a built-in
#: source declares (DatasetLoader.KEYS: its default, constraint and description)
LOADER_KEYS = _loader_key_declarations()
DatasetConfig = block_from_declarations("DatasetConfig", DatasetBlock, LOADER_KEYS,
                                        "dataset")


def _loader_keys(obj):
    from .datasets import as_loader

    return as_loader(obj).KEYS


DatasetConfig.applies = {k: chosen_reads("dataset", k, _datasets, _loader_keys,
                                         {"d": " (d is fixed by the data)",
                                          "n": " (dataset.n_max subsamples it)"})
                         for k in LOADER_KEYS}
