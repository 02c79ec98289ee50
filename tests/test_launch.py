"""rffbench/launch.py: threads per job under each launcher, the sweep's "job i/N" line and
the output directory checked before Hydra writes into it (end to end: tests/e2e)."""
import logging
import os

import pytest

from rffbench import launch
from rffbench.errors import RunDirError


@pytest.mark.parametrize("cfg,want", [
    ({}, 8),                                                           # the basic launcher
    ({"_target_": "hydra_plugins.joblib.JoblibLauncher", "n_jobs": 2}, 4),
    ({"_target_": "x.JoblibLauncher", "n_jobs": -1}, 1),               # one job per core
    ({"_target_": "x.JoblibLauncher", "n_jobs": 16}, 1),               # never below 1
    ({"_target_": "x.SubmititLocalLauncher", "cpus_per_task": 3}, 3),
    ({"_target_": "x.SubmititLocalLauncher"}, 1),
    ({"_target_": "x.RayLauncher", "ray": {"remote": {"num_cpus": 2}}}, 2),
    ({"_target_": "x.RayLauncher"}, 1),
])
def test_threads_per_job_follow_the_launchers_parallelism(monkeypatch, cfg, want):
    monkeypatch.setattr(launch, "cores", lambda: 8)
    assert launch.threads_per_job(cfg) == want


def test_the_job_line_counts_the_sweep_and_estimates_what_is_left(tmp_path, monkeypatch,
                                                                  caplog):
    monkeypatch.setattr(launch, "_total_jobs", lambda d: 4)
    monkeypatch.setattr(launch, "_SWEEPS", {})
    with caplog.at_level(logging.INFO, logger="rffbench"):
        for num in range(3):
            launch.log_job(tmp_path, num, {})
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "sweep: job 1/4" and lines[1].startswith("sweep: job 2/4, ")
    assert "elapsed here, about" in lines[2] and lines[2].endswith("left")
    monkeypatch.setattr(launch, "_total_jobs", lambda d: None)  # an unusual sweeper
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="rffbench"):
        launch.log_job(tmp_path / "other", 6, {})
    assert [r.getMessage() for r in caplog.records] == ["sweep: job 7"]


def test_the_output_directory_is_made_and_probed_leaving_nothing(tmp_path):
    out = tmp_path / "a" / "b"
    launch.check_output_dir(out, "hydra.run.dir")
    assert out.is_dir() and list(out.iterdir()) == []  # the probe removed
    with pytest.raises(RunDirError, match=r"^hydra.run.dir='' is not allowed: give a "):
        launch.check_output_dir("  ", "hydra.run.dir")


def test_an_output_directory_that_cannot_be_made_is_one_line_and_nothing_is_left(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RunDirError) as err:
        launch.check_output_dir(blocker / "sub" / "run", "hydra.sweep.dir")
    assert str(err.value).startswith(f"hydra.sweep.dir='{blocker}/sub/run': cannot create or "
                                     "write this directory (")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(RunDirError, match="Permission denied"):
            launch.check_output_dir(ro / "new" / "deeper", "hydra.run.dir")
        assert list(ro.iterdir()) == []  # the directories it made are removed again
