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
