"""rffbench/measure/workers.py: a cell timed in worker processes: the interleaved calls, the
pool started once per command, its cells' order, a planted slow worker (no wall-clock
asserts)."""
import pytest

from rffbench.measure.speed import interleaved


# --------------------------------------------------------------------------
# times that hold across processes: the mechanism (never a wall-clock number)
# --------------------------------------------------------------------------
class _Output:
    alive = 0

    def __init__(self):
        type(self).alive += 1

    def __del__(self):
        type(self).alive -= 1


def pid_cell(folder):
    """A cell whose one implementation writes its process's pid (test helper)."""
    import os
    from pathlib import Path

    return {"pid": lambda: (Path(folder) / str(os.getpid())).touch()}


def failing_cell():
    """A cell whose builder raises (test helper)."""
    raise ZeroDivisionError("planted in the builder")


def dying_cell():
    """A cell whose builder ends its worker process after a line on stderr (test helper)."""
    import os
    import sys

    sys.stderr.write("planted: the worker ends here\n")
    sys.stderr.flush()
    os._exit(3)


def stuck_cell():
    """A cell whose one implementation never returns in time (test helper)."""
    import time

    return {"stuck": lambda: time.sleep(60)}


def unmeasured_cell():
    """A cell whose builder raises the one-line error of a call that could not be timed
    (test helper)."""
    from rffbench.clock import UNMEASURED
    from rffbench.errors import RffbenchError

    raise RffbenchError(f"planted: {UNMEASURED}")


def planted_cell(folder, fast_s, slow_s):
    """A cell whose first worker process sleeps ``fast_s`` per call, every later one
    ``slow_s`` (a planted slow worker; test helper)."""
    import os
    import time
    from pathlib import Path

    try:
        os.close(os.open(Path(folder) / "first", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        pause = fast_s
    except FileExistsError:
        pause = slow_s
    return {"sleep": lambda: time.sleep(pause), "steady": lambda: time.sleep(fast_s)}


def test_no_output_is_alive_while_another_call_runs():
    """The interleaving keeps no call's output past its call: the next call (another
    implementation's fresh output) can reuse its memory instead of blocks freed a round
    earlier (on a VM with free page reporting, those are zeroed again at 10x the cost)."""
    from rffbench.measure.workers import interleaved_times

    seen = []
    impls = {"a": _Output, "b": _Output, "check": lambda: seen.append(_Output.alive)}
    interleaved_times(impls, 5)
    assert seen == [0] * 6  # warm-up + 5 repeats: nothing alive from a or b
    res = interleaved({"a": _Output, "check": lambda: seen.append(_Output.alive)}, 5)
    assert seen[6:] == [0] * 6 and set(res) == {"a", "check"}


def gemm_cell():
    """A cell of one product through rffbench's entry for them (test helper)."""
    import numpy as np

    from rffbench import _numba as nbk

    A = np.ones((64, 64))
    return {"gemm": lambda: nbk.matmul(A, A)}


@pytest.fixture(scope="module")
def pool():
    """One pool of timing workers for this module's cells (as one command's): each test
    after the first finds them started."""
    from rffbench.measure.workers import WorkerPool

    pool = WorkerPool()
    yield pool
    pool.close()


def test_a_cell_is_timed_in_the_processes_asked_for(tmp_path, pool):
    import os

    from rffbench.measure.workers import time_in_processes

    cells = time_in_processes(pid_cell, dict(folder=str(tmp_path)), 5, processes=3, threads=1,
                              pool=pool)
    pids = {int(p.name) for p in tmp_path.iterdir()}
    assert len(pids) == 3 and os.getpid() not in pids  # three worker processes
    assert cells.processes == 3 and len(cells.medians("pid")) == 3
    assert all(len(run) == 5 for run in cells.runs["pid"])
    assert len(cells.loads) == 3


def test_a_planted_slow_worker_marks_the_cell_unstable(tmp_path, pool):
    from rffbench.measure.workers import time_in_processes

    cells = time_in_processes(planted_cell, dict(folder=str(tmp_path), fast_s=0.002,
                                                 slow_s=0.05), 5, processes=2, threads=1,
                              pool=pool)
    assert cells.unstable("sleep") and cells.ratio("sleep") > 5
    assert "UNSTABLE" in cells.note("sleep") and "2 worker processes" in cells.note("sleep")
    assert cells.spread("sleep") == pytest.approx(max(cells.medians("sleep"))
                                                  - min(cells.medians("sleep")))
    assert cells.median("sleep") == pytest.approx(sum(cells.medians("sleep")) / 2)
    assert not cells.unstable("steady") or cells.ratio("steady") > cells.unstable_ratio


def test_the_pool_times_every_later_cell_in_the_same_workers(tmp_path, pool):
    """The workers start once (the first cell) and time every later cell, each cell's place
    in their order on the record; a worker that died is replaced at the next cell; a
    builder's exception is one line and the workers go on; closed, they are gone."""
    import os
    import signal

    from rffbench.errors import RffbenchError
    from rffbench.measure.workers import time_in_processes

    try:
        folders = [tmp_path / str(i) for i in range(4)]
        for f in folders:
            f.mkdir()
        first = time_in_processes(pid_cell, dict(folder=str(folders[0])), 3, processes=2,
                                  threads=1, pool=pool)
        second = time_in_processes(pid_cell, dict(folder=str(folders[1])), 3, processes=2,
                                   threads=1, pool=pool)
        seen = [{int(p.name) for p in f.iterdir()} for f in folders[:2]]
        assert seen[0] == seen[1] == set(first.pids) == set(second.pids)
        assert len(seen[0]) == 2 and os.getpid() not in seen[0]
        assert second.cell == first.cell + 1  # (the module's earlier cells came first)
        assert f"cell {second.cell + 1} of the command in each worker" in second.note("pid")
        with pytest.raises(RffbenchError, match=r"failing_cell: a timing worker failed: "
                                                r"ZeroDivisionError: planted in the builder"):
            time_in_processes(failing_cell, {}, 3, processes=2, threads=1, pool=pool)
        os.kill(first.pids[0], signal.SIGKILL)
        next(w for w in pool.workers if w.proc.pid == first.pids[0]).proc.wait()
        started = {w.proc.pid for w in pool.workers}  # the killed one among them
        third = time_in_processes(pid_cell, dict(folder=str(folders[2])), 3,
                                  processes=len(started), threads=1, pool=pool)
        assert first.pids[0] not in third.pids and first.pids[1] in third.pids
        assert len(set(third.pids) - started) == 1  # the dead one replaced, the rest kept
        assert third.processes == len(started) and len(set(third.pids)) == len(started)
    finally:
        procs = [w.proc for w in pool.workers]
        pool.close()
    assert all(p.poll() is not None for p in procs)


def test_a_worker_that_dies_or_hangs_is_one_line_and_replaced(capsys, monkeypatch):
    """A worker that exits mid-cell: its exit status and last stderr line (its stderr also
    passed on); one past the timeout: killed at once and said so; inputs that cannot be
    pickled: refused before any worker is asked.  The next cell gets a fresh worker."""
    from rffbench.errors import RffbenchError
    from rffbench.measure import workers

    pool = workers.WorkerPool()  # its own: its workers are counted
    with pytest.raises(RffbenchError, match=r"dying_cell: a timing worker failed \(exit 3\): "
                                            r"planted: the worker ends here$"):
        workers.time_in_processes(dying_cell, {}, 2, processes=1, threads=1, pool=pool)
    assert "planted: the worker ends here" in capsys.readouterr().err
    dead = pool.workers[0]
    monkeypatch.setattr(workers, "WORKER_TIMEOUT_S", 1)
    with pytest.raises(RffbenchError, match=r"stuck_cell: a timing worker took more than 1 s$"):
        workers.time_in_processes(stuck_cell, {}, 2, processes=1, threads=1, pool=pool)
    assert [w.proc.returncode for w in pool.workers] == [-9]  # killed, not waited for
    assert pool.workers[0] is not dead and not dead.alive()
    before = list(pool.workers)
    with pytest.raises(RffbenchError, match=r"pid_cell: its inputs cannot be sent to a timing "
                                            r"worker process \(.*lambda"):
        workers.time_in_processes(pid_cell, dict(folder=lambda: 0), 2, processes=1, pool=pool)
    assert pool.workers == before
    pool.close()


def test_the_worker_side_answers_each_task_with_one_json_line(tmp_path):
    """serve() in this process: a cell's times, a builder's one-line error, and a
    ZeroDivisionError's type and line, one JSON line each, in order."""
    import io
    import json
    import pickle

    from rffbench.clock import UNMEASURED
    from rffbench.measure.workers import serve

    paths = []
    for i, build in enumerate(["pid_cell", "unmeasured_cell", "failing_cell"]):
        task = dict(build=f"{__name__}:{build}", repeats=2, threads=1, warmups=1,
                    kwargs=dict(folder=str(tmp_path)) if build == "pid_cell" else {})
        paths.append(tmp_path / f"task{i}.pkl")
        paths[-1].write_bytes(pickle.dumps(task))
    out = io.StringIO()
    serve(io.StringIO("".join(f"{p}\n" for p in paths) + "\n"), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(answers) == 3 and len(answers[0]["times"]["pid"]) == 2
    assert answers[1] == {"error": f"planted: {UNMEASURED}"}
    assert answers[2] == {"error": "ZeroDivisionError: planted in the builder"}


def test_the_worker_entry_refuses_anything_but_serve(monkeypatch):
    """Run as a command without --serve: its usage line; imported (as the measurements'
    registry never does, but a tool walking the package may): nothing runs."""
    import importlib
    import runpy
    import sys

    monkeypatch.setattr(sys, "argv", ["rffbench.measure"])
    with pytest.raises(SystemExit, match="usage: python -m rffbench.measure --serve"):
        runpy.run_module("rffbench.measure", run_name="__main__")
    monkeypatch.setattr(sys, "stdin", None)  # serve() would read it
    module = importlib.import_module("rffbench.measure.__main__")
    assert module.serve.__module__ == "rffbench.measure.workers"


@pytest.mark.slow
@pytest.mark.skipif(__import__("rffbench.blas_choice").blas_choice.mkl_path() is None,
                    reason="oneMKL (pip install mkl) is not installed")
def test_a_cell_on_another_blas_gets_workers_of_that_blas():
    """measure.speed.blas: the pool's workers serve one BLAS; a cell asking for another
    gets fresh workers whose products run on it, and its record says which ran."""
    from rffbench.measure.workers import WorkerPool, time_in_processes

    pool = WorkerPool()
    try:
        cells = [time_in_processes(gemm_cell, {}, 3, processes=1, threads=1, pool=pool,
                                   blas=b) for b in ("default", "mkl", "mkl", "default")]
    finally:
        pool.close()
    pids = [c.pids[0] for c in cells]
    assert pids[1] == pids[2] and len({pids[0], pids[1], pids[3]}) == 3
    texts = [c.blas_text() for c in cells]
    assert [t.startswith("RFFBENCH_BLAS=mkl: mkl ") for t in texts] == [False, True, True,
                                                                          False]
