"""rffbench/entry.py: what goes wrong before a command's own code is loaded (a numba
setting numba refuses, Ctrl-C during the imports), one line each, in process and as the
user starts each command."""
import sys

import pytest

from rffbench import entry, interrupts
from rffbench.results import RECORDS_FILE
from tests.helpers import ROOT, installed_command


def _command(kind):
    """How a user starts the command: python run.py in the checkout, or the installed one."""
    return [sys.executable, str(ROOT / "run.py")] if kind == "run.py" else \
        [installed_command(kind)]


@pytest.mark.parametrize("value,ok", [(None, True), ("", True), (" ", True), ("1", True),
                                      ("16", True), ("0", False), ("-2", False),
                                      ("abc", False), ("1.5", False)])
def test_numba_thread_settings_numba_refuses_are_named(value, ok):
    env = {} if value is None else {"NUMBA_NUM_THREADS": value}
    problem = entry.environment_problem(env)
    assert (problem is None) == ok
    if not ok:
        assert problem.startswith(f"NUMBA_NUM_THREADS={value!r} is not allowed: use a whole "
                                  "number >= 1")


@pytest.mark.parametrize("value,ok", [(None, True), ("", True), ("default", True),
                                      (" Default ", True), ("openblas", False),
                                      ("mkl,default", False)])
def test_blas_choices_rffbench_refuses_are_named(value, ok):
    env = {} if value is None else {"RFFBENCH_BLAS": value}
    problem = entry.environment_problem(env)
    assert (problem is None) == ok
    if not ok:
        assert problem == (f"RFFBENCH_BLAS={value.strip().lower()!r} is not allowed: use one "
                           "of default, mkl")


def test_onemkl_asked_for_where_it_is_not_installed_is_named(monkeypatch):
    from rffbench import blas_choice

    monkeypatch.setattr(blas_choice, "mkl_path", lambda prefixes=None: None)
    assert entry.environment_problem({"RFFBENCH_BLAS": "mkl"}) == (
        "RFFBENCH_BLAS=mkl is not allowed: oneMKL's runtime library (libmkl_rt) is not "
        "installed in this environment: `pip install mkl` (x86-64), or use default")


def test_launch_says_each_start_up_problem_in_one_line(monkeypatch, capsys):
    import signal

    monkeypatch.setattr(signal, "signal", lambda *a: None)  # pytest's Ctrl-C stays pytest's
    monkeypatch.setenv("NUMBA_NUM_THREADS", "0")
    with pytest.raises(SystemExit) as stop:
        entry.launch("prog", lambda: pytest.fail("loaded despite the setting"))
    assert stop.value.code == 2
    assert capsys.readouterr().err.startswith("prog: error: NUMBA_NUM_THREADS='0'")
    monkeypatch.delenv("NUMBA_NUM_THREADS")

    def interrupted():
        raise KeyboardInterrupt

    try:
        with pytest.raises(SystemExit) as stop:
            entry.launch("prog", interrupted)
        assert stop.value.code == 130
        assert capsys.readouterr().err == "prog: interrupted while starting (nothing was run)\n"
        assert entry.launch("prog", lambda: lambda: "ran") == "ran"  # loaded, then run
    finally:
        interrupts._REQUESTED.clear()


@pytest.mark.parametrize("kind", ["run.py", "rffbench", "rffbench-report"])
@pytest.mark.parametrize("key,value", [("NUMBA_NUM_THREADS", "0"), ("NUMBA_NUM_THREADS", "-2"),
                                       ("NUMBA_NUM_THREADS", "abc"), ("RFFBENCH_BLAS", "atlas")])
def test_a_setting_numba_or_rffbench_refuses_is_one_line(tmp_path, kind, key, value):
    """NUMBA_NUM_THREADS=0 printed numba's traceback from the imports, RFFBENCH_BLAS=atlas
    rffbench's."""
    import os
    import subprocess

    p = subprocess.run(_command(kind), cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, **{key: value}), timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert p.stderr.strip().splitlines() == [
        f"{'rffbench' if kind == 'run.py' else kind}: error: "
        + entry.environment_problem({key: value})]
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("kind", ["run.py", "rffbench"])
@pytest.mark.parametrize("delay", [0.3, 0.7, 1.2, 2.0])
def test_ctrl_c_while_starting_is_one_line(tmp_path, kind, delay):
    """Ctrl-C during the second or two of imports printed a KeyboardInterrupt traceback
    from them.  At any moment of the start-up: one line, exit 130, nothing written."""
    import signal
    import subprocess
    import time

    p = subprocess.Popen(_command(kind) + ["dataset=wine", f"hydra.run.dir={tmp_path / 'r'}"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert "Traceback" not in err and "Exception ignored" not in err, err[-2000:]
    if (tmp_path / "r" / RECORDS_FILE).exists():  # (a fast machine finished the run first)
        return
    assert p.returncode == 130, err[-2000:]
    lines = [ln for ln in err.splitlines() if not ln.startswith("[")]  # (the run's log)
    assert len(lines) == 1 and lines[0].startswith("rffbench: interrupted"), err[-2000:]
