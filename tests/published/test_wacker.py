"""rffbench/published/wacker.py: dp-rfs's CSV is what their files hold; a damaged table is
refused in one line."""
import shutil

import numpy as np
import pandas as pd
import pytest

from tests.helpers import run_module
from tests.published.common import WACKER, extraction_is_the_committed_csv


def test_wacker_csv_is_what_their_files_hold():
    """The committed CSV is the extraction of their four gaussian_approx tables (kept,
    gzipped, in tests/fixtures), byte for byte: 4 datasets x 4 rff configurations x 5 D,
    10 seeds each, the real variants at n_freq = D / 2, the complex ones at n_freq = D."""
    df = extraction_is_the_committed_csv("wacker", "wacker2022.csv", WACKER)
    assert len(df) == 4 * 4 * 5 and (df.runs == 10).all() and (df.distinct == 10).all()
    real = df.method.isin(["rff_gaussian", "rff_srht"])
    assert (df.n_freq[real] * 2 == df.D[real]).all() and (df.n_freq[~real] == df.D[~real]).all()
    for r in df.itertuples():  # the summary is of the stored seeds
        v = np.array([float(x) for x in r.values.split(";")])
        assert v.size == 10 and v.mean() == pytest.approx(r.mean, rel=1e-6)
    raw = pd.read_csv(WACKER / "Letter_d16_n20000.csv.gz")
    one = raw[(raw.method == "rff") & (raw.proj == "srht") & (raw.comp == 1) & (raw.D == 48)]
    row = df[(df.dataset == "letter") & (df.method == "rff_srht_complex") & (df.D == 48)]
    assert row["mean"].iloc[0] == pytest.approx(one.k_rel_frob_error.mean(), rel=1e-7)


@pytest.mark.parametrize("damage,message", [
    (lambda df: df.drop(columns="k_rel_frob_error"), "no column 'k_rel_frob_error'"),
    (lambda df: df[~((df.method == "rff") & (df.seed == 3) & (df.D == 32))],
     "seeds [0, 1, 2, 4, 5, 6, 7, 8, 9], expected 0..9 once each"),
    (lambda df: df.assign(k_rel_frob_error=-df.k_rel_frob_error),
     "errors that are not positive finite numbers"),
    (lambda df: df.assign(k_rel_frob_error=df.k_rel_frob_error.astype(object).where(
        df.index != 5, "oops")),
     "column 'k_rel_frob_error', row 7 of the file: 'oops' is not a number"),
])
def test_a_damaged_wacker_table_is_refused_in_one_line(tmp_path, damage, message):
    for f in WACKER.iterdir():
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / "Letter_d16_n20000.csv.gz"
    damage(pd.read_csv(path)).to_csv(path, index=False)
    p = run_module("rffbench.published.wacker", str(tmp_path), "--commit", "abc1234",
                   timeout=120)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and message in p.stderr, p.stderr
    assert "Letter_d16_n20000.csv.gz" in p.stderr
    (tmp_path / "Magic_d16_n19020.csv.gz").unlink()
    p = run_module("rffbench.published.wacker", str(tmp_path), "--commit", "abc1234",
                   timeout=120)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
