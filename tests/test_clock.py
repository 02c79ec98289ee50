"""A timed section times the work: numba compiling (or loading from its cache) inside a
timed call is detected through numba's event API and the call is timed again."""
import json
import os
import re
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pandas as pd
import pytest

from rffbench import clock
from tests.helpers import ROOT


def _fresh_jit():
    """A numba function that compiles at its first call (no cache)."""
    @numba.njit(cache=False)
    def fresh_kernel(x):
        s = 0.0
        for v in x:
            s += v * v
        return s

    return fresh_kernel


def test_a_call_that_compiles_is_timed_again_and_the_compiler_is_named():
    f = _fresh_jit()
    x = np.arange(10.0)
    before = clock.numba_totals()
    result, t = clock.clean_call(lambda: f(x))
    assert result == float(np.sum(x * x))
    assert len(t.discarded) == 1 and t.discarded[0].events >= 1
    assert "fresh_kernel" in t.discarded[0].compiled
    assert t.seconds is not None and t.seconds < t.discarded[0].seconds
    assert "timed again" in t.note() and "fresh_kernel" in t.note()
    after = clock.numba_totals()
    assert after["compiles"] >= before["compiles"] + 1 and after["seconds"] > before["seconds"]
    # a warm call is kept at once
    _, t2 = clock.clean_call(lambda: f(x))
    assert t2.discarded == [] and t2.note() == ""


def test_a_call_that_compiles_every_time_is_not_measured():
    _, t = clock.clean_call(lambda: _fresh_jit()(np.ones(3)))
    assert t.seconds is None and len(t.discarded) == clock.ATTEMPTS
    assert t.note().startswith("not measured")
    med, spread = clock.time_call(lambda: _fresh_jit()(np.ones(3)), 3)
    assert med is None and spread is None


def test_time_call_warms_up_then_times_clean_calls():
    f = _fresh_jit()
    n0 = len(clock.LOG)
    med, spread = clock.time_call(lambda: f(np.ones(5)), 3)
    assert med is not None and spread >= 0
    kept = list(clock.LOG)[n0:]
    assert len(kept) == 3 and all(a["kept"] and a["events"] == 0 for a in kept)


def test_probes_count_compilations_per_process_and_a_new_process_counts_its_own():
    state = {"w1": 5, "w2": 3}
    f = lambda: None  # noqa: E731
    _, a = clock.attempt(f, probes=[lambda: dict(state)])
    assert a.events == 0
    seq = iter([{"w1": 5, "w2": 3}, {"w1": 6, "w2": 3}])
    _, a = clock.attempt(f, probes=[lambda: next(seq)])
    assert a.events == 1
    # w2 lost (its count gone), w3 restarted after it and compiled twice: counted, never
    # a negative difference that would hide it
    seq = iter([{"w1": 5, "w2": 30}, {"w1": 5, "w3": 2}])
    _, a = clock.attempt(f, probes=[lambda: next(seq)])
    assert a.events == 2


DRIVER = textwrap.dedent("""
    import json, sys, threading, time
    import rffbench  # noqa: F401
    import numba
    from numba.core import event

    spans, open_at, lock = [], {}, threading.Lock()

    class Watch(event.Listener):  # numba's compiler, seen independently of rffbench.clock
        def on_start(self, ev):
            with lock:
                k = threading.get_ident()
                depth, t0 = open_at.get(k, (0, None))
                open_at[k] = (depth + 1, time.perf_counter() if depth == 0 else t0)

        def on_end(self, ev):
            with lock:
                k = threading.get_ident()
                depth, t0 = open_at[k]
                if depth == 1:
                    spans.append((t0, time.perf_counter()))
                    del open_at[k]
                else:
                    open_at[k] = (depth - 1, t0)

    event.register("numba:compiler_lock", Watch())
    from rffbench import clock
    from rffbench.cli import main

    out, args = sys.argv[1], sys.argv[2:]
    sys.argv = ["run.py", *args]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
    json.dump(dict(code=code, spans=spans, attempts=list(clock.LOG)), open(out, "w"))
""")


def _cold_run(tmp_path, *args):
    """``run.py *args`` in a process whose numba cache is empty, with numba's compiler
    watched by a listener of the test's own: (exit code, compiler spans, timed attempts)."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    out = tmp_path / "seen.json"
    env = dict(os.environ, MPLBACKEND="Agg", NUMBA_CACHE_DIR=str(tmp_path / "empty-cache"),
               PYTHONPATH=str(ROOT / "tests"))
    p = subprocess.run([sys.executable, str(driver), str(out), *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
    assert out.exists(), p.stderr[-3000:]
    seen = json.loads(out.read_text())
    assert seen["code"] == 0, p.stderr[-3000:]
    return seen


def _overlaps(span, attempt):
    return span[0] < attempt["t1"] and attempt["t0"] < span[1]


@pytest.mark.slow
def test_no_compilation_inside_a_recorded_timing_with_an_empty_numba_cache(tmp_path):
    """Every measurement that times something, on an empty numba cache: the compiler runs
    (cold), but never during a timed call that was kept; compile time is its own record."""
    sweep = tmp_path / "sweep"
    seen = _cold_run(
        tmp_path, "-m", f"hydra.sweep.dir={sweep}", "dataset=synthetic", "dataset.n=600",
        "D=128", "features=rff,sorf", "model.exact_solver=cholesky,cg",
        "measure.bounds.trials=5", "measure.speed.enabled=true", "measure.speed.peers=[]",
        "measure.speed.gram_max_n=300", "measure.speed.train_max_n=300",
        "measure.speed.repeats=5", "measure.speed.processes=1",  # one worker compiles
        "measure.speed.maps=[rff,sorf]")  # a dense and a structured map (not all five)
    assert seen["spans"], "an empty cache compiles: the listener saw nothing"
    kept = [a for a in seen["attempts"] if a["kept"]]
    assert len(kept) > 50
    inside = [(a["what"], s) for a in kept for s in seen["spans"] if _overlaps(s, a)]
    assert inside == []
    # and the warm-ups compile every timed path beforehand: nothing had to be timed again
    assert [a["what"] for a in seen["attempts"] if not a["kept"]] == []
    recs = pd.concat([pd.read_csv(f) for f in sweep.glob("runs/*/records.csv")])
    assert recs.run_id.nunique() == 4
    comp = recs[recs.metric == "compile_time_s"]
    assert len(comp) == 4 and (comp.value >= 0).all() and comp.value.max() > 0
    times = recs[(recs.unit == "s") & ~recs.metric.isin(["compile_time_s", "startup_time_s"])]
    assert times.value.notna().all(), times[times.value.isna()].note.tolist()


def test_blas_info_names_each_loaded_blas_with_its_threads_as_limited():
    """The BLAS a timing row names: vendor, version, kernel and the threads it has now
    (a worker's limit, not the machine's cores), each library once."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        one = clock.blas_info()
    assert one != "unknown" and "(numpy)" in one
    for part in one.split("; "):  # vendor version [kernel] threads (owner)
        assert re.fullmatch(r"\w+ \d[\w.]* (\w+ )?1 threads \(\S+\)", part), part
    assert len(set(one.split("; "))) == len(one.split("; "))
