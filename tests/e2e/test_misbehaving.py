"""Plug-ins that misbehave or are slightly wrong (tests/fixtures/wrong_plugins.py): each
run stops with one line naming the plug-in (its import path, or its distribution and entry
point), what was checked and the key to change; no records; the other runs of a sweep go
on; check_feature_map names the same problems."""
import json
import subprocess
import sys
import warnings

import pytest

from rffbench.experiment import main as run_main
from rffbench.results import RECORDS_FILE
from tests.helpers import ROOT, compose_config

FIXTURES = ROOT / "tests" / "fixtures"
SMALL = ["D=64", "measure.bounds.trials=2", "measure.learning.repeats=1"]


@pytest.fixture
def wrong(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    import wrong_plugins

    return wrong_plugins


CASES = [
    ("features.name", "NanMap", "transform returned 1 NaN/inf value(s) (first at row"),
    ("features.name", "InfMap", "transform returned 1 NaN/inf value(s) (first at row 0, column 0)"),
    ("features.name", "ShapeMap", "transform returned shape (1000, 63) for 1000 input rows; "
                                  "expected (1000, 64)"),
    ("features.name", "RowsMap", "transform returned shape (5, 64) for 1000 input rows"),
    ("features.name", "DtypeMap", "transform returned float32 values for float64 input"),
    ("features.name", "ListMap", "transform returned a list, not a numpy array"),
    ("features.name", "FitRaises", "fit raised ValueError: this map only takes 3 input "
                                   "dimensions"),
    ("features.name", "TransformRaises", "transform raised RuntimeError: cuda unavailable"),
    ("features.name", "AbstractMap", "is not a usable feature map: FeatureMap does not "
                                     "implement _fit (or fit) and _transform_into (or transform)"),
    ("kernel.name", "NonSymmetric", "its Gram on 200 training rows is not symmetric"),
    ("kernel.name", "NotPSD", "its Gram on 200 training rows is not positive semidefinite "
                              "(smallest eigenvalue -"),
    ("kernel.name", "NoSampler", "features=rff is not allowed with kernel=wrong_plugins:NoSampler: "
                                 "the map draws from the kernel's sample_frequencies, which "
                                 "wrong_plugins:NoSampler does not implement"),
    ("kernel.name", "NoGram", "is not a usable kernel: NoGram does not implement tile_spec (or "
                              "_gram_into)"),
    ("dataset.name", "two_values", "the loader returned a tuple of 2 values; a loader returns "
                                   "three values (X, y, info)"),
    ("dataset.name", "short_labels", "the loader returned X of shape (300, 3) and y of shape "
                                     "(299,)"),
    ("dataset.name", "string_targets", "the regression target is not numbers (dtype object"),
    ("dataset.name", "NotALoader", "is not a dataset: it must be a rffbench.datasets."
                                   "DatasetLoader (class or instance) or a function"),
    ("dataset.name", "AbstractLoader", "is not a usable dataset: AbstractLoader does not "
                                       "implement load"),
]


@pytest.mark.parametrize("key,name,match", CASES, ids=[c[1] for c in CASES])
@pytest.mark.slow
def test_a_misbehaving_plugin_is_one_line(wrong, tmp_path, capsys, key, name, match):
    out = tmp_path / "out"
    try:
        cfg = compose_config([f"{key}=wrong_plugins:{name}"] + SMALL)
        code = run_main(cfg, out)
        err = capsys.readouterr().err.strip()
    except Exception as exc:  # refused while composing: what run.py prints
        from rffbench.errors import RffbenchError

        assert isinstance(exc.__cause__ or exc, RffbenchError) or "ConfigError" in repr(exc), exc
        code, err = 2, str(exc)
    assert code == 2 and match in err, err
    assert len(err.splitlines()) == 1, err
    assert f"wrong_plugins:{name}" in err, err
    if "is not" not in match:  # a run-time check: the plug-in is named with the key
        assert f"{key}='wrong_plugins:{name}' (import path wrong_plugins:{name})" in err \
            or f"dataset=wrong_plugins:{name} (import path wrong_plugins:{name})" in err \
            or key == "kernel.name", err
    assert not (out / RECORDS_FILE).exists()


def test_a_kernel_whose_explicit_features_miss_its_gram_is_one_line(wrong, tmp_path, capsys):
    """A plug-in kernel that declares an explicit feature map (exact KRR's products would
    go through it) whose phi phi^T is not its Gram: refused before any measurement."""
    out = tmp_path / "out"
    cfg = compose_config(["kernel.name=wrong_plugins:WrongFeatures", "features=nystrom"] + SMALL)
    assert run_main(cfg, out) == 2
    err = capsys.readouterr().err.strip()
    assert "wrong_plugins:WrongFeatures" in err and len(err.splitlines()) == 1, err
    assert "its explicit features do not reproduce its Gram (max |phi phi^T - K| =" in err, err
    assert not (out / RECORDS_FILE).exists()


def test_string_class_labels_are_classes(wrong, tmp_path):
    """Labels given as strings are a valid classification dataset (encoded 0..k-1)."""
    from rffbench.config import DatasetConfig
    from rffbench.datasets import load_dataset

    data = load_dataset(DatasetConfig(name="wrong_plugins:string_labels"), seed=0)
    assert data.task == "classification" and set(data.y_train) == {0, 1}
    cfg = compose_config(["dataset.name=wrong_plugins:string_labels"] + SMALL)
    assert run_main(cfg, tmp_path / "out") == 0
    assert (tmp_path / "out" / RECORDS_FILE).exists()


def test_check_feature_map_names_the_same_problems(wrong):
    from rffbench.testing import check_feature_map

    expect = {"NanMap": "NaN/inf value(s)", "ShapeMap": "returned shape (10, 31)",
              "DtypeMap": "returned float32 values for float64 input",
              "ListMap": "returned a list", "TransformRaises": "transform raised RuntimeError"}
    for name, match in expect.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = check_feature_map(getattr(wrong, name), raise_on_fail=False,
                                  sklearn_checks=False)
        failed = [c for c in r.checks if c.status == "failed"]
        assert failed and failed[0].name.startswith("output") and match in failed[0].detail, r


@pytest.mark.slow
def test_installed_plugins_are_named_by_distribution_and_entry_point_in_a_sweep(tmp_path):
    """What users type, with the plug-ins installed as a distribution (a dist-info with
    entry points on the path): a sweep over a NaN map and rff, the Gaussian and a kernel
    that is not PSD.  The three runs with a bad plug-in fail with one line naming
    distribution and entry point, the fourth completes, the report says so."""
    site = tmp_path / "site"
    info = site / "wrongplug-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wrongplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[rffbench.feature_maps]\nnan_map = wrong_plugins:NanMap\n\n"
        "[rffbench.kernels]\nnot_psd = wrong_plugins:NotPSD\n\n"
        "[rffbench.datasets]\nshort_labels = wrong_plugins:short_labels\n")
    env = dict(__import__("os").environ, PYTHONPATH=f"{site}:{FIXTURES}")
    sweep = tmp_path / "sweep"
    p = subprocess.run([sys.executable, "run.py", "-m", "features.name=nan_map,rff",
                        "kernel.name=gaussian,not_psd", f"hydra.sweep.dir={sweep}"] + SMALL,
                       cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
    assert p.returncode != 0, p.stderr[-2000:]
    runs = sorted((sweep / "runs").iterdir())
    done = [r for r in runs if (r / RECORDS_FILE).exists()]
    errors = [(r / "error.txt").read_text() for r in runs if (r / "error.txt").exists()]
    assert len(runs) == 4 and len(done) == 1 and len(errors) == 3, (runs, p.stderr[-2000:])
    cfg = json.loads((done[0] / "config.json").read_text())["config"]
    assert (cfg["features"]["name"], cfg["kernel"]["name"]) == ("rff", "gaussian")
    ep_map = "plug-in wrongplug, entry point rffbench.feature_maps: nan_map = wrong_plugins:NanMap"
    ep_kernel = ("plug-in wrongplug, entry point rffbench.kernels: not_psd = "
                 "wrong_plugins:NotPSD")
    assert sum(ep_map in e for e in errors) == 1, errors
    assert sum(ep_kernel in e and "not positive semidefinite" in e for e in errors) == 2, errors
    assert "1 complete, 3 failed" in p.stdout + p.stderr, (p.stdout[-1500:], p.stderr)
    # a dataset plug-in, alone
    p = subprocess.run([sys.executable, "run.py", "dataset.name=short_labels",
                        f"hydra.run.dir={tmp_path / 'one'}"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600, env=env)
    err = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(err) == 1, p.stderr
    assert ("dataset=short_labels (plug-in wrongplug, entry point rffbench.datasets: "
            "short_labels = wrong_plugins:short_labels): the loader returned X of shape "
            "(300, 3) and y of shape (299,)") in err[0], err


@pytest.mark.parametrize("overrides,match", [
    (["features.name=wrong_plugins:ParamMap", "+features.params.damping=abc"],
     "fit raised TypeError: unsupported operand type(s) for -: 'float' and 'str'; check its "
     "parameters (features.params: damping='abc')"),
    (["features.name=wrong_plugins:ParamMap", "+features.params.damping=2"],
     "transform returned 64000 NaN/inf value(s) (first at row 0, column 0) for finite input; "
     "check its parameters (features.params: damping=2)"),
    (["features=orf", "+features.params.pairs=false"],
     "features.params.pairs=False is not allowed: set it with features.pairs=False"),
    (["+features.params.n_components=5"],
     "features.params.n_components=5 is not allowed: set it with D=5"),
    (["+features.params.lengthscale=2"],
     "features.params.lengthscale=2 is not allowed: set it with kernel.lengthscale=2"),
])
def test_map_parameters_through_features_params(wrong, tmp_path, capsys, overrides, match):
    """A map's own parameters given through features.params: a value its class does not
    check fails inside the map (named with the parameters given); a common parameter or a
    map option with a key of its own names that key."""
    code = run_main(compose_config(overrides + SMALL), tmp_path / "out")
    err = capsys.readouterr().err.strip()
    assert code == 2 and match in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "out" / RECORDS_FILE).exists()


def test_a_plugin_class_made_inside_a_function_is_refused_before_worker_processes(
        wrong, tmp_path):
    """Through ``python run.py``: a map class that pickle cannot send (made by a function)
    with measure.learning.processes=2 is one line naming both keys, exit 2, no records;
    with one process it runs (nothing is sent)."""
    from tests.helpers import refused, run_cli

    args = ["features.name=wrong_plugins:MadeMap", "dataset=synthetic", "dataset.n=200",
            "dataset.d=3", "D=16", "measure.bounds.enabled=false",
            "measure.approximation.enabled=false", "measure.learning.exact=false"]
    p = run_cli(*args, "measure.learning.processes=2", f"hydra.run.dir={tmp_path / 'a'}")
    line = refused(p, tmp_path / "a")
    assert line.startswith("rffbench: error: measure.learning.processes=2 is not allowed "
                           "with features.name='wrong_plugins:MadeMap': its class cannot be "
                           "sent to the worker processes (")
    assert line.endswith("define it at the top level of an importable module (not inside a "
                         "function), or use measure.learning.processes=1")
    p = run_cli(*args, f"hydra.run.dir={tmp_path / 'b'}")
    assert p.returncode == 0, p.stderr[-2000:]
