"""Long work shows how far it is (rffbench.progress): quiet while short, at most one line
every few seconds, elapsed time and an estimate of what remains; the cg iterations (with
the residual), the preconditioner, the streaming pass, the report and a sweep's jobs."""
import logging

import numpy as np
import pytest

from rffbench import progress
from rffbench.progress import Progress
from tests.helpers import run_cli


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(progress.time, "perf_counter", c)
    return c


def lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "rffbench.progress"]


def test_quiet_while_short_then_a_line_every_few_seconds(clock, caplog):
    caplog.set_level(logging.INFO, "rffbench.progress")
    p = Progress("work", 100, "items")
    for _ in range(10):  # 10 items in 4 s: under MIN_SECONDS, nothing
        clock.t += 0.4
        p.step()
    assert lines(caplog) == []
    for _ in range(90):  # then one item per 0.5 s: a line at most every EVERY seconds
        clock.t += 0.5
        p.step()
    out = lines(caplog)
    assert len(out) == pytest.approx(45 / progress.EVERY, abs=1.5), out
    # the first line: 12 items at 5 s, 88 left at 5 / 12 s an item
    assert out[0] == "work: 12/100 items, 5 s elapsed, about 37 s left", out[0]
    assert out[-1].endswith("about 0 s left") or "about" in out[-1]


def test_left_and_note_given_by_the_caller(clock, caplog):
    caplog.set_level(logging.INFO, "rffbench.progress")
    p = Progress("solver", None, "iterations")
    clock.t = 10.0
    p.step(4, left=6, note="residual 1e-3")
    assert lines(caplog) == ["solver: 4 iterations, residual 1e-3, 10 s elapsed, about 15 s left"]


def test_cg_reports_iterations_residual_and_an_estimate(monkeypatch, caplog):
    """Every cg iteration logs (thresholds at 0 here): the residual falls, the estimate of
    the iterations left comes from its geometric rate and ends near 0."""
    from rffbench.exact import cg_parts, pcg
    from rffbench.kernels import make_kernel

    monkeypatch.setattr(progress, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(progress, "EVERY", 0.0)
    caplog.set_level(logging.INFO, "rffbench.progress")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 3))
    y = np.sin(X[:, :1])
    k = make_kernel("gaussian", lengthscale=1.0).fit(None)
    op, pc = cg_parts(k, X, precond_rank=20, random_state=0)
    _, info = pcg(op, y, 1e-1, pc, tol=1e-8, max_iter=100)
    assert info["converged"], info
    out = [ln for ln in lines(caplog) if ln.startswith("exact KRR (cg)")]
    assert len(out) == info["iterations"] - 1 >= 3, out  # every iteration but the last
    res = [float(ln.split("relative residual ")[1].split()[0]) for ln in out]
    assert res[-1] < res[0] and all(r > 1e-8 for r in res)
    assert "iterations (of at most 100)" in out[0] and "left" in out[-1]
    pre = [ln for ln in lines(caplog) if ln.startswith("exact KRR: Nystrom preconditioner")]
    assert pre and pre[-1].startswith("exact KRR: Nystrom preconditioner: 20/20 columns")


def test_streaming_pass_and_report_log_progress(monkeypatch, caplog, tmp_path):
    from rffbench.config import DatasetConfig
    from rffbench.datasets import load_dataset

    monkeypatch.setattr(progress, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(progress, "EVERY", 0.0)
    caplog.set_level(logging.INFO, "rffbench.progress")
    np.save(tmp_path / "d.npy", np.random.default_rng(0).standard_normal((140_000, 3)))
    load_dataset(DatasetConfig(name="file", path=str(tmp_path / "d.npy")), seed=0)
    out = [ln for ln in lines(caplog) if "loading pass" in ln]
    assert [ln.split(": loading pass: ")[1].split(",")[0] for ln in out] == \
        ["1/3 blocks", "2/3 blocks", "3/3 blocks"], out


@pytest.mark.slow
def test_a_sweep_logs_job_i_of_n_with_the_time_left(tmp_path):
    p = run_cli("-m", "dataset=synthetic", "dataset.n=200", "dataset.d=3", "D=16,24,32",
                "measure.bounds.trials=4", "measure.learning.repeats=1", "report.pdf=false",
                f"hydra.sweep.dir={tmp_path / 's'}")
    assert p.returncode == 0, p.stderr[-2000:]
    jobs = [ln.split("[INFO] - ")[1] for ln in (p.stdout + p.stderr).splitlines()
            if "sweep: job" in ln]
    assert jobs[0] == "sweep: job 1/3"
    assert jobs[1].startswith("sweep: job 2/3, ") and "elapsed here, about" in jobs[1]
    assert jobs[2].startswith("sweep: job 3/3, ") and jobs[2].endswith(" left")


def test_cg_estimate_of_the_iterations_left_follows_the_residual_rate():
    from rffbench.exact.solvers import _iterations_left

    # residual 0.5^k: from 0.5^5 to 1e-6 takes log2(0.5^5 / 1e-6) = 14.9 -> 15 iterations
    assert _iterations_left((1, 0.5), 5, 0.5 ** 5, 1e-6, 200) == 15
    assert _iterations_left((1, 0.5), 5, 0.5 ** 5, 1e-6, 12) == 7  # capped by max_iter
    assert _iterations_left((3, 0.1), 3, 0.1, 1e-6, 50) == 47  # no rate yet: the cap
