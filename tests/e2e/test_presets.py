"""The report never fails on a sweep that rffbench wrote: every preset, run at its smallest
valid size (the first value of each swept key: one seed, one D, one map ...; fewer rows,
redraws or worker processes where those made the job long: SMALLER), through
``python run.py -m experiment=NAME``, ends with its report and exit 0."""
import functools
import re

import pytest
import yaml

from tests.helpers import ROOT, assert_sweep_reported, refused, run_cli

PRESETS = sorted(p.stem for p in (ROOT / "conf" / "experiment").glob("*.yaml"))


def smallest(name):
    """The overrides that leave one value of each key the preset sweeps."""
    doc = yaml.safe_load((ROOT / "conf" / "experiment" / f"{name}.yaml").read_text())
    params = (((doc.get("hydra") or {}).get("sweeper") or {}).get("params")) or {}
    return [f"{k}={str(v).split(',')[0]}" for k, v in params.items()]


#: where the preset's smallest job is still the slow suite's longest (its rows, redraws or
#: worker processes, not its kind of records): fewer of them, the same records and report.
#: Each key is one the preset already sets (the effect rule refuses the others)
SMALLER = {
    "rahimi2007_adult": ["dataset.n_max=3000"],          # exact KRR on 32,561 rows: 74 s
    "choromanski2021": ["measure.variance.redraws=2000"],  # 20,000 redraws: 35 s
    "wacker2022_fashion_mnist": ["dataset.n_max=6000",   # 70,000 images, 5,000 points: 25 s
                                 "measure.approximation.n_points=1000"],
    "learning": ["measure.learning.processes=2"],        # 3 worker processes: 16 s
    "wilson2020_defaults": ["measure.posterior.n_test=256",  # 3 W2s of 1024 points: 15 s
                            "measure.posterior.redraws=1"],
    "speed_blas": ["measure.speed.processes=1"],          # 2 worker processes: 28 s
}


def test_every_preset_is_a_sweep_of_several_values():
    assert len(PRESETS) >= 12
    for name in PRESETS:
        assert smallest(name), name


def _downloaded_data_missing(name):
    """The dataset a preset runs on, where its files come from its site over the network
    (LIBSVM's ijcnn1) and are not here: None otherwise.  CI has no network for data."""
    from rffbench.datasets import DATASETS
    from rffbench.datasets.fetched import Download, data_home
    from tests.helpers import compose_config

    ds = compose_config([f"experiment={name}", *smallest(name)]).dataset.name
    route = getattr(DATASETS[ds], "ROUTE", None)
    if not isinstance(route, Download) or route.present(data_home() / ds):
        return None
    return ds


#: presets whose sweep another slow test runs through the command at more than their smallest
#: size and checks as this file does (helpers.assert_sweep_reported): here only where that
#: test is skipped (its data absent)
REPORTED_BY = {
    "buechel2024": "published/test_papers.py::test_the_buechel_preset_reproduces_through_run_py",
    "buechel2024_magic": "published/test_papers.py::"
                         "test_their_magic_accuracies_reproduce_through_run_py",
    "choromanski2021": "published/test_papers.py::test_formula_presets_through_run_py",
    "maps": "e2e/test_maps_and_kernels.py::"
            "test_the_maps_preset_pairs_each_new_map_with_its_kernel_and_draws_a_figure_per_kernel",
    "quadrature": "published/test_papers.py::test_the_quadrature_preset_reproduces_through_run_py",
    "quadrature_standardized": "published/test_papers.py::"
                               "test_the_standardised_variant_is_not_compared_and_the_report_says_why",
    "sutherland2015": "published/test_papers.py::test_formula_presets_through_run_py",
    "wacker2022": "published/test_papers.py::test_the_wacker_preset_reproduces_through_run_py",
    "yu2016": "published/test_papers.py::test_yu2016_preset_ratio_through_run_py",
    "wilson2020": "measure/test_posterior.py::test_the_wilson_preset_orders_the_samplers_as_"
                  "they_found",
}


def _covering_test(name):
    """The test function REPORTED_BY names for preset ``name``."""
    import importlib

    path, func = REPORTED_BY[name].split("::")
    return getattr(importlib.import_module("tests." + path[:-3].replace("/", ".")), func)


def _skipped_here(func):
    """Whether one of ``func``'s skipif marks holds on this machine (its only way to skip:
    test_each_preset_reported_elsewhere_names_a_slow_test_that_checks_it)."""
    return any(m.name == "skipif" and m.args and m.args[0]
               for m in getattr(func, "pytestmark", []))


def test_each_preset_reported_elsewhere_names_a_slow_test_that_checks_it():
    """REPORTED_BY's tests exist, are slow, run the preset they stand for through the
    command and check its sweep with the claim of this file; the fixture a test takes its
    sweep from counts as its own."""
    import inspect

    assert set(REPORTED_BY) <= set(PRESETS)
    for name in REPORTED_BY:
        func = _covering_test(name)
        assert any(m.name == "slow" for m in func.pytestmark), name
        module = inspect.getmodule(func)
        fixtures = [getattr(module, a) for a in inspect.signature(func).parameters
                    if hasattr(module, a)]
        source = "".join(inspect.getsource(f) for f in (func, *fixtures))
        assert "assert_sweep_reported(" in source, name
        # it skips only by its marks, which _skipped_here reads: a skip inside it would
        # leave the preset run by neither
        assert "pytest.skip(" not in source and "importorskip" not in source, name
        assert re.search(rf"run_cli\([^)]*experiment={{?{name}\b", source) or \
            (f'"{name}"' in source and "experiment={preset}" in source), name


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESETS)
def test_a_preset_at_its_smallest_size_is_reported(tmp_path, name):
    missing = _downloaded_data_missing(name)
    if missing:
        pytest.skip(f"dataset={missing}: python -m rffbench.datasets fetch {missing} (needs "
                    "the network once)")
    if name in REPORTED_BY and not _skipped_here(_covering_test(name)):
        pytest.skip(f"its sweep is run and reported by tests/{REPORTED_BY[name]}")
    sweep = tmp_path / name
    p = run_cli("-m", f"experiment={name}", *smallest(name), *SMALLER.get(name, []),
                f"hydra.sweep.dir={sweep}", timeout=1200)
    assert_sweep_reported(p, sweep)
    assert re.search(r"\(complete: 1 complete\)", p.stdout), p.stdout[-2000:]


# --------------------------------------------------------------------------
# a preset never overrules the command line silently
# --------------------------------------------------------------------------
def _preset_bodies(name, seen=None):
    """(file, body) of a preset and of every preset and group file its defaults list names,
    the keys each sets outside ``defaults``, ``hydra`` and ``experiment``."""
    seen = set() if seen is None else seen
    conf = ROOT / "conf"
    out = []
    for path in [conf / "experiment" / f"{name}.yaml"]:
        if path in seen or not path.exists():
            continue
        seen.add(path)
        doc = yaml.safe_load(path.read_text()) or {}
        for entry in doc.get("defaults") or []:
            if isinstance(entry, str) and entry != "_self_":
                out += _preset_bodies(entry, seen)
            elif isinstance(entry, dict):
                (group, option), = entry.items()
                group = group.removeprefix("override ").strip("/")
                file = conf / group / f"{option}.yaml"
                if group not in ("dataset", "model", "hydra/launcher") and file.exists():
                    sub = yaml.safe_load(file.read_text()) or {}
                    out.append((file, {k: v for k, v in sub.items() if k != "defaults"}))
        out.append((path, {k: v for k, v in doc.items()
                           if k not in ("defaults", "hydra", "experiment")}))
    return out


def _leaves(d, prefix=""):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _leaves(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def _override_value(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_override_value(x) for x in v) + "]"
    if isinstance(v, str):
        return repr(v)
    return repr(v)


@functools.lru_cache(maxsize=1)
def _unchosen_options():
    """group -> a registered option that no file under conf/ names (outside the group's own
    folder): no preset can choose it, so a preset composed with it on the command line
    shows whether the command line's choice took effect (one composition per preset)."""
    from rffbench.datasets import DATASETS
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import KERNELS

    conf = ROOT / "conf"
    registries = {"dataset": DATASETS, "kernel": KERNELS, "features": FEATURE_MAPS,
                  "model": ["sgd", "ridge"]}
    out = {}
    for group, options in registries.items():
        words = set()
        for f in conf.rglob("*.yaml"):
            if f.parent.name != group:
                words |= set(re.findall(r"[A-Za-z0-9_]+", f.read_text()))
        out[group] = next(o for o in options if o not in words and o != "file")
    return out


@pytest.mark.parametrize("name", PRESETS)
def test_every_group_and_key_a_preset_pins_yields_to_the_command_line(name):
    """For every preset, each group whose option it chooses (dataset, kernel, features,
    model), given another option on the command line, composes to the command line's
    choice (the check that would refuse it otherwise passes); and each key it (or a preset
    or group file it names) sets, given the schema's default on the command line, composes
    to that default.  One composition with all of them (a composition costs 0.45 s), with
    options no preset chooses."""
    from omegaconf import OmegaConf

    from rffbench.config import NAMED_GROUPS, Config
    from tests.helpers import compose_config

    base = [f"experiment={name}", *smallest(name)]
    groups = _unchosen_options()
    assert set(groups) == set(NAMED_GROUPS)
    defaults = OmegaConf.structured(Config)
    keys = {}
    for file, body in _preset_bodies(name):
        for key, value in _leaves(body):
            default = OmegaConf.select(defaults, key, default="absent")
            if default == "absent" or OmegaConf.is_missing(defaults, key) or \
                    value == default or key in {f"{g}.name" for g in NAMED_GROUPS}:
                continue  # not the schema's key, the file's value the default, or a group's
            keys[key] = (file.name, default)
    if name not in ("maps", "quadrature_standardized"):
        assert keys, name  # every other preset pins a key
    got = compose_config([*base, *(f"{g}={o}" for g, o in groups.items()),
                          *(f"{k}={_override_value(d)}" for k, (_, d) in keys.items())])
    for group, other in groups.items():
        assert got[group].name == other, (name, group, other, got[group].name)
    for key, (file, default) in keys.items():
        assert OmegaConf.select(got, key) == default, (name, file, key, default)


def test_a_presets_dataset_yields_to_the_command_lines_and_a_body_that_overrules_is_refused(
        tmp_path):
    """Through ``python run.py``: experiment=buechel2024_magic dataset=wine runs on wine
    (the preset chose magic); a preset of the user's that sets dataset.name in its body,
    after the command line's dataset=, is refused in one line naming it and the key, with
    nothing written."""
    from rffbench.results import RECORDS_FILE, read_records

    p = run_cli("experiment=buechel2024_magic", "dataset=wine", "+buechel_method=gaussian_rff",
                "D=19", "seed=0", "measure.approximation.redraws=2",
                "measure.approximation.n_points=null", "hydra.mode=RUN",
                f"hydra.run.dir={tmp_path / 'magic'}")
    assert p.returncode == 0, p.stderr[-2000:]
    assert set(read_records(tmp_path / "magic" / RECORDS_FILE).dataset) == {"wine"}
    mine = tmp_path / "conf" / "experiment"
    mine.mkdir(parents=True)
    (mine / "mine.yaml").write_text("# @package _global_\nexperiment: mine\n"
                                    "dataset:\n  name: synthetic\n")
    p = run_cli(f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "experiment=mine",
                "dataset=wine", f"hydra.run.dir={tmp_path / 'r'}")
    assert refused(p, tmp_path / "r") == (
        "rffbench: error: dataset=wine is not allowed here: experiment=mine sets "
        "dataset.name='synthetic' after the command line's choice, which would overrule it; "
        "use dataset.name=wine to overrule the preset, or leave dataset= out")
