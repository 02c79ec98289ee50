"""rffbench/published/buechel.py: Buechel et al.'s and Liu et al.'s CSVs are what their
files hold."""

import pytest

from tests.helpers import run_module
from tests.published.common import BUECHEL, LIU, extraction_is_the_committed_csv


def test_buechel_csv_is_what_their_files_hold(tmp_path):
    """The committed CSV is the extraction of their letter, magic and ijcnn1 files (kept
    unchanged in tests/fixtures), byte for byte, and holds every (dataset, metric, kernel,
    method, s) once with their 10 seeds."""
    df = extraction_is_the_committed_csv("buechel", "buechel2024.csv", BUECHEL)
    assert len(df) == 3 * 2 * 2 * 3 * 5 and (df.runs == 10).all()
    assert set(df[df.dataset == "letter"].n_freq) == {31, 62, 125, 252, 507}  # int(2^s 16) - s
    assert set(df[df.dataset == "magic"].n_freq) == {19, 38, 77, 156, 315}  # int(2^s 10) - s
    assert set(df[df.dataset == "ijcnn1"].n_freq) == {25, 50, 101, 204, 411}  # int(2^s 13) - s
    err = df[df.metric == "rel_fro_error"].set_index(["dataset", "kernel", "method", "s"])
    # their Gaussian-kernel errors fall with n_freq for every method
    for ds in ("letter", "magic", "ijcnn1"):
        for m in ("rff", "orf", "sorf"):
            assert err.loc[(ds, "gaussian", m)]["mean"].is_monotonic_decreasing


@pytest.mark.parametrize("args, says", [
    (["--datasets", "letter", "magic", "letter"], "--datasets: letter given twice (each "
                                                  "dataset's points would be written twice)"),
    (["--replication", "liu", "--datasets", "letter"], "--datasets has no effect with "
                                                       "--replication liu (its points are "
                                                       "ijcnn1's): leave it out")])
def test_the_buechel_extractor_refuses_a_dataset_twice_and_one_without_effect(args, says):
    """One line, exit 2, nothing on stdout: no CSV with a dataset's points twice, no
    --datasets silently ignored."""
    p = run_module("rffbench.published.buechel", str(BUECHEL), "--commit", "abc1234", *args)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip().splitlines()[-1] == f"python -m rffbench.published.buechel: " \
                                                f"error: {says}"


def test_liu_csv_is_what_their_replications_files_hold():
    """The committed liu2021.csv is the extraction of their err.pkl and acc.pkl (plain
    pickles, kept unchanged in tests/fixtures), byte for byte: 3 kernels x 3 maps x 5 sizes
    2^s 13, errors and accuracies, 10 seeds each."""
    df = extraction_is_the_committed_csv("buechel", "liu2021.csv", LIU, "--replication", "liu")
    assert len(df) == 2 * 3 * 3 * 5 and (df.runs == 10).all() and set(df.dataset) == {"ijcnn1"}
    assert set(df.n_freq) == {26, 52, 104, 208, 416} and set(df.d) == {13}
    assert set(df.kernel) == {"gaussian", "arccos0", "arccos1"}
    acc = df[df.metric == "test_accuracy"]
    assert ((acc["mean"] > 0.9) & (acc["mean"] < 1)).all()  # accuracies, not error rates
