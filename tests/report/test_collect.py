"""rffbench/report/collect.py: one run directory read into its status and reason (the
sweeps around it: tests/test_report.py, tests/e2e/test_hostile.py)."""
import os

import pytest

from rffbench.report.collect import read_run


@pytest.mark.parametrize("kind", ["file", "fifo", "directory", "empty"])
def test_a_failed_run_is_listed_with_its_error_line_whatever_error_txt_is(tmp_path, kind):
    """error.txt's first line is the run's reason; a FIFO or a directory in its place
    (never opened blocking) is named for what it is; an empty one says so."""
    run = tmp_path / "run"
    run.mkdir()
    err = run / "error.txt"
    if kind == "file":
        err.write_text("dataset.n=0: must be at least 1\nsecond line\n")
    elif kind == "fifo":
        os.mkfifo(err)
    elif kind == "directory":
        err.mkdir()
    else:
        err.write_text("")
    got = read_run(run)
    want = {"file": "dataset.n=0: must be at least 1",
            "fifo": "(error.txt not readable: a FIFO (named pipe), not a regular file: ",
            "directory": "(error.txt not readable: a directory, not a regular file: ",
            "empty": "failed (empty error.txt)"}[kind]
    assert got.status == "failed" and got.reason.startswith(want), got.reason
    assert len(got.reason.splitlines()) == 1
