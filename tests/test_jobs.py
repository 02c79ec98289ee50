"""rffbench/jobs.py: one run's way through the storage, driven as rffbench.experiment.main
drives it (end to end, with the measuring: tests/e2e/test_sweeps.py, tests/test_store.py)."""
from dataclasses import asdict

import pytest

from rffbench.config import validate
from rffbench.jobs import Job, os_message
from rffbench.results import ERROR_FILE, RECORDS_FILE, read_records, record, records_frame
from rffbench.store import INTERRUPTED_FILE
from tests.helpers import compose_config


@pytest.fixture(scope="module")
def conf():
    return validate(compose_config(["dataset=synthetic", "dataset.n=100", "D=16"]))


def _records(rid):
    return records_frame(dict(run_id=rid, dataset="synthetic"), [record("m", "k", 1.0)])


def _done(job, conf, tables=None):
    return job.finish(_records(job.rid), tables or {}, asdict(conf))


def test_a_run_alone_claims_its_directory_and_writes_all_its_files(tmp_path, conf, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / ERROR_FILE).write_text("an earlier failure\n")
    job = Job(out)
    rid = job.identify(conf)
    assert job.begin(conf, asdict(conf)) is None
    other = Job(out)  # a second run given the same directory while the first runs
    other.identify(conf)
    assert other.begin(conf, asdict(conf)) == 2
    assert "rffbench: error:" in capsys.readouterr().err
    path = _done(job, conf, {"extra.csv": "a,b\n1,2\n"})
    job.release()
    assert path == out / RECORDS_FILE and list(read_records(path, rid).value) == [1.0]
    assert (out / "extra.csv").read_text() == "a,b\n1,2\n"
    assert {"config.json", "manifest.json"} <= {p.name for p in out.iterdir()}
    assert not (out / ERROR_FILE).exists()  # no longer true


def test_a_sweeps_run_done_once_is_skipped_by_the_next_job_asking_for_it(tmp_path, conf,
                                                                         capsys):
    sweep = tmp_path / "sweep"
    first = Job(sweep / "0", sweep, ["D=16"])
    rid = first.identify(conf)
    assert first.begin(conf, asdict(conf)) is None
    _done(first, conf)
    first.release()
    assert (sweep / "runs" / rid / RECORDS_FILE).exists()
    again = Job(sweep / "1", sweep, ["D=16"])
    assert again.identify(conf) == rid
    assert again.begin(conf, asdict(conf)) == 0
    again.release()
    assert f"run {rid} already has records" in capsys.readouterr().out


def test_a_failure_and_an_interruption_leave_their_line_where_the_run_is(tmp_path, conf,
                                                                         capsys):
    sweep = tmp_path / "sweep"
    job = Job(sweep / "0", sweep, ["D=16"])
    job.identify(conf)
    assert job.begin(conf, asdict(conf)) is None
    assert job.fail(3, "internal error: boom\nsecond line") == 3
    assert (job.out / ERROR_FILE).read_text() == "internal error: boom\n"
    job.interrupted()
    job.release()
    assert (job.out / INTERRUPTED_FILE).read_text() == "interrupted by Ctrl-C\n"
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "rffbench: error: internal error: boom"
    assert err[-1] == (f"rffbench: interrupted: run {job.rid} stopped before its records "
                       "were written; re-run the same command to resume")


def test_an_os_error_is_one_line_naming_the_path():
    assert os_message(OSError(28, "No space left on device", "/r/records.csv")) == \
        "cannot write /r/records.csv: No space left on device"
    assert os_message(OSError("odd")) == "cannot write (unknown path): odd"
