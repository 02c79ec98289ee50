"""``python run.py --help``: rffbench's own help, built from the registries.

conf/config.yaml sets Hydra's app-help template to the resolver
``rffbench_help`` (registered by :mod:`rffbench.cli`), so the text lists what
is installed now, plug-ins included: kernels, maps with the kernels they
support, datasets, models and presets, then the main keys.
"""
from __future__ import annotations

import inspect
import os
import re
import textwrap

#: the repository's conf/ (the project's fixed layout: rffbench/ beside conf/)
CONF_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "conf")

#: the keys --help shows, each with its default from the schema (a literal where the
#: entry is a pattern rather than a key)
MAIN_KEYS = [
    ("D", "output dimension of the feature map (even for cos/sin pair maps)"),
    ("D_unit", "or frequencies: D counts the map's frequencies (as papers that do)"),
    ("seed", "frequencies, subsamples and the train/test split derive from it"),
    ("kernel.lengthscale", "a number, median (pairwise distance of training points) or "
                           "knn50 (mean distance to the 50th nearest neighbour)"),
    ("kernel.gamma", "scikit-learn's gamma instead (gaussian 1/(2 l^2), laplacian 1/l)"),
    ("dataset.n_max", "subsample the data to at most this many rows"),
    ("dataset.scale", "z-scores; max: x / max|x| (keeps the kernel); none"),
    ("dataset.split", "or ordered: the file's first rows train (papers' protocols)"),
    ("dataset.n dataset.d", "size and dimension of dataset=synthetic (d null: 8)"),
    ("model.lam", "ridge parameter, or the best of model.lam_grid on a validation split"),
    ("model.exact_max_n", "exact KRR above it is skipped; past 10000 rows it runs by cg"),
    ("dataset=file dataset.path=F", "svmlight, csv, npz; .npy / .parquet are streamed"),
    ("backend.name", "or dask: ridge and exact KRR's products on a Dask cluster"),
    ("report.center", "seeds summarised by mean + 95% interval, or median + min-max"),
    ("report.latex", "tables also as report/latex/NAME.tex: plain, siunitx (\\num{}), none"),
    ("threads dtype", "numba + BLAS threads (null: all cores); float32 | float64"),
    ("device", "or cuda: the map's transforms and exact KRR's products on an NVIDIA GPU "
               "(pip install -e '.[gpu]')"),
    ("features.params.NAME=value", "a map's own parameter (e.g. orf's layout) or a plug-in's"),
    ("kernel.params.NAME=value", "a further keyword argument of a plug-in kernel"),
]


def _main_keys():
    """MAIN_KEYS with each key's default (``key=default``, null for None) and, where the
    key declares its values (rffbench.checks), what it allows."""
    from .config import Config

    root = Config()

    def walk(key):
        obj = root
        parts = key.split(".")
        for part in parts[:-1]:
            obj = getattr(obj, part)
        c = (getattr(type(obj), "constraints", None) or {}).get(parts[-1])
        value = getattr(obj, parts[-1])
        return ("null" if value is None else str(value)), c

    rows = []
    for keys, text in MAIN_KEYS:
        shown, allowed = [], []
        for k in keys.split():
            if "=" in k:
                shown.append(k)
                continue
            default, c = walk(k)
            shown.append(f"{k}={default}")
            if c is not None:
                allowed.append(c.text.removeprefix("use "))
        rows.append((" ".join(shown), text + (f" [{'; '.join(allowed)}]" if allowed else "")))
    return rows


def _measurements():
    """(name [on|off], summary [plug-in]) of every registered measurement."""
    from .measure import MEASUREMENTS, measurement_classes

    rows = []
    for name, cls in measurement_classes().items():
        on = "on" if cls.Config().enabled else "off"
        rows.append((f"{name} [{on}]", cls.summary() + _origin(MEASUREMENTS, name)))
    return rows


def _first_line(obj):
    """The first sentence of the docstring's first paragraph, without rst markup and
    without a leading ``name``: label."""
    para = " ".join((inspect.getdoc(obj) or "").strip().split("\n\n")[0].split())
    para = re.sub(r"^``\w+``:\s*", "", para).replace("``", "")
    return re.split(r"(?<!et al)(?<=[a-z0-9)\]])\.\s+(?=[A-Z])", para + " ")[0].strip().rstrip(".")


def _origin(registry, name):
    o = registry.origin(name)
    return "" if o == "rffbench" else f" [{o}]"


def _rows(rows, indent=2):
    w = max((len(a) for a, _ in rows), default=0)
    out = []
    for a, b in rows:
        lines = textwrap.wrap(b, 98 - indent - w - 2, break_on_hyphens=False) or [""]
        out.append(" " * indent + a.ljust(w) + "  " + lines[0])
        out += [" " * (indent + w + 2) + rest for rest in lines[1:]]
    return "\n".join(out)


def _safe(registry, name, describe):
    try:
        return describe(registry[name]) + _origin(registry, name)
    except Exception as exc:  # a broken plug-in must not break --help
        return f"cannot load: {exc}"


def own_keys(cls, blocks):
    """The config keys a kernel or map declares beyond the common ones, each with its
    default and allowed values, ``[kernel.nu=1.5: one of 0.5, 1.5, 2.5]`` (from its
    declarations: the same source as the schema's keys); ``blocks``: {parameter: the key
    it is set under, ``kernel`` or ``kernel.params``, ``features`` or ``features.params``}."""
    from .checks import declared, signature_defaults

    cons, defaults = declared(cls), signature_defaults(cls)
    shown = []
    for k, block in blocks.items():
        c, d = cons.get(k), defaults.get(k)
        allowed = f": {c.text.removeprefix('use ')}" if c is not None else ""
        shown.append(f" [{block}.{k}={'null' if d is None else d}{allowed}]")
    return "".join(shown)


def _listing(title, registry, describe=_first_line):
    """A section of --help: the title, a line per entry of the registry, a blank line."""
    return [title, _rows([(n, _safe(registry, n, describe)) for n in registry]), ""]


def _presets():
    d = os.path.join(CONF_DIR, "experiment")
    rows = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not f.endswith(".yaml"):
            continue
        q = []
        with open(os.path.join(d, f)) as fh:
            for ln in fh:
                if ln.startswith("# Question:") or (q and ln.startswith("#")):
                    q.append(ln[1:].strip())
                    if "?" in ln:
                        break
        text = " ".join(q).replace("Question: ", "")
        rows.append((f[:-5], text[:text.find("?") + 1] if "?" in text else text))
    return rows


def help_text():
    from .config import KERNEL_KEYS, OWN_KEYS, KernelBlock
    from .datasets import DATASETS
    from .features import FEATURE_MAPS
    from .kernels import KERNELS
    from .models import MODELS

    def kernel_desc(cls):
        return _first_line(cls) + own_keys(cls, {
            k: "kernel" if k in KERNEL_KEYS else "kernel.params"
            for k in cls._get_param_names() if k not in KernelBlock.COMMON})

    def map_desc(cls):
        extra = tuple(getattr(cls, "EXTRA_KERNELS", ()))
        kernels = ", ".join(cls.KERNELS) if cls.KERNELS else \
            ("any shift-invariant kernel" + (f", {', '.join(extra)}" if extra else "")
             if cls.SHIFT_INVARIANT_ONLY else "any kernel")
        fam = f"; bounds: {cls.tags.variance} family" if cls.tags.variance else ""
        keys = own_keys(cls, {k: "features" if k in cls.CONFIG_PARAMS else "features.params"
                              for k in cls._get_param_names() if k not in OWN_KEYS})
        return f"{_first_line(cls)} ({kernels}{fam}){keys}"

    parts = [
        "rffbench: random Fourier features benchmarked against the exact kernel machine.",
        "",
        "Usage:",
        "  rffbench [key=value ...]                     one run (records in results/runs/...)",
        "  rffbench -m key=a,b [key=c,d ...]            a sweep: one job per combination, "
        "resumable,",
        "                                               reported in SWEEP_DIR/report/index.html",
        "  rffbench -m experiment=NAME                  a preset sweep (below)",
        "  rffbench-report SWEEP_DIR                    the report of a sweep, again",
        "  (in a checkout: python run.py ... and python -m rffbench.report ... are the same)",
        "",
        *_listing("Kernels (kernel=NAME; its own keys in brackets):", KERNELS, kernel_desc),
        *_listing("Feature maps (features=NAME; D is the output dimension):", FEATURE_MAPS,
                  map_desc),
        *_listing("Datasets (dataset=NAME; none downloads at run time: bundled with "
                  "scikit-learn or rffbench, Debian packages, `python -m rffbench.datasets "
                  "fetch NAME` once, files):", DATASETS),
        *_listing("Models on the features (model=NAME; exact kernel ridge is the baseline):",
                  MODELS),
        "Measurements (measure.NAME.enabled=true|false; default in brackets):",
        _rows(_measurements()),
        "",
        "Presets (rffbench -m experiment=NAME):",
        _rows(_presets()),
        "",
        "Main keys (defaults shown; every key of the config can be overridden):",
        _rows(_main_keys()),
        "",
        "Plug-ins: a package adds maps, kernels, datasets or measurements through the entry-point",
        "groups rffbench.feature_maps, rffbench.kernels, rffbench.datasets, rffbench.models,",
        "rffbench.measurements",
        "(then features=NAME, measure.NAME.enabled=true work), or",
        "features.name=package.module:Class without installing anything (the documentation's",
        "python.md, \"Bring your own map\", and its example plug-in package).",
        "",
        "More: rffbench --cfg job [key=value ...] prints the whole composed config;",
        "rffbench --hydra-help, Hydra's own options; the presets and the groups that set keys,",
        "commented, in",
        "  " + os.path.join(os.path.dirname(os.path.abspath(__file__)), "conf"),
        _docs_line(),
    ]
    return "\n".join(parts)


def _docs_line():
    """Where the documentation is: a checkout's docs/, or the source repository's."""
    docs = os.path.join(os.path.dirname(CONF_DIR), "docs")
    if os.path.isfile(os.path.join(docs, "quickstart.md")):
        return f"and the documentation (quickstart.md, python.md, sweeps.md, ...) in\n  {docs}"
    return ("and the documentation in the docs/ folder of rffbench's source repository (it is "
            "not\ninstalled with the package).")


def maps_matrix():
    """Which map represents which kernel, as a Markdown table made from the declarations
    (each map's ``check_kernel``, the rule a run applies, and its ``tags.variance``): the
    table of docs/kernels-and-maps.md, rewritten when the docs are built."""
    from .errors import ConfigError
    from .features import FEATURE_MAPS
    from .kernels import KERNELS

    kernels = list(KERNELS.builtins())

    def ok(cls, k):
        try:
            cls.check_kernel(k)
            return True
        except ConfigError:
            return False

    lines = ["| map | " + " | ".join(kernels) + " | family |",
             "|---" * (len(kernels) + 2) + "|"]
    for name, cls in FEATURE_MAPS.builtins().items():
        marks = " | ".join("x" if ok(cls, k) else "" for k in kernels)
        lines.append(f"| `{name}` | {marks} | {cls.tags.variance or ''} |")
    return "\n".join(lines)
