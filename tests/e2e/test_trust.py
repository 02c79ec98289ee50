"""Every recorded number one can stand behind, through the command users type: a setting
that has no effect is refused, a degenerate or non-finite value is refused before the run
(or recorded as n/a with its reason), a refusal names the key the user set in the user's
unit, and inputs that used to end in a traceback end in one line.

The command-line cases run in the test's own process through the ``rffbench`` entry point
(``tests.helpers.run_cli``: Hydra's command line and all, the output and exit code as a
process gives them), to spare a Python start per case; a few that depend on the process
itself run as their own command.
"""
import os
import re
import sys

import numpy as np
import pytest

from rffbench.memory import available_bytes
from tests.helpers import ROOT, in_process, run_cli, run_module

GIB = 2.0**30

#: (command-line arguments, exit code, regex the last line of stderr must match)
CASES = [
    # a setting that has no effect here
    (["features=rff", "features.sequence=halton"], 2,
     r"features.sequence='halton' is not allowed: it has no effect here \(features=rff does "
     r"not use features.sequence; features=qmc does\); leave it at its default 'sobol'"),
    (["features.pairs=true"], 2, r"features.pairs=True is not allowed: it has no effect here"),
    (["model.exact_precision=mixed", "model.exact_solver=cholesky"], 2,
     r"model.exact_precision='mixed' is not allowed: it has no effect here "
     r"\(model.exact_solver=cholesky: only the cg solver uses it\)"),
    (["model.exact_precision=mixed"], 2,  # auto resolves to Cholesky on digits: at run time
     r"model.exact_precision='mixed' is not allowed: it has no effect here \(model.exact_solver"
     r"=auto solves exact KRR by cholesky at n_train=1348"),
    (["model.cg_tol=1e-4", "measure.learning.exact=false"], 2,
     r"model.cg_tol=0.0001 is not allowed: .*measure.learning.exact=false"),
    (["backend.address=tcp://1.2.3.4:8786"], 2,
     r"backend.address='tcp://1.2.3.4:8786' is not allowed: it has no effect here "
     r"\(backend.name=local"),
    (["backend.name=dask", "backend.address=tcp://1.2.3.4:8786", "backend.workers=4"], 2,
     r"backend.workers=4 is not allowed: .*backend.address is set"),
    (["kernel.nu=2.5"], 2, r"kernel.nu=2.5 is not allowed: it has no effect here "
                           r"\(kernel=gaussian does not use kernel.nu; kernel=matern does\)"),
    (["kernel=polynomial", "features=nystrom", "kernel.skewedness=2"], 2,
     r"kernel.skewedness=2.0 is not allowed"),
    (["kernel.lengthscale=2", "kernel.median_subsample=50"], 2,
     r"kernel.median_subsample=50 is not allowed: .*kernel.lengthscale=2.0 is a number"),
    (["dataset.n=300"], 2, r"dataset.n=300 is not allowed: .*dataset.n_max subsamples it"),
    (["dataset.task=classification"], 2, r"dataset.task='classification' is not allowed"),
    (["dataset.target=y"], 2, r"dataset.target='y' is not allowed: .*; dataset=file does\); "
                               r"leave it at its default \(null\)"),
    (["measure.variance.enabled=true", "measure.variance.pairs=data",
      "measure.variance.sums=[1.0]"], 2,
     r"measure.variance.sums=\[1.0\] is not allowed: .*pairs=data"),
    (["model.lam=0.1", "model.val_size=0.3"], 2,
     r"model.val_size=0.3 is not allowed: .*only model.lam=auto chooses it"),
    (["model.epochs=3"], 2, r"model.epochs=3 is not allowed: .*model=ridge does not use"),
    (["model=sgd", "model.center=false", "measure.learning.exact=false"], 2,
     r"model.center=False is not allowed: .*model=sgd does not use model.center"),
    (["D_n=2", "D=64"], 2, r"D=64 is not allowed: it has no effect here \(D_n is set"),
    # degenerate or non-finite values: refused before the run
    (["experiment=choromanski2021", "hydra.mode=RUN", "features=positive",
      "measure.variance.sums=[30]"], 2,
     r"measure.variance.sums=\[30.0\] is not allowed with features=positive and kernel="
     r"gaussian: the exact mean squared error overflows float64 above \|x \+ y\| = 26.6\d* "
     r"lengthscales.*use sums <= 26.6"),
    (["experiment=choromanski2021", "hydra.mode=RUN", "measure.variance.distances=[1e300]"], 2,
     r"measure.variance.distances=\[1e\+300\] is not allowed with kernel.lengthscale=1: "
     r".*use distances <= 1e\+100"),
    # refusals in the user's words: the key set, its unit, the value that fits
    (["D_n=100000", "features=ssr"], 2,
     r"^rffbench: error: D_n=100000 is not allowed: .*; D_n <= \d+ fits$"),
    (["D=20000000", "D_unit=frequencies", "features=rff_pairs"], 2,
     r"^rffbench: error: D=20000000 is not allowed: .*; D <= \d+ fits$"),
    (["experiment=choromanski2021", "hydra.mode=RUN", "measure.variance.redraws=2000000000"], 2,
     r"^rffbench: error: measure.variance.redraws=2000000000 is not allowed: .*"
     r"measure.variance.redraws <= \d+ fits$"),
    (["measure.approximation.redraws=10000000000"], 2,
     r"^rffbench: error: measure.approximation.redraws=10000000000 is not allowed: .*"
     r"measure.approximation.redraws <= \d+ fits$"),
    (["D_n=200", "features=nystrom"], 2,
     r"D=26000 \(from D_n=200: the output dimension 2 D_n \(d \+ 1\)\) is not allowed for "
     r"features=nystrom"),
    # inputs that ended in a traceback
    (["features=leverage", "+features.params.fit_rows=0"], 2,
     r"features.params.fit_rows=0 is not allowed: use an integer >= 1"),
    (["features=leverage", "+features.params.fit_rows=2.5"], 2,
     r"features.params.fit_rows=2.5 is not allowed"),
    (["features=qmc", "dataset=synthetic", "dataset.d=30000", "dataset.n=100", "D=64"], 2,
     r"features.sequence='sobol' is not allowed with d=30000: scipy's Sobol sequence has at "
     r"most 21201 dimensions"),
    (["features=qmc", "kernel=matern", "dataset=synthetic", "dataset.d=21201", "dataset.n=100",
      "D=64"], 2, r"the map draws 21202-dimensional points"),
    (["backend.name=dask", "backend.workers=100000"], 2,
     r"backend.workers=100000 x backend.threads_per_worker=1 is not allowed: a LocalCluster "
     r"runs on this machine"),
    (["backend.name=dask", "backend.threads_per_worker=100000"], 2,
     r"backend.threads_per_worker=100000 is not allowed"),
    (["backend.name=dask", "backend.timeout=1e300"], 2,
     r"backend.timeout=1e\+300 is not allowed: use a number of seconds in \[1, 86400\]"),
    (["features.name=exits_on_import:M"], 2,
     r"cannot load the import path .*SystemExit: 2 \(the module exits when it is imported.*"
     r"It printed: 'run.py: error: unrecognized arguments"),
    # found beside the cases (the same families)
    (["kernel=1"], 2, r"^rffbench: error: kernel=1 is not allowed: use one of additive_chi2, "
                      r"anova, arccos0, .*skewed_chi2$"),  # was Hydra's ValueError traceback
    (["experiment=null"], 2, r"experiment=null is not allowed: use one of bounds, "),
    (["dataset=[digits,nope]"], 2, r"dataset=nope is not allowed: use one of (\w+, )*digits, "
                                   r"(\w+, )*wine$"),
    (["--help", "nope"], 2, r"cannot read the override 'nope': missing EQUAL"),
    (["--resolve"], 2, r"The --resolve flag can only be used in conjunction with --cfg"),
    (["features=leverage", "features.params.fitrows=500"], 2,
     r"features.params.fitrows=500 is not allowed: features=leverage takes fit_rows, "
     r"leverage_lam, oversample \(did you mean features.params.fit_rows\?\)"),
    (["report.center=median"], 2, r"report.center='median' is not allowed: it has no effect "
                                  r"here \(one run alone has no report"),
    (["report.pdf=false"], 2, r"report.pdf=False is not allowed: it has no effect here "
                              r"\(one run alone has no report"),
    (["-m", "report.pdf=maybe"], 2, r"report.pdf=maybe is not allowed: Value 'maybe' is not a "
                                    r"valid bool"),
    (["measure.speed.enabled=true", "measure.speed.parts=[gram]", "measure.speed.maps=[rff]"],
     2, r"measure.speed.maps=\['rff'\] is not allowed: it has no effect here \(measure.speed"
        r".parts=\['gram'\] leaves out maps\)"),
    (["measure.speed.enabled=true", "measure.speed.maps=[]"], 2,
     r"measure.speed.maps=\[\] is not allowed: use a non-empty list of map names"),
    (["model.exact_solver=cg", "model.cg_tol=1e-300"], 2,
     r"model.cg_tol=1e-300 is not allowed: use a number in \[1e-14, 1\)"),
    (["model.lam_grid=[1,1]"], 2, r"model.lam_grid=\[1.0, 1.0\] is not allowed: use a "
                                   r"non-empty list of distinct numbers > 0"),
    (["dataset.test_size=0.999"], 2,
     r"1444 of the 1795 test rows are of class\(es\) 0, 1, 2, 3, 4 ... that no training row "
     r"has \(their error is 1 by construction\); the training split holds 2 rows for 10 "
     r"classes: lower dataset.test_size"),
    (["backend.name=dask", "backend.address=no-such-host.invalid"], 2,
     r"backend.address='tcp://no-such-host.invalid:8786': cannot connect to a Dask scheduler "
     r"there \(the host 'no-such-host.invalid' is unknown"),
    (["measure.bounds.pairs=1000000000"], 2,
     r"^rffbench: error: measure.bounds.pairs=1000000000 is not allowed: .*"
     r"measure.bounds.pairs <= \d+ fits$"),  # named measure.bounds.trials, which was not set
    (["measure.variance.enabled=true", "measure.variance.pairs=data",
      "measure.variance.n_pairs=1000000000"], 2,
     r"^rffbench: error: measure.variance.n_pairs=1000000000 is not allowed: .*"
     r"measure.variance.n_pairs <= \d+ fits$"),  # named redraws=1000
    (["dataset=synthetic", "dataset.n=400000", "model.exact_solver=cholesky",
      "model.exact_max_n=1000000"], 2,
     r"model.exact_solver='cholesky' is not allowed at n_train=300000: the Gram needs \d+ GiB"),
    (["dataset=synthetic", "dataset.n=400000", "model.exact_solver=cg",
      "model.exact_max_n=1000000", "model.precond_rank=1000000"], 2,
     r"model.precond_rank=1000000 is not allowed at n_train=300000: .*"
     r"model.precond_rank <= \d+ fits$"),  # both were skipped with a note, exit 0
    (["-m", "seed=range(0,1000000000)"], 2,
     r"the sweep asks for 1,000,000,000 jobs \(seed=range\(0,1000000000\)\), more than one "
     r"command runs \(10,000\)"),  # Hydra listed them: 15 GB and growing
    (["-m", "D=range(0,0)"], 2, r"the sweep has no job: a value list is empty "
                                r"\(D=range\(0,0\)\)"),
]
if (available_bytes() or 0) < 100 * GIB:  # scipy's scrambled Halton in 30,000 dimensions
    CASES.append((["features=qmc", "features.sequence=halton", "dataset=synthetic",
                   "dataset.d=30000", "dataset.n=100", "D=64"], 2,
                  r"features.sequence='halton' is not allowed with d=30000: the halton "
                  r"sequence's permutations in 30000 dimensions need 96.1 GiB"))

def run_batch(tmp, cases, import_path=()):
    """Each ``cases`` argument list through the command, in this process, in order, with
    ``import_path`` first on the import path; [dict(code, stdout, stderr)]."""
    out = []
    sys.path[:0] = [str(p) for p in import_path]
    try:
        for i, c in enumerate(cases):
            extra = [f"hydra.sweep.dir={tmp / f'sweep{i}'}"] if "-m" in c else []
            p = run_cli(*c, f"hydra.run.dir={tmp / f'run{i}'}", *extra, timeout=1800)
            out.append(dict(code=p.returncode, stdout=p.stdout[-4000:], stderr=p.stderr[-4000:]))
    finally:
        for p in import_path:
            sys.path.remove(str(p))
    return out


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trust")
    plug = tmp / "plug"
    plug.mkdir()
    (plug / "exits_on_import.py").write_text(
        "import argparse\nargparse.ArgumentParser().parse_args()\n")  # a script's habit
    return tmp, run_batch(tmp, [c[0] for c in CASES], import_path=[plug])


@pytest.mark.parametrize("i", range(len(CASES)), ids=[" ".join(c[0])[:60] for c in CASES])
@pytest.mark.slow
def test_a_case_is_one_line_and_its_exit_code(batch, i):
    tmp, results = batch
    argv, code, pattern = CASES[i]
    r = results[i]
    last = (r["stderr"].strip().splitlines() or [""])[-1]
    assert r["code"] == code, (r["code"], r["stderr"][-1500:])
    assert re.search(pattern, last), last
    assert "Traceback" not in r["stderr"]
    if code:  # nothing recorded
        assert not (tmp / f"run{i}" / "records.csv").exists()
        assert not (tmp / f"sweep{i}").exists()  # a refused sweep leaves no folder


def test_an_effect_check_is_declared_for_every_key_that_depends_on_another():
    """The declarations behind the refusals (rffbench.checks.Applies): every key of the
    kernel, features, dataset, model and backend blocks that only some configurations
    use is declared, so the rule is the same everywhere."""
    from rffbench.config import (
        BackendConfig,
        DatasetConfig,
        FeaturesConfig,
        KernelConfig,
        ModelConfig,
    )

    assert set(KernelConfig.applies) == {"nu", "degree", "coef0", "skewedness", "alpha",
                                         "median_subsample"}
    assert set(FeaturesConfig.applies) == {"pairs", "sequence"}
    assert set(DatasetConfig.applies) == {"n", "d", "radius", "noise", "task", "path",
                                          "format", "target", "file_task", "encoding",
                                          "file_scale"}
    assert set(ModelConfig.applies) == set(ModelConfig.__dataclass_fields__) - {
        "name", "lam", "chunk_rows"}  # those two: every model reads them
    assert set(BackendConfig.applies) == set(BackendConfig.__dataclass_fields__)


def test_a_measurement_that_is_off_keeps_its_settings_inert():
    """Switching a measurement off is a toggle: its block's keys (and, for learning, the
    model and backend blocks) are not refused and are not part of the run's identity."""
    from rffbench.config import validate
    from rffbench.runid import run_id
    from tests.helpers import compose_config

    off = ["measure.bounds.enabled=false", "measure.learning.enabled=false"]
    base = run_id(validate(compose_config(off)))
    for extra in (["measure.bounds.trials=5"], ["model.lam=0.5", "model.epochs=2"],
                  ["backend.name=dask", "backend.workers=2"]):
        assert run_id(validate(compose_config([*off, *extra]))) == base, extra
    assert run_id(validate(compose_config(["measure.bounds.trials=5"]))) != \
        run_id(validate(compose_config([])))


def test_every_preset_is_valid_under_the_effect_rule():
    """The presets set only keys that have an effect in each of their jobs (the first
    value of each swept key: the rule does not depend on the others)."""
    from hydra import compose, initialize_config_dir

    from rffbench.config import validate

    presets = sorted(p.stem for p in (ROOT / "conf" / "experiment").glob("*.yaml"))
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        for name in presets:
            cfg = compose(config_name="config", overrides=[f"experiment={name}"],
                          return_hydra_config=True)
            params = cfg.hydra.sweeper.params or {}
            firsts = [f"{k}={str(v).split(',')[0]}" for k, v in params.items()]
            job = compose(config_name="config", overrides=[f"experiment={name}", *firsts])
            validate(job)


def test_the_python_api_refuses_what_the_command_line_refuses():
    """The same declarations behind the maps, kernels, exact KRR and the bounds."""
    from rffbench import theory
    from rffbench.errors import ConfigError
    from rffbench.exact import ExactKRR
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import make_kernel
    from rffbench.testing import check_feature_map

    X, y = np.random.default_rng(0).standard_normal((40, 3)), np.arange(40.0)
    cases = [
        (lambda: theory.features_needed(0.05, 0.01, d=8, diam=8.0, kernel="arccos0",
                                        features="rff_pairs"),
         r"features=rff_pairs is not allowed with kernel=arccos0"),
        (lambda: theory.error_bound(100, 0.01, d=8, diam=8.0, kernel="gaussian", nu=2.5),
         r"nu=2.5 is not allowed: it has no effect here"),
        (lambda: theory.features_needed(0.05, 1.5, d=8, diam=8.0), r"delta=1.5 is not allowed"),
        (lambda: theory.features_needed(0.05, 0.01, d=0, diam=8.0), r"d=0 is not allowed"),
        (lambda: theory.error_bound(0, 0.01, d=8, diam=1.0), r"D=0 is not allowed"),
        (lambda: theory.estimator_variance(np.ones(3), 10, kernel="arccos0"),
         r"features=rff_pairs is not allowed with kernel=arccos0"),
        (lambda: ExactKRR(precision="mixed").fit(X, y),
         r"model.exact_precision='mixed' is not allowed: it has no effect here \(solver='auto'"
         r" chose cholesky for 40 rows"),
        (lambda: ExactKRR(solver="cholesky", tol=1e-3).fit(X, y), r"model.cg_tol=0.001"),
        (lambda: make_kernel("gaussian", lengthscale=2.0, median_subsample=50).fit(X),
         r"kernel.median_subsample=50 is not allowed: it has no effect here"),
        (lambda: FEATURE_MAPS["orf"](kernel="arccos0", pairs=False).fit(X),
         r"features.pairs=False is not allowed with kernel=arccos0: it has no effect"),
        (lambda: FEATURE_MAPS["leverage"](fit_rows=0, n_components=10).fit(X),
         r"features.params.fit_rows=0 is not allowed"),
        (lambda: FEATURE_MAPS["qmc"](n_components=10).fit(
            np.random.default_rng(1).standard_normal((3, 30000))),
         r"features.sequence='sobol' is not allowed with d=30000"),
        # the conformance check refuses a pair a run refuses (it reported a failed check)
        (lambda: check_feature_map("rff", kernel="arccos0"),
         r"features=rff is not allowed with kernel=arccos0"),
        (lambda: check_feature_map("nope"), r"features='nope' is not allowed: use one of rff"),
        (lambda: check_feature_map(5), r"check_feature_map\(5\): give a feature map's name"),
        (lambda: ExactKRR(solver="cg", tol=1e-300).fit(X, y), r"model.cg_tol=1e-300"),
    ]
    for call, pattern in cases:
        with pytest.raises(ConfigError, match=pattern):
            call()


def test_a_training_split_with_nothing_to_learn_is_refused(tmp_path):
    """dataset.split=ordered on a file sorted by class: one class to train on (the test
    error would be 1 by construction); a constant training target."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    sorted_y = np.r_[np.zeros(240), np.ones(60)]
    for name, y in (("sorted", sorted_y), ("const", np.full(300, 3.0))):
        np.savetxt(tmp_path / f"{name}.csv", np.c_[X, y], delimiter=",", comments="",
                   header="a,b,c,d,y", fmt="%.6g")
    y3 = np.repeat([0, 1, 2], 100)
    np.savetxt(tmp_path / "three.csv", np.c_[X, y3], delimiter=",", comments="",
               header="a,b,c,d,y", fmt="%.6g")
    res = run_batch(tmp_path, [
        ["dataset=file", f"dataset.path={tmp_path / 'sorted.csv'}", "dataset.split=ordered"],
        ["dataset=file", f"dataset.path={tmp_path / 'const.csv'}",
         "dataset.file_task=regression"],
        ["dataset=file", f"dataset.path={tmp_path / 'three.csv'}", "dataset.split=ordered",
         "dataset.test_size=0.4"],  # classes 0 and 1 train, the test rows are all class 2
    ])
    lines = [r["stderr"].strip().splitlines()[-1] for r in res]
    assert [r["code"] for r in res] == [2, 2, 2], lines
    assert re.search(r"the 225 training rows are all of one class \(0\): nothing to learn; "
                     r"dataset.split=ordered takes the first rows", lines[0])
    assert re.search(r"the 225 training targets are all equal \(3\): nothing to learn", lines[1])
    assert re.search(r"100 of the 120 test rows are of class\(es\) 2 that no training row has",
                     lines[2])


@pytest.mark.slow
def test_two_runs_cannot_share_a_run_directory(tmp_path):
    """A run alone claims its hydra.run.dir: a second command given the same directory
    while the first runs is refused before Hydra writes into it; records of another
    config there are not overwritten; the same config measured again replaces its own."""
    from rffbench.store import CLAIM_FILE, claim_run_dir

    d = tmp_path / "shared"
    d.mkdir()
    held = claim_run_dir(d, "someone-else")  # a live process (this one) writes there
    try:
        p = run_cli(f"hydra.run.dir={d}", "D=64")
    finally:
        held.release()
    assert p.returncode == 2
    assert re.search(r"hydra.run.dir='.*shared' is in use: pid \d+ .*give this run another "
                     r"hydra.run.dir", p.stderr.strip().splitlines()[-1])
    assert sorted(f.name for f in d.iterdir()) == []  # not even Hydra's .hydra/ and run.log
    base = ["measure.bounds.enabled=false", "measure.learning.enabled=false",
            "measure.timing.enabled=false"]
    assert run_cli(f"hydra.run.dir={d}", "D=64", *base).returncode == 0
    first = (d / "records.csv").read_bytes()
    p = run_cli(f"hydra.run.dir={d}", "D=128", *base)
    assert p.returncode == 2 and "holds the records of run" in p.stderr
    assert (d / "records.csv").read_bytes() == first
    assert run_cli(f"hydra.run.dir={d}", "D=64", *base).returncode == 0
    assert not (d / CLAIM_FILE).exists()


def test_a_run_that_fails_says_why_in_its_directory(tmp_path):
    """A run alone that fails once Hydra made its directory leaves error.txt with the line it
    printed (the directory held only .hydra/ and run.log); the same directory measured
    again without the failure loses it."""
    d = tmp_path / "run"
    base = ["D=64", "measure.bounds.enabled=false", "measure.timing.enabled=false"]
    p = run_cli(f"hydra.run.dir={d}", *base, "backend.name=dask",
                "backend.address=no-such-host.invalid")
    assert p.returncode == 2
    line = p.stderr.strip().splitlines()[-1]
    assert (d / "error.txt").read_text().strip() == line.removeprefix("rffbench: error: ")
    assert not (d / "records.csv").exists()
    assert run_cli(f"hydra.run.dir={d}", *base, "measure.learning.enabled=false").returncode == 0
    assert (d / "records.csv").exists() and not (d / "error.txt").exists()


def test_a_starting_directory_that_was_deleted_is_one_line(tmp_path):
    import runpy

    gone = tmp_path / "gone"
    from rffbench.entry import _cli, launch

    for module, prog in (("rffbench", "rffbench"), ("rffbench.report", "rffbench report"),
                         ("rffbench.bench", "python -m rffbench.bench")):
        gone.mkdir(exist_ok=True)

        def started_there_then_deleted(module=module):
            os.rmdir(gone)
            if module == "rffbench":  # the command's entry point (python run.py, rffbench)
                launch("rffbench", _cli)
            else:
                runpy.run_module(module, run_name="__main__", alter_sys=True)

        p = in_process([module, str(tmp_path)], started_there_then_deleted, cwd=gone)
        assert p.returncode == 2, p.stderr[-1500:]
        assert p.stderr.strip().splitlines()[-1].startswith(
            f"{prog}: error: the working directory is gone"), p.stderr


# --------------------------------------------------------------------------
# the bench and the extractor are commands like the others
# --------------------------------------------------------------------------
BENCH_BAD = [
    (["--shape", "1000000000,8,1024"], r"--shape 1000000000,8,1024 needs .* TiB, more than"),
    (["--shape", "1e9,8,1024"], r"--shape '1e9,8,1024': use 3 comma-separated N,d,D >= 1"),
    (["--shape", "10,8"], r"use 3 comma-separated N,d,D"),
    (["--peers", "sklearn"], r"--peers 'sklearn' is not one: use comma-separated names of torch"),
    (["--maps", "binning"], r"--maps 'binning' is not one"),
    (["--factor", "-1"], r"--factor '-1': use a number >= 1"),
    (["--factor", "2"], r"--factor has no effect without --compare"),
    (["--repeats", "0"], r"--repeats '0': use an integer >= 1"),
    (["--startup", "--repeats", "100000"], r"--repeats '100000': use an integer >= 1 and "
                                           r"<= 10000"),
    (["--threads", "100000"], r"--threads 100000: use 1\.\.\d+"),
    (["--exact", "100", "--dask"], r"--exact and --dask are two benchmarks"),
    (["--lam", "0.1"], r"--lam has no effect with the transform benchmark \(--shape\): it is "
                       r"a flag of --exact"),
    (["--products", "100"], r"--products '100': use 2 comma-separated integers n,d with n >= 2"),
    # flags accepted where they did nothing, sizes that passed the flag check and failed later
    (["--products", "1,4"], r"--products '1,4': use 2 comma-separated integers n,d with n >= 2 "
                            r"and d >= 1"),
    (["--exact", "2"], r"--exact '2': use comma-separated integers >= 10"),
    (["--exact", "200", "--repeats", "9"], r"--repeats has no effect with --exact: it is a flag "
                                           r"of the transform benchmark"),
    (["--startup", "--threads", "1"], r"--threads has no effect with --startup"),
    (["--stream", "3000", "--threads", "1"], r"--threads has no effect with --stream"),
    (["--products", "100,4", "--out", "a.csv", "--save", "b.csv"],
     r"--out a.csv and --save b.csv are the same option"),
    (["--products", "100,4", "--kernels", "gaussian,nope"], r"--kernels 'nope' is not one"),
    (["--exact", "100", "--tol", "2"], r"--tol '2': use a number > 0 and < 1"),
    (["--exact", "2000000"], r"--exact 2000000 needs .*, more than"),
    (["--dask", "1,1"], r"--dask '1,1': use 2 comma-separated n_ridge,n_exact >= 2"),
    (["--stream", "100000000000000"], r"--stream 100000000000000 writes .* of \.npy files"),
    (["--shape", "2000,8,64", "--compare", "no-such.csv", "--peers", ""],
     r"--compare: cannot read the saved CSV \(no-such.csv: No such file or directory\)"),
]


def _bench(*args, cwd=None, timeout=600):
    return run_module("rffbench.bench", *args, cwd=cwd, timeout=timeout)


@pytest.mark.parametrize("args,pattern", BENCH_BAD, ids=[" ".join(a) for a, _ in BENCH_BAD])
def test_a_bad_bench_flag_is_one_line(tmp_path, args, pattern):
    p = _bench(*args, cwd=tmp_path)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert re.search(pattern, lines[-1]), lines[-1]
    assert p.stdout == ""  # refused before anything ran


@pytest.mark.parametrize("times", ["abc", "", "nan", "-1", "0"])
def test_a_saved_table_whose_times_are_not_times_is_refused(tmp_path, times):
    """--compare against a saved CSV whose time_s is not a positive number: every ratio was
    NaN and --factor's gate passed (exit 0).  Refused before anything runs, naming the row."""
    (tmp_path / "saved.csv").write_text("kernel,n,d,impl,time_s\ngaussian,100,4,float64,0.5\n"
                                        f"gaussian,100,4,mixed,{times}\n")
    p = _bench("--products", "100,4", "--compare", "saved.csv", "--factor", "1.2",
               cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    assert re.search(r"--compare saved.csv: its time_s column holds .* \(row 2\), not a time",
                     p.stderr.strip().splitlines()[-1]), p.stderr


@pytest.mark.parametrize("kind", [
    ["--shape", "3000,8,64", "--peers", "", "--repeats", "3"],
    ["--exact", "300", "--tol", "1e-4"],
    ["--stream", "3000"],
    ["--dask", "5000,500", "--repeats", "1"],  # small: the command is tested, not the times
])
@pytest.mark.slow
def test_save_then_compare_works_for_every_kind_of_benchmark(tmp_path, kind):
    """`--save` then `--compare` (and `--factor`) through the command for each kind that
    runs in seconds (--products: test_speed; --startup: its own slow test)."""
    saved = tmp_path / "saved.csv"
    p = _bench(*kind, "--save", str(saved), "--data-dir", str(tmp_path)) \
        if kind[0] == "--stream" else _bench(*kind, "--save", str(saved))
    assert p.returncode == 0, p.stderr[-2000:]
    if kind[0] == "--shape":  # every map's fraction of its own roofline, no other row's
        import pandas as pd

        df = pd.read_csv(saved).set_index("impl")
        assert (df.loc[["rff", "rff_pairs"], "fraction_of_limit"] > 0).all()
        assert df.loc["sklearn_rbf", "fraction_of_limit"] != df.loc["sklearn_rbf",
                                                                   "fraction_of_limit"]
    extra = ["--data-dir", str(tmp_path)] if kind[0] == "--stream" else []
    p = _bench(*kind, *extra, "--compare", str(saved), "--factor", "1000")
    assert p.returncode == 0 and "new_over_saved" in p.stdout, p.stderr[-2000:]


@pytest.mark.slow
def test_save_then_compare_the_startup_benchmark(tmp_path, default_runs_once, monkeypatch):
    """One run (a cold and a warm default run: those of the session's fixture, which
    rffbench.bench.default_runs made) both saves its table and compares with a table saved
    before, written here with the rows' keys: every row matched, the ratios new / saved
    printed; the saved table reads back as the rows printed."""
    import importlib

    import pandas as pd

    startup = importlib.import_module("rffbench.bench.startup")  # the module, not the function
    asked = []
    monkeypatch.setattr(startup, "default_runs",
                        lambda repeats=3: asked.append(repeats) or default_runs_once)

    before = tmp_path / "before.csv"
    pd.DataFrame(dict(method=["startup/cold", "startup/warm", "startup/cold_over_warm"],
                      metric=["time_s", "time_s", "ratio"], time_s=[1e3, 1e3, 1e3],
                      spread=[0.0, 0.0, ""], n_repeats=[1, 1, 1])).to_csv(before, index=False)
    saved = tmp_path / "saved.csv"
    p = _bench("--startup", "--repeats", "1", "--save", str(saved), "--compare", str(before),
               "--factor", "1")
    assert p.returncode == 0 and "new_over_saved" in p.stdout, p.stderr[-2000:]
    assert asked == [1]
    table = p.stdout[p.stdout.index("new_over_saved"):]
    assert all(m in table for m in ("startup/cold", "startup/warm", "startup/cold_over_warm"))
    df = pd.read_csv(saved)
    assert list(df.method) == ["startup/cold", "startup/warm", "startup/cold_over_warm"]
    assert (df.time_s > 0).all() and (df.n_repeats == 1).all()


def test_a_report_that_fails_at_the_end_of_a_sweep_is_one_line_and_exit_1(tmp_path, monkeypatch):
    """A bug in the report (simulated) after a sweep: the sweep command says so in one
    line and exits 1 (Hydra used to warn and exit 0)."""
    import rffbench.report as report

    def broken(*a, **k):
        raise AttributeError("'DataFrame' object has no attribute 'crit'")

    monkeypatch.setattr(report, "make_report", broken)
    p = run_cli("-m", "D=64,128", f"hydra.sweep.dir={tmp_path / 's'}",
                "measure.bounds.enabled=false", "measure.learning.enabled=false",
                "measure.timing.enabled=false")
    assert p.returncode == 1, p.stderr[-2000:]
    last = p.stderr.strip().splitlines()[-1]
    assert re.search(r"rffbench report: error: the report of .* failed \(AttributeError: "
                     r"'DataFrame' object has no attribute 'crit'\); the runs are recorded", last)
    assert "UserWarning" not in p.stderr
    assert len(list((tmp_path / "s" / "runs").glob("*/records.csv"))) == 2


def test_a_file_that_makes_a_parser_quote_it_is_one_bounded_line(tmp_path):
    """A dataset file whose parser's message quotes the offending line (100,000 characters
    of '[' read as svmlight: printed whole) or whose .npy header announces an absurd or
    negative shape (numpy's overflow warnings before the line): one line, bounded."""
    (tmp_path / "deep.json").write_text("[" * 100_000)
    hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }"

    def npy(name, shape):
        h = hdr % shape
        h += " " * (64 - (10 + len(h) + 1) % 64) + "\n"
        (tmp_path / name).write_bytes(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little")
                                      + h.encode())

    npy("huge.npy", "1000000000000, 100000000")
    npy("neg.npy", "-5, 3")
    res = run_batch(tmp_path, [["dataset=file", f"dataset.path={tmp_path / n}"]
                               for n in ("deep.json", "huge.npy", "neg.npy")])
    for r in res:
        lines = [ln for ln in r["stderr"].strip().splitlines() if "INFO" not in ln]
        assert r["code"] == 2 and len(lines) == 1 and len(lines[0]) < 1000, r["stderr"][-2000:]
    last = [r["stderr"].strip().splitlines()[-1] for r in res]
    assert re.search(r"cannot read as svmlight: .*\[\[\[\.\.\. \(99,\d+ more characters\) \(the "
                     r"format svmlight was guessed from the name; set dataset.format", last[0])
    assert re.search(r"streaming its 1000000000000 rows .* needs [\d.]+ TiB", last[1])
    assert "not a .npy array: its header announces shape (-5, 3)" in last[2]


