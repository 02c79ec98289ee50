"""rffbench/published/extract.py: what the extractors share: the ``--commit`` argument, a
point's summary, the walk over nested dicts and the command's ending."""
import argparse
import pickle
import re

import numpy as np
import pandas as pd
import pytest

from rffbench.published.extract import ExtractError, commit_hash, finish, level, summary


@pytest.mark.parametrize("value", ["abc1234", "7A4DEECE9C8E2BB3B55549C08D25935364F43B34"])
def test_a_commit_is_7_to_40_hexadecimal_digits(value):
    assert commit_hash(value) == value


@pytest.mark.parametrize("value", ["abc123", "x" * 7, "a" * 41, "main", ""])
def test_anything_else_is_refused_naming_the_flag(value):
    with pytest.raises(argparse.ArgumentTypeError, match="--commit=.*7 to 40 hexadecimal"):
        commit_hash(value)


def test_a_points_summary_counts_repeated_runs_once_as_distinct():
    values = np.array([0.1, 0.2, 0.2, 0.4])
    s = summary(values)
    assert s == dict(runs=4, distinct=3, mean=pytest.approx(0.225),
                     sd=pytest.approx(np.std(values, ddof=1)), median=pytest.approx(0.2))


def test_a_level_of_unknown_keys_or_not_a_dict_is_one_line_naming_where():
    assert list(level({"a": 1}, "file", "kernel", known=("a", "b"))) == [("a", 1)]
    with pytest.raises(ExtractError, match=r"^file/x: unknown kernel 'c' \(known: a, b\) in "
                                           r"theirs$"):
        level({"c": 1}, "file/x", "kernel", known=("a", "b"), whose=" in theirs")
    with pytest.raises(ExtractError, match=r"^file is a list, not a dict of kernels$"):
        level([1], "file", "kernel")


@pytest.mark.parametrize("fails,says", [
    (OSError(2, "No such file or directory", "f.pkl"), "error: .*No such file"),
    (pickle.UnpicklingError("global 'os.system' is forbidden"), "error: in f: global"),
    (ExtractError("f is a list, not a dict of kernels"), "error: in f: f is a list"),
    (EOFError("Ran out of input"), "error: in f: not a readable pickle \\(EOFError: Ran out"),
])
def test_the_end_of_an_extraction_is_the_csv_or_one_line_and_exit_2(fails, says, capsys):
    def extract():
        raise fails

    assert finish("prog", extract, "# header\n", where="in f: ") == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("prog: ") and re.search(says, err), err
    assert finish("prog", lambda: pd.DataFrame({"a": [1.0 / 3]}), "# header\n") == 0
    out, _ = capsys.readouterr()
    assert out == "# header\na\n0.33333333\n"
