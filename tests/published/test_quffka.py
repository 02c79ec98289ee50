"""rffbench/published/quffka.py: the extraction of quffka's stored errors."""
import io
import pickle

import numpy as np
import pandas as pd
import pytest

from rffbench.published.quffka import extract
from rffbench.published.safe import UnsafePickleError
from tests.helpers import run_module
from tests.published.common import Evil


def test_extraction_summarises_each_point(tmp_path):
    """quffka's layout: dataset -> kernel -> method -> (5 values of n, runs)."""
    rng = np.random.default_rng(0)
    runs = rng.uniform(0.1, 0.2, size=(5, 40))
    runs[:, 20:] = runs[:, :20]  # repeated runs (as their QMC): distinct counts them once
    path = tmp_path / "All_KA"
    path.write_bytes(pickle.dumps({"LETTER": {"Arccos 0": {"QMC": runs}}}))
    df = extract(path)
    assert len(df) == 5 and set(df.kernel) == {"arccos0"} and set(df.dataset) == {"letter"}
    np.testing.assert_allclose(df["mean"], runs.mean(axis=1))
    np.testing.assert_allclose(df.sd, runs.std(axis=1, ddof=1))
    assert list(df.distinct) == [20] * 5 and list(df.n_freq) == [34 * n for n in range(1, 6)]
    out = run_module("rffbench.published.quffka", str(path), "--commit", "abc1234")
    assert out.returncode == 0 and out.stdout.startswith("# paper: Munkhoeva")
    back = pd.read_csv(io.StringIO(out.stdout), comment="#")
    assert len(back) == 5 and back["mean"].iloc[0] == pytest.approx(runs[0].mean(), rel=1e-7)
    evil = tmp_path / "evil"
    evil.write_bytes(pickle.dumps({"LETTER": Evil()}))
    with pytest.raises(UnsafePickleError):
        extract(evil)
