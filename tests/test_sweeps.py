"""Sweeps and the report: launchers, failed jobs, resume, presets, report figures and errors."""
import itertools
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from conftest import CONF_DIR, compose_config, run_cli
from rffbench import report
from rffbench.config import validate
from rffbench.results import RECORDS_FILE

TINY = ["dataset=synthetic", "dataset.n=200", "dataset.d=3", "measure.bounds.trials=8",
        "measure.learning.repeats=1", "measure.timing.repeats=3"]
PRESETS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))


def _check_report(sweep, n_jobs):
    rep = sweep / "report"
    res = pd.read_csv(rep / "results.csv")
    assert res.run_id.nunique() == n_jobs
    per_job = res.groupby("run_id").size()
    assert (per_job == per_job.iloc[0]).all()  # one full record set per job
    summary = (rep / "summary.md").read_text()
    pngs = sorted(rep.glob("*.png"))
    assert pngs, summary
    for png in pngs:
        assert png.stat().st_size > 10_000  # a drawn figure, not an empty canvas
        assert f"![{png.stem}]({png.name})" in summary
        assert png.with_suffix(".pdf").exists()
    return res, summary


@pytest.mark.parametrize("launcher", ["joblib", "submitit_local"])
def test_parallel_launchers_then_report(tmp_path, launcher):
    sweep = tmp_path / "sweep"
    extra = ["hydra.launcher.cpus_per_task=1"] if launcher == "submitit_local" else []
    p = run_cli("-m", f"hydra/launcher={launcher}", *extra, *TINY, "D=16,64",
                f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-3000:]
    res, summary = _check_report(sweep, 2)
    assert set(res.D) == {16, 64}
    # threads per job derived from the launcher: never more than the cores
    import os
    assert (res.threads * 2 <= max(2, len(os.sched_getaffinity(0)))).all() \
        if launcher == "joblib" else (res.threads == 1).all()
    assert "error_vs_D" in summary and "Skipped (data absent)" in summary


def test_failed_job_is_listed_and_others_reported(tmp_path):
    sweep = tmp_path / "sweep"
    p = run_cli("-m", *TINY, "features=rff_pairs", "D=16,15,32", f"hydra.sweep.dir={sweep}")
    assert p.returncode == 1  # the sweep finishes, then says a job failed
    assert "rffbench: job 1 failed: D=15 is not allowed" in p.stderr
    jobs = pd.read_csv(sweep / "report" / "jobs.csv").set_index("job_dir")
    assert jobs.status.to_dict() == {0: "complete", 1: "failed", 2: "complete"}
    res = pd.read_csv(sweep / "report" / "results.csv")
    assert set(res.D) == {16, 32}
    summary = (sweep / "report" / "summary.md").read_text()
    assert "## Failed or incomplete jobs" in summary and "must be even" in summary


def test_resume_skips_done_jobs_and_reruns_missing(tmp_path):
    sweep = tmp_path / "sweep"
    args = ["-m", *TINY, "D=16,32", f"hydra.sweep.dir={sweep}", "measure.bounds.enabled=false"]
    assert run_cli(*args).returncode == 0
    mtimes = {f: f.stat().st_mtime_ns for f in sweep.glob(f"*/{RECORDS_FILE}")}
    assert len(mtimes) == 2
    p = run_cli(*args)
    assert p.returncode == 0 and p.stdout.count("skipped (resume)") == 2
    assert {f: f.stat().st_mtime_ns for f in mtimes} == mtimes  # nothing rewritten
    (sweep / "1" / RECORDS_FILE).unlink()
    p = run_cli(*args)
    assert p.returncode == 0 and p.stdout.count("skipped (resume)") == 1
    assert (sweep / "1" / RECORDS_FILE).exists()
    assert (sweep / "0" / RECORDS_FILE).stat().st_mtime_ns == mtimes[sweep / "0" / RECORDS_FILE]


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_composes_and_its_sweep_values_are_valid(name):
    cfg = compose_config([f"experiment={name}"])
    assert cfg.experiment == name
    params = OmegaConf.to_container(cfg.hydra.sweeper.params) if "hydra" in cfg else None
    if params is None:  # compose() leaves out hydra; read the preset's own sweep
        params = OmegaConf.load(CONF_DIR / "experiment" / f"{name}.yaml").hydra.sweeper.params
    assert params, f"preset {name} has no sweep"
    for key, values in params.items():
        for v in str(values).split(","):
            validate(compose_config([f"experiment={name}", f"{key}={v.strip()}"]))
    # the first and the last combination of the whole grid are valid too
    grid = [[f"{k}={v.strip()}" for v in str(vals).split(",")] for k, vals in params.items()]
    for combo in (next(itertools.product(*grid)), [g[-1] for g in grid]):
        validate(compose_config([f"experiment={name}", *combo]))


def test_unknown_preset_is_a_clear_error(tmp_path):
    p = run_cli("experiment=nope", f"hydra.run.dir={tmp_path}")
    assert p.returncode != 0 and "Could not find 'experiment/nope'" in p.stderr
    assert "error_vs_D" in p.stderr  # the available options are listed


def test_report_errors(tmp_path, capsys):
    assert report.main([str(tmp_path)]) == 2
    assert "no records.csv found" in capsys.readouterr().err
    assert report.main([str(tmp_path / "missing")]) == 2
    assert "no such directory" in capsys.readouterr().err
    # two jobs of different schema versions
    p = run_cli("-m", *TINY, "D=16,32", f"hydra.sweep.dir={tmp_path / 's'}",
                "measure.bounds.enabled=false", "measure.learning.enabled=false")
    assert p.returncode == 0, p.stderr[-2000:]
    f = tmp_path / "s" / "1" / RECORDS_FILE
    df = pd.read_csv(f)
    df["schema"] = 1
    df.to_csv(f, index=False)
    assert report.main([str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip()
    assert "incompatible record versions: schema [1, 2]" in err and "\n" not in err


def test_figures_skipped_with_a_note_when_data_is_absent(tmp_path):
    sweep = tmp_path / "s"
    p = run_cli("-m", *TINY, "D=16", "measure.bounds.enabled=false",
                "measure.learning.enabled=false", f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0
    summary = (sweep / "report" / "summary.md").read_text()
    assert not list((sweep / "report").glob("*.png"))  # one D: no curve to draw
    for name in ("approximation error vs D", "bound tightness vs D", "learning vs D"):
        assert name in summary


def test_crossover_interpolation():
    n = [1000.0, 2000.0, 4000.0]
    assert report.crossover(n, [1.0, 1.0, 1.0], [0.5, 2.0, 8.0]) == pytest.approx(
        1000 * 2 ** 0.5, rel=1e-12)
    assert report.crossover(n, [1.0, 1.0, 1.0], [0.1, 0.2, 0.3]) is None
