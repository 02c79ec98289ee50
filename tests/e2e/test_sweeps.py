"""Sweeps: launchers, storage by run identity, resume (changed value lists, concurrent sweeps,
Ctrl-C, SIGKILL), presets."""
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from omegaconf import OmegaConf

from rffbench import report as rreport
from rffbench.config import validate
from rffbench.report import intervals
from rffbench.results import RECORDS_FILE
from tests.helpers import CONF_DIR, ROOT, compose_config, run_cli, run_module

TINY = ["dataset=synthetic", "dataset.n=200", "dataset.d=3", "measure.bounds.trials=8",
        "measure.learning.repeats=1", "measure.timing.repeats=3"]
#: the sweep-end report without the figures' PDF copies (~40% of its drawing): for the
#: sweeps whose test is not about the report's files (_check_report's sweeps keep them)
PNG_ONLY = "report.pdf=false"
PRESETS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))


def _check_report(sweep, n_jobs, pdf=True):
    rep = sweep / "report"
    res = pd.read_csv(rep / "results.csv")
    assert res.run_id.nunique() == n_jobs
    # one full record set per job (compile_time_s is recorded since 0.2: a 0.1 run lacks it)
    per_job = res[res.metric != "compile_time_s"].groupby("run_id").size()
    assert (per_job == per_job.iloc[0]).all()
    summary = (rep / "summary.md").read_text()
    pngs = sorted(rep.glob("*.png"))
    assert pngs, summary
    for png in pngs:
        assert png.stat().st_size > 10_000  # a drawn figure, not an empty canvas
        assert f"![{png.stem}]({png.name})" in summary
        assert png.with_suffix(".pdf").exists() == pdf
    return res, summary


def _records(sweep):
    return {f.parent.name: f for f in sweep.glob(f"runs/*/{RECORDS_FILE}")}


@pytest.mark.parametrize("launcher", ["joblib", "submitit_local"])
@pytest.mark.slow
def test_parallel_launchers_then_report(tmp_path, launcher):
    sweep = tmp_path / "sweep"
    # with joblib the report's figures as PNGs alone (report.pdf=false): no PDF beside them
    extra = ["hydra.launcher.cpus_per_task=1"] if launcher == "submitit_local" else [PNG_ONLY]
    p = run_cli("-m", f"hydra/launcher={launcher}", *extra, *TINY, "D=16,64",
                f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-3000:]
    res, summary = _check_report(sweep, 2, pdf=launcher != "joblib")
    assert set(res.D) == {16, 64}
    # threads per job derived from the launcher: never more than the cores
    import os
    assert (res.threads * 2 <= max(2, len(os.sched_getaffinity(0)))).all() \
        if launcher == "joblib" else (res.threads == 1).all()
    assert "error_vs_D" in summary and "Not drawn (their data is absent" in summary


@pytest.mark.slow
def test_exact_krr_computed_once_per_results_folder(tmp_path):
    """Exact KRR does not depend on D or the map: it is computed once (in the store of the
    results folder), and the other runs carry the same records with a note naming the run
    that computed them."""
    sweep = tmp_path / "sweep"
    p = run_cli("-m", *TINY, PNG_ONLY, "measure.bounds.enabled=false",
                "measure.approximation.enabled=false", "D=16,64", "features=rff,orf",
                f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-3000:]
    assert len(list((tmp_path / ".runs" / "shared").glob("exact_krr-*/rows.csv"))) == 1
    res = pd.concat(pd.read_csv(f) for f in _records(sweep).values())
    ex = res[(res.measurement == "learning") & (res.method == "exact_krr")]
    assert ex.run_id.nunique() == 4
    by_metric = ex.groupby("metric").value.nunique()
    assert (by_metric == 1).all(), by_metric  # identical records, timings included
    first = ex[~ex.note.fillna("").str.contains("computed once")].run_id.unique()
    assert len(first) == 1
    reused = ex[ex.run_id != first[0]]
    assert reused.note.str.endswith(f"[computed once, by run {first[0]}]").all()
    logs = "".join(f.read_text() for f in sweep.glob("*/run.log"))
    assert logs.count("learning: exact KRR by cholesky") == 1
    assert logs.count("exact_krr: reused from run") == 3


@pytest.mark.slow
def test_a_run_is_computed_once_whichever_sweep_asks_for_it(tmp_path):
    """Two sweep folders of one results folder: the second sweep copies the runs the
    first computed (from the results folder's store, .runs/) and computes only its new
    one; each folder holds, and its report shows, exactly the runs its command asked for;
    a sweep folder copied elsewhere alone is whole (its runs are files of its own)."""
    import shutil

    a, b = tmp_path / "a", tmp_path / "b"
    pa = run_cli("-m", *TINY, PNG_ONLY, "D=16,24", f"hydra.sweep.dir={a}")
    pb = run_cli("-m", *TINY, PNG_ONLY, "D=16,24,32", f"hydra.sweep.dir={b}")
    assert pa.returncode == 0 and pb.returncode == 0, (pa.stderr[-2000:], pb.stderr[-2000:])
    assert pb.stdout.count("was computed by another sweep: its records copied from") == 2
    logs = "".join(f.read_text() for f in b.glob("*/run.log"))
    assert logs.count(": measuring, records go to") == 1  # D=32 only
    ra, rb = _records(a), _records(b)
    assert len(ra) == 2 and len(rb) == 3 and set(ra) < set(rb)
    assert sorted(p.name for p in (tmp_path / ".runs").iterdir()) == sorted([*rb, "shared"])
    for rid in ra:  # the same run: the same records, whichever folder
        assert ra[rid].read_bytes() == rb[rid].read_bytes()
    assert "complete: 2 complete" in pa.stdout and "complete: 3 complete" in pb.stdout
    moved = tmp_path / "elsewhere" / "a"
    shutil.copytree(a, moved)
    rep = run_module("rffbench.report", str(moved), "--no-pdf")
    assert rep.returncode == 0 and "complete: 2 complete" in rep.stdout, rep.stderr[-2000:]


@pytest.mark.slow
def test_the_same_ad_hoc_command_finds_its_folder_and_computes_nothing_again(tmp_path):
    """Without hydra.sweep.dir the folder is named after the command (its overrides in
    any order): the same command again resumes there and computes nothing (the advice
    printed after Ctrl-C); another command gets another folder."""
    first = run_cli("-m", *TINY, "D=16,24", cwd=tmp_path)
    again = run_cli("-m", "D=16,24", *reversed(TINY), cwd=tmp_path)
    other = run_cli("-m", *TINY, "D=16", cwd=tmp_path)
    for p in (first, again, other):
        assert p.returncode == 0, p.stderr[-2000:]
    folders = sorted(d.name for d in (tmp_path / "results" / "multirun").iterdir()
                     if d.name != ".runs")
    assert len(folders) == 2 and any(f.startswith("D=16,24_") for f in folders), folders
    assert again.stdout.count("skipped (resume)") == 2
    assert "rffbench run " not in again.stdout  # the summary a computed run prints
    assert other.stdout.count("was computed by another sweep") == 1


@pytest.mark.slow
def test_resume_skips_done_runs_and_reruns_missing(tmp_path):
    sweep = tmp_path / "sweep"
    args = ["-m", *TINY, PNG_ONLY, "D=16,32", f"hydra.sweep.dir={sweep}",
            "measure.bounds.enabled=false"]
    assert run_cli(*args).returncode == 0
    mtimes = {f: f.stat().st_mtime_ns for f in _records(sweep).values()}
    assert len(mtimes) == 2
    p = run_cli(*args)
    assert p.returncode == 0 and p.stdout.count("skipped (resume)") == 2
    assert {f: f.stat().st_mtime_ns for f in mtimes} == mtimes  # nothing rewritten
    gone = sorted(mtimes)[1]
    gone.unlink()
    p = run_cli(*args)
    assert p.returncode == 0 and p.stdout.count("skipped (resume)") == 1
    assert gone.exists()
    kept = sorted(mtimes)[0]
    assert kept.stat().st_mtime_ns == mtimes[kept]


@pytest.mark.slow
def test_resume_with_changed_value_lists_loses_nothing(tmp_path):
    """D=16,32,64 then D=32,64,128 into one directory: job numbers now mean other runs,
    yet every run keeps its records and the report shows all four D."""
    sweep = tmp_path / "sweep"
    base = ["-m", *TINY, PNG_ONLY, f"hydra.sweep.dir={sweep}", "measure.bounds.enabled=false",
            "measure.learning.enabled=false"]
    assert run_cli(*base, "D=16,32,64").returncode == 0
    first = {rid: (f, f.stat().st_mtime_ns) for rid, f in _records(sweep).items()}
    p = run_cli(*base, "D=32,64,128")
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.count("skipped (resume)") == 2
    for rid, (f, t) in first.items():
        assert f.stat().st_mtime_ns == t  # untouched
    res = pd.read_csv(sweep / "report" / "results.csv")
    assert sorted(res.D.unique()) == [16, 32, 64, 128]
    jobs = pd.read_csv(sweep / "report" / "jobs.csv")
    runs = jobs[jobs.kind == "run"].set_index("run_id")
    for rid, (f, _) in first.items():  # each run directory holds the D its records say
        assert runs.loc[rid, "status"] == "complete"
        assert pd.read_csv(f).D.iloc[0] in (16, 32, 64)
    summary = (sweep / "report" / "summary.md").read_text()
    assert "3 jobs expected: 3 complete" in summary
    assert "1 of them from earlier commands into this directory" in summary
    # the job directory now numbered 2 points at D=128's run, not at D=64's
    link = sweep / "2" / "run"
    assert pd.read_csv(link.resolve() / RECORDS_FILE).D.iloc[0] == 128


@pytest.mark.slow
def test_two_identical_sweeps_at_once_compute_each_run_once(tmp_path):
    from rffbench.runid import run_id
    from rffbench.store import acquire, run_check

    sweep = tmp_path / "sweep"
    extra = ["measure.bounds.trials=400", "measure.bounds.n_points=100"]
    # this test holds the last run's claim, as a third sweep computing it would: both sweeps
    # wait for it, and the reports made meanwhile find it in flight (not left to timing)
    rid = run_id(validate(compose_config([*TINY, *extra, "D=64"])))
    held = sweep / "runs" / rid
    held.mkdir(parents=True)
    claim = acquire(held, run_check(rid, in_sweep=True))
    args = [sys.executable, str(ROOT / "run.py"), "-m", *TINY, PNG_ONLY, "D=16,32,48,64", *extra,
            f"hydra.sweep.dir={sweep}"]
    env = dict(os.environ, MPLBACKEND="Agg", HYDRA_FULL_ERROR="0")
    procs = [subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]

    def report():
        """A report of the same folder while the sweeps run (in this process, beside the
        sweeps' two): it reads only complete runs (never a partial file); (its exit code,
        what it printed)."""
        r = run_module("rffbench.report", str(sweep), "--no-pdf", "--out",
                       str(tmp_path / "live"))
        assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr[-2000:]
        live = tmp_path / "live" / "results.csv"
        if live.exists():
            sizes = pd.read_csv(live).groupby("run_id").size()
            assert (sizes == sizes.max()).all(), sizes  # every run read is whole
        return r.returncode, r.stdout + r.stderr

    try:
        t0 = time.time()
        while len(_records(sweep)) < 3:  # reports again and again while the others run
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            assert time.time() - t0 < 600, "timed out"
            report()
        # the held run: in flight once a sweep has reached it (a moment after the third
        # run's records: until then it is "never started"), said so, the report incomplete
        code, said = report()
        while "1 running" not in said and time.time() - t0 < 600:
            time.sleep(0.2)
            code, said = report()
        assert code == 1 and "3 complete, 1 running" in said, said
        assert "D=64" in said and f"claimed by pid {os.getpid()}" in said, said
    finally:
        claim.release()  # one of the two sweeps takes the run over
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    computed = sum(o[0].count("records: ") for o in outs)
    assert computed == 4  # each of the 4 runs measured by exactly one of the two sweeps
    res = pd.read_csv(sweep / "report" / "results.csv")
    assert res.run_id.nunique() == 4
    assert not res.duplicated(["run_id", "measurement", "metric", "method", "delta",
                               "dist"]).any()


def _sweep_process(sweep, values, extra=()):
    args = [sys.executable, str(ROOT / "run.py"), "-m", *TINY, PNG_ONLY, f"D={values}",
            "measure.bounds.trials=400", "measure.bounds.n_points=100",
            f"hydra.sweep.dir={sweep}", *extra]
    env = dict(os.environ, MPLBACKEND="Agg", HYDRA_FULL_ERROR="0")
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for(pred, timeout=300):
    t0 = time.time()
    while not pred():
        assert time.time() - t0 < timeout, "timed out"
        time.sleep(0.2)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
@pytest.mark.slow
def test_interrupted_sweep_resumes(tmp_path, sig):
    sweep = tmp_path / "sweep"
    p = _sweep_process(sweep, "16,24,32")
    # stop it while the second run is being computed (its claim exists, no records yet)
    _wait_for(lambda: len(_records(sweep)) >= 1 and any(
        (d / "claim").exists() and not (d / RECORDS_FILE).exists()
        for d in (sweep / "runs").iterdir()))
    done_before = {rid: f.stat().st_mtime_ns for rid, f in _records(sweep).items()}
    os.killpg(p.pid, sig) if sig == signal.SIGKILL else os.kill(p.pid, sig)
    out, err = p.communicate(timeout=120)
    if sig == signal.SIGINT:
        assert p.returncode == 130
        lines = [ln for ln in err.splitlines() if ln.startswith("rffbench")]
        assert "Traceback" not in err and len(lines) == 1
        assert lines[0].startswith("rffbench: interrupted: run ") and "resume" in lines[0]
        assert list(sweep.glob("runs/*/interrupted.txt"))
    # the report knows: incomplete, exit 1
    assert rreport.main([str(sweep), "--no-pdf"]) == 1
    # resume: the finished runs are kept, the interrupted and the missing one computed
    r = _sweep_process(sweep, "16,24,32")
    out, err = r.communicate(timeout=600)
    assert r.returncode == 0, err[-2000:]
    assert out.count("skipped (resume)") == len(done_before)
    assert {rid: f.stat().st_mtime_ns for rid, f in _records(sweep).items()
            if rid in done_before} == done_before
    assert len(_records(sweep)) == 3 and not list(sweep.glob("runs/*/claim"))


def _a_value(cfg, key):
    """Whether ``key`` names a leaf value of ``cfg`` (not a group's choice: those, such as
    features or wacker_data, are config nodes or not in the composed config at all)."""
    absent = object()
    node = OmegaConf.select(cfg, key, default=absent) if key[0] not in "+~" else absent
    return node is not absent and not OmegaConf.is_config(node)


def _with_value(cfg, override):
    """``cfg`` with a plain ``key=value`` override applied the way Hydra applies one after
    composing (parsed by its override grammar, then OmegaConf.update with merge): the same
    config as composing again, in a millisecond instead of a quarter of a second."""
    import copy

    from hydra.core.override_parser.overrides_parser import OverridesParser

    (ov,) = OverridesParser.create().parse_overrides([override])
    out = copy.deepcopy(cfg)
    OmegaConf.update(out, ov.key_or_group, ov.value(), merge=True)
    return out


@pytest.mark.slow
def test_a_value_override_applied_after_composing_is_the_composed_config():
    """What _with_value stands on: for plain keys of every type the sweeps use (int,
    float, string, a list), the config equals the one composed with the override."""
    base = compose_config(["experiment=wacker2022"])
    for ov in ("D=64", "seed=3", "dataset.d=12", "D_n=2", "kernel.lengthscale=0.5",
               "dataset.scale=none", "measure.speed.peers=[]"):
        assert _with_value(base, ov) == compose_config(["experiment=wacker2022", ov]), ov
    # a group's choice (features, kernel: registered in code, not folders of conf/) is a
    # node of the config, which a plain value cannot replace: the test composes those
    assert not any(_a_value(base, k) for k in ("features", "kernel", "wacker_data",
                                               "+wacker_method"))
    with pytest.raises(Exception, match="not a subclass of FeaturesConfig"):
        _with_value(base, "features=orf")


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.slow
def test_every_preset_composes_and_its_sweep_values_are_valid(name):
    cfg = compose_config([f"experiment={name}"])
    assert cfg.experiment == name
    params = OmegaConf.to_container(cfg.hydra.sweeper.params) if "hydra" in cfg else None
    if params is None:  # compose() leaves out hydra; read the preset's own sweep
        params = OmegaConf.load(CONF_DIR / "experiment" / f"{name}.yaml").hydra.sweeper.params
    assert params, f"preset {name} has no sweep"
    for key, values in params.items():
        for v in str(values).split(","):
            override = f"{key}={v.strip()}"
            if _a_value(cfg, key):
                validate(_with_value(cfg, override))
            else:  # a group's choice, an addition, a deletion: composed again
                validate(compose_config([f"experiment={name}", override]))
    # the last combination of the whole grid is valid too (the first: the default suite's
    # tests/e2e/test_trust.py::test_every_preset_is_valid_under_the_effect_rule)
    grid = [[f"{k}={v.strip()}" for v in str(vals).split(",")] for k, vals in params.items()]
    validate(compose_config([f"experiment={name}", *[g[-1] for g in grid]]))


def test_unknown_preset_is_a_clear_error(tmp_path):
    p = run_cli("experiment=nope", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 2 and "experiment=nope is not allowed: use one of" in p.stderr
    assert "error_vs_D" in p.stderr  # the available options are listed


@pytest.mark.slow
def test_figures_skipped_with_a_note_when_data_is_absent(tmp_path):
    sweep = tmp_path / "s"
    p = run_cli("-m", *TINY, "D=16", "measure.bounds.enabled=false",
                "measure.learning.enabled=false", f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0
    summary = (sweep / "report" / "summary.md").read_text()
    assert not list((sweep / "report").glob("*.png"))  # one D: no curve to draw
    assert "Not drawn (their data is absent from this sweep)" in summary
    for name in ("approximation error vs D", "bound tightness vs D", "learning vs D"):
        assert name in summary


#: tests/fixtures/sweep_v0: a sweep written by rffbench 0.1 (commit 1103fec), ids of the
#: whole config; made by this command with hydra.sweep.dir=/tmp/fx, its report removed
V0_SWEEP = ["-m", "dataset=wine", "D=16,32", "dataset.scale=standardize,none",
            "measure.bounds.enabled=false", "measure.timing.enabled=false",
            "measure.learning.exact=false", "measure.learning.repeats=1"]


@pytest.mark.slow
def test_a_sweep_written_by_0_1_resumes_without_recomputing(tmp_path):
    import shutil

    sweep = tmp_path / "v0"
    shutil.copytree(ROOT / "tests" / "fixtures" / "sweep_v0", sweep, symlinks=True)
    records = _records(sweep)
    assert len(records) == 4
    before = {f: f.read_bytes() for f in records.values()}
    p = run_cli(*V0_SWEEP, f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("skipped (resume)") == 4, p.stdout
    assert {f: f.read_bytes() for f in before} == before
    assert sorted((sweep / "runs").iterdir()) == sorted(f.parent for f in before)
    _check_report(sweep, 4)
    # one more value: only the new run is computed, under an id of the new scheme
    p = run_cli(*[a.replace("D=16,32", "D=16,32,48") for a in V0_SWEEP],
                f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0 and p.stdout.count("skipped (resume)") == 4, p.stderr
    assert len(_records(sweep)) == 6
    _check_report(sweep, 6)


@pytest.mark.slow
def test_a_run_recorded_under_another_default_is_not_reused(tmp_path):
    """The id hashes what differs from the defaults, so a default that changed between
    versions would give the same id: the stored config.json says so, one line, exit 2."""
    import json
    import shutil

    sweep = tmp_path / "v0"
    shutil.copytree(ROOT / "tests" / "fixtures" / "sweep_v0", sweep, symlinks=True)
    one = sorted(_records(sweep).values())[0].parent
    cfg = json.loads((one / "config.json").read_text())
    cfg["config"]["dataset"]["noise"] = 0.5  # as if the default had been 0.5 then
    (one / "config.json").write_text(json.dumps(cfg))
    p = run_cli(*V0_SWEEP, f"hydra.sweep.dir={sweep}")
    assert p.returncode != 0
    line = [ln for ln in p.stderr.splitlines() if "rffbench: error" in ln]
    assert len(line) == 1 and "dataset.noise=0.5" in line[0] and one.name in line[0], p.stderr
    assert "not reused" in line[0]
    assert p.stdout.count("skipped (resume)") == 3


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    sweep = tmp_path_factory.mktemp("small") / "sweep"
    p = run_cli("-m", *TINY, PNG_ONLY, "D=16,24", "model.exact_max_n=400",
                f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-2000:]
    return sweep


@pytest.mark.parametrize("what,text", [
    ("config", "[]"), ("config", '"x"'),
    ("config", '{"config": 5, "run_id": 7, "overrides": "D=3"}'),
    ("config", '{"config": {"D": 16}, "overrides": [1, 2]}'),
    ("ticket", "[1, 2]"), ("ticket", '{"overrides": "D=16", "run_id": 3}'),
    ("claim", '["host", 1]'), ("shared", '"computed"'),
], ids=lambda v: v if len(v) < 12 else None)
@pytest.mark.slow
def test_sweep_files_of_the_wrong_json_shape(tmp_path, small_sweep, what, text):
    """Valid JSON of the wrong shape in a run's config.json, a job ticket, a claim or a
    shared result's key.json: the report and a re-run of the sweep go on without a
    traceback; a damaged config.json is named in the report."""
    import shutil

    sweep = tmp_path / "sweep"
    shutil.copytree(small_sweep, sweep, symlinks=True)
    shutil.copytree(small_sweep.parent / ".runs", tmp_path / ".runs")  # its results' store
    run_dir = sorted((sweep / "runs").iterdir())[0]
    target = {"config": run_dir / "config.json",
              "ticket": sorted((sweep / ".jobs").glob("*.json"))[0],
              "claim": run_dir / "claim",
              "shared": next((tmp_path / ".runs" / "shared").glob("*/key.json"), None)}[what]
    assert target is not None, list(sweep.rglob("*"))
    target.write_text(text)
    rep = run_module("rffbench.report", str(sweep), "--no-pdf")
    assert "Traceback" not in rep.stderr and rep.returncode in (0, 1), rep.stderr[-2000:]
    if what == "config":
        assert rep.returncode == 1 and "config.json: not a run's config" in rep.stderr, rep.stderr
    again = run_cli("-m", *TINY, PNG_ONLY, "D=16,24", "model.exact_max_n=400",
                    f"hydra.sweep.dir={sweep}")
    assert "Traceback" not in again.stderr, again.stderr[-3000:]
    assert again.returncode in (0, 1), again.stderr[-2000:]


@pytest.mark.slow
def test_a_sweep_of_5000_jobs_starts_its_first_job_in_the_first_batch(tmp_path):
    """Hydra's basic sweeper composes and checks every job of a batch before launching
    it; the batches are hydra.sweeper.max_batch_size jobs (32), not the whole sweep (which
    took ~2 of the 1,050-job quadrature preset's 9 minutes before its first job).  The
    5000-job sweep is stopped once its first job has started."""
    sweep = tmp_path / "sweep"
    args = [sys.executable, str(ROOT / "run.py"), "-m", "seed=range(0,5000)", *TINY, "D=8",
            "measure.bounds.enabled=false", "measure.learning.enabled=false",
            f"hydra.sweep.dir={sweep}"]
    env = dict(os.environ, MPLBACKEND="Agg", HYDRA_FULL_ERROR="0")
    p = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    seen = []
    try:
        for line in p.stdout:
            seen.append(line)
            if "sweep: job 1/5000" in line:
                break
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
    text = "".join(seen)
    assert "sweep: job 1/5000" in text, text[-2000:]
    assert "Launching 32 jobs locally" in text and "Launching 5000 jobs" not in text, text


@pytest.mark.parametrize("launcher", ["joblib", "submitit_local"])
@pytest.mark.slow
def test_a_job_process_killed_mid_sweep_then_the_same_command(tmp_path, launcher):
    """SIGKILL to the process computing a run (its pid from the run's claim) under a
    parallel launcher; then the same command: the runs already recorded are kept as they
    are, the killed one (its stale claim taken over) and any not started are computed."""
    import json

    sweep = tmp_path / "sweep"
    extra = {"joblib": ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
             "submitit_local": ["hydra/launcher=submitit_local",
                                "hydra.launcher.cpus_per_task=1"]}[launcher]
    p = _sweep_process(sweep, "16,24,32", extra)
    victim = {}

    def claimed_and_running():
        for d in (sweep / "runs").iterdir() if (sweep / "runs").exists() else []:
            c = d / "claim"
            if c.exists() and not (d / RECORDS_FILE).exists():
                try:
                    holder = json.loads(c.read_text())
                except (OSError, ValueError):
                    continue
                if holder.get("pid") and holder["pid"] != p.pid:
                    victim.update(holder, run=d.name)
                    return True
        return False

    _wait_for(claimed_and_running)
    os.kill(victim["pid"], signal.SIGKILL)
    out, err = p.communicate(timeout=600)
    assert "Traceback" not in err, err[-3000:]
    errors = [ln for ln in err.splitlines() if ln.startswith("rffbench: error:")]
    assert p.returncode == 1 and len(errors) == 1, err[-3000:]
    assert "a job process of the sweep died" in errors[0] and "run the same command" in \
        errors[0], errors
    done_before = {rid: f.stat().st_mtime_ns for rid, f in _records(sweep).items()}
    assert victim["run"] not in done_before
    r = _sweep_process(sweep, "16,24,32", extra)
    out2, err2 = r.communicate(timeout=600)
    assert r.returncode == 0, err2[-3000:]
    after = _records(sweep)
    assert len(after) == 3 and victim["run"] in after
    assert {rid: f.stat().st_mtime_ns for rid, f in after.items()
            if rid in done_before} == done_before  # nothing recomputed, nothing lost
    assert not list(sweep.glob("runs/*/claim"))


@pytest.mark.slow
def test_a_preset_started_without_m_says_first_that_it_is_a_sweep(tmp_path):
    """`python run.py experiment=quadrature` (no -m) starts the preset's sweep: its first
    line says how many runs, where they go and how to run one instead; the sweep is
    stopped after that line."""
    params = OmegaConf.load(CONF_DIR / "experiment" / "quadrature.yaml").hydra.sweeper.params
    n = 1
    for values in params.values():
        n *= len(str(values).split(","))
    sweep = tmp_path / "q"
    env = dict(os.environ, MPLBACKEND="Agg", HYDRA_FULL_ERROR="0")
    proc = subprocess.Popen([sys.executable, str(ROOT / "run.py"), "experiment=quadrature",
                             f"hydra.sweep.dir={sweep}"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        first = proc.stdout.readline()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert first.startswith(f"rffbench: a sweep of {n:,} jobs into {sweep}"), first
    assert "experiment=quadrature is a sweep" in first and "hydra.mode=RUN" in first
    # with -m (typed last, where Hydra's parser refused it) the same line, without the note
    proc = subprocess.Popen([sys.executable, str(ROOT / "run.py"), "experiment=quadrature",
                             f"hydra.sweep.dir={sweep}", "-m"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        first = proc.stdout.readline()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert first.startswith(f"rffbench: a sweep of {n:,} jobs into {sweep}")
    assert "is a sweep" not in first


SWALLOWS_CTRL_C = '''
import os, signal, time
from rffbench.features.fourier import RandomFourierFeatures


class Map(RandomFourierFeatures):
    """rff whose fit receives Ctrl-C inside code that swallows it (as a finaliser or a
    library's `except BaseException` does)."""

    def fit(self, X, y=None):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)
        except BaseException:
            pass
        return super().fit(X, y)
'''


@pytest.mark.slow
@pytest.mark.parametrize("multirun", [False, True], ids=["run", "sweep"])
def test_a_ctrl_c_that_code_swallows_still_stops_the_run(tmp_path, multirun):
    """A KeyboardInterrupt swallowed where it landed (a finaliser, a library's bare
    except) still stops the run: exit 130, one line, no records written as if nothing had
    happened (a loaded machine once finished an interrupted sweep with exit 0)."""
    (tmp_path / "swallow.py").write_text(SWALLOWS_CTRL_C)
    where = (["-m", f"hydra.sweep.dir={tmp_path / 's'}", "D=16,32"] if multirun
             else [f"hydra.run.dir={tmp_path / 'r'}", "D=16"])
    env = dict(os.environ, MPLBACKEND="Agg", HYDRA_FULL_ERROR="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path),
                                                        os.environ.get("PYTHONPATH")])))
    p = subprocess.run([sys.executable, str(ROOT / "run.py"), *where[:1 if multirun else 0],
                        *TINY, "features.name=swallow:Map", "measure.bounds.enabled=false",
                        *where[1 if multirun else 0:]], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 130, p.stderr[-2000:]
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("rffbench")]
    assert len(lines) == 1 and lines[0].startswith("rffbench: interrupted"), p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    assert not list(tmp_path.glob("**/records.csv"))
    if multirun:
        assert list((tmp_path / "s").glob("runs/*/interrupted.txt"))


def test_a_sweep_reports_the_mean_with_the_interval_it_asked_for(tmp_path):
    """``python run.py -m ... report.center=mean report.interval=bca``: the report draws the
    mean over the seeds with the BCa bootstrap's interval and says so in its captions (the
    default interval's words: tests/test_report.py), with its measured coverage at 3 seeds,
    and warns that it is too narrow there, naming the interval that kept 93-97%."""
    sweep = tmp_path / "sweep"
    p = run_cli("-m", *TINY, PNG_ONLY, "measure.bounds.enabled=false",
                "measure.learning.enabled=false", "D=16,32", "seed=0,1,2", "report.center=mean",
                "report.interval=bca", "report.resamples=400", f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-3000:]
    text = (sweep / "report" / "summary.md").read_text()
    assert "band: its 95% BCa bootstrap (400 resamples); none under 3 seeds" in text
    lo, hi = (f"{c:.1%}" for c in intervals.COVERAGE["bca"][3])
    assert f"; measured coverage {lo}-{hi} at 3 seeds." in text
    assert (f"Note: report.interval=bca: its 95% intervals held the truth in {lo}-{hi} of "
            "cells at 3 seeds (too narrow); lognormal kept 93%-97% there.") in text
