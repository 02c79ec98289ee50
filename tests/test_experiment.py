"""rffbench/experiment.py: one run's pieces on their own (the whole run end to end:
tests/e2e, tests/measure): what a failure while measuring becomes, the compile-time record,
the thread count, the process's age and a run with nothing to measure."""
import numba
import pytest

from rffbench import clock
from rffbench.errors import ConfigError, RffbenchError
from rffbench.experiment import apply_threads, compile_record, process_age_s, run_failure
from rffbench.results import RECORDS_FILE
from tests.helpers import compose_config


@pytest.mark.parametrize("exc,code,line", [
    (RffbenchError("D=3 is not allowed"), 2, "D=3 is not allowed"),
    (FileNotFoundError(2, "No such file or directory", "/d/x.npy"), 2,
     "/d/x.npy: No such file or directory"),
    (OSError(5, "Input/output error"), 2, "input: Input/output error"),
    (MemoryError("4 GiB"), 2, "out of memory while measuring (4 GiB); the memory plan did "
                              "not foresee this allocation"),
    (SystemExit(4), 3, "the run stopped: code inside it called sys.exit(4) (a plug-in?)"),
])
def test_each_kind_of_failure_while_measuring_is_its_code_and_one_line(exc, code, line):
    got_code, got_line = run_failure(exc, in_sweep=False)
    assert got_code == code and got_line.startswith(line) and "\n" not in got_line


def test_a_bug_stops_a_run_alone_and_is_one_failed_job_of_a_sweep(caplog):
    with pytest.raises(ZeroDivisionError):
        run_failure(ZeroDivisionError("division by zero"), in_sweep=False)
    code, line = run_failure(ZeroDivisionError("division by zero"), in_sweep=True)
    assert code == 3 and line == "internal error: ZeroDivisionError: division by zero"


def test_the_compile_time_record_counts_this_runs_compiler_calls():
    before = dict(events=3, compiles=1, seconds=0.5)
    r = compile_record(before, dict(events=5, compiles=2, seconds=2.0))
    assert (r["measurement"], r["metric"], r["method"], r["value"]) == \
        ("timing", "compile_time_s", "numba", 1.5)
    assert "2 call(s) from Python" in r["note"] and "1 function(s) compiled" in r["note"]
    assert set(clock.numba_totals()) >= {"events", "compiles", "seconds"}


def test_threads_beyond_numbas_pool_are_refused_and_the_default_is_capped():
    limit, now = numba.config.NUMBA_NUM_THREADS, numba.get_num_threads()
    try:
        assert apply_threads(1) == 1 and numba.get_num_threads() == 1
        with pytest.raises(ConfigError, match=rf"^threads={limit + 1} is not allowed: use "
                                              rf"1\.\.{limit} "):
            apply_threads(limit + 1)
        assert 1 <= apply_threads(None) <= limit
    finally:
        apply_threads(now)


def test_the_process_age_is_seconds_since_this_process_began():
    age = process_age_s()
    assert age is None or 0 < age < 10 * 24 * 3600


def test_a_run_with_every_measurement_off_is_refused(tmp_path, capsys):
    """It ran and wrote a records.csv holding only its compile time."""
    from rffbench.experiment import main as run_main
    from rffbench.measure import measurement_classes

    off = [f"measure.{n}.enabled=false" for n in measurement_classes()]
    out = tmp_path / "run"
    assert run_main(compose_config(off), out) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rffbench: error: nothing to measure: every measure.<name>.enabled "
                          "is false") and "\n" not in err, err
    assert not (out / RECORDS_FILE).exists()
