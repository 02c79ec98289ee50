"""rffbench.compat: what is kept of older versions (0.1's run ids are tested with the run
identity in tests/test_config.py)."""
import pandas as pd
import pytest

from rffbench import compat
from rffbench.results import (
    COLUMNS,
    SCHEMA_VERSION,
    DamagedRecords,
    read_records,
    record,
    records_frame,
)

ENV = dict(schema=SCHEMA_VERSION, rffbench="t", numba="t", numpy="t", scipy="t", sklearn="t",
           runtime_env="", cpu="c", blas="b", date="2026-01-01T00:00:00", git_sha="")


def _identity(kernel, nu):
    return dict(run_id="r1", experiment="e", dataset="wine", task="classification",
                n_train=10, n_test=5, d=3, kernel=kernel, nu=nu,
                kernel_params=f"nu={nu:g}" if nu else None, lengthscale=1.0, features="rff",
                D=8, n_freq=8, n_columns=8, seed=0, dtype="float64", threads=1, device="cpu")


@pytest.mark.parametrize("kernel,nu,want", [("matern", 2.5, "nu=2.5"), ("gaussian", None, None)])
def test_schema3_records_are_read_with_the_columns_added_since(tmp_path, kernel, nu, want):
    """A schema 3 file (no kernel_params, no device) is read as it is, kernel_params derived
    from nu and device cpu; its schema column keeps 3.  Schema 5 with 3's columns, or 3
    with 5's, is damaged."""
    df = records_frame(_identity(kernel, nu), [record("approximation", "m", 1.0)],
                       env={**ENV, "schema": 3})
    old = df.drop(columns=["kernel_params", "device"])
    old.to_csv(tmp_path / "records.csv", index=False)
    got = read_records(tmp_path / "records.csv")
    assert list(got.columns) == COLUMNS and set(got.schema) == {3}
    assert got.kernel_params.iloc[0] == want or (want is None and pd.isna(got.kernel_params[0]))
    assert list(got.device) == ["cpu"]
    old.assign(schema=SCHEMA_VERSION).to_csv(tmp_path / "records.csv", index=False)
    with pytest.raises(DamagedRecords,
                       match=rf"schema value {SCHEMA_VERSION}: .*\(and 3, whose columns the "
                             r"file has\)"):
        read_records(tmp_path / "records.csv")
    df.to_csv(tmp_path / "records.csv", index=False)  # this schema's columns, schema 3
    with pytest.raises(DamagedRecords, match="schema value 3"):
        read_records(tmp_path / "records.csv")


def test_schema4_records_are_read_as_cpu_runs(tmp_path):
    """Schema 4 (kernel_params, no device): every run before the device column ran on the
    CPU; the columns come back in this schema's order."""
    df = records_frame(_identity("matern", 1.5), [record("approximation", "m", 1.0)],
                       env={**ENV, "schema": 4})
    df.drop(columns=["device"]).to_csv(tmp_path / "records.csv", index=False)
    got = read_records(tmp_path / "records.csv")
    assert list(got.columns) == COLUMNS and set(got.schema) == {4}
    assert list(got.device) == ["cpu"] and got.kernel_params.iloc[0] == "nu=1.5"
    assert compat.columns_of(4, COLUMNS) == [c for c in COLUMNS if c != "device"]


def test_schema2_records_are_outdated_not_damaged(tmp_path):
    df = records_frame(_identity("gaussian", None), [record("approximation", "m", 1.0)],
                       env={**ENV, "schema": 2})
    df.drop(columns=["cpu", "blas"]).to_csv(tmp_path / "records.csv", index=False)
    with pytest.raises(DamagedRecords) as e:
        read_records(tmp_path / "records.csv")
    assert e.value.status == "outdated"
