"""rffbench/results.py: a record's value, the records file's checks on reading (every
kind of damage named, never half a file) and the atomic writes."""
import pandas as pd
import pytest

from rffbench.results import (
    COLUMNS,
    SCHEMA_VERSION,
    DamagedRecords,
    read_records,
    record,
    records_frame,
    write_all_atomic,
    write_atomic,
)

IDENTITY = dict(run_id="abc123", experiment="t", dataset="synthetic", D=16, d=3, seed=0)


def test_a_value_that_is_not_finite_is_never_recorded_as_one():
    for bad in (float("inf"), float("-inf"), float("nan")):
        r = record("variance", "mse_theory", bad, note="exact (a formula)")
        assert r["value"] is None and r["note"].startswith("n/a: the value computed was")
        assert "exact (a formula)" in r["note"]
    assert record("bounds", "sigma_p2", float("inf"), infinite=True)["value"] == float("inf")
    assert record("x", "y", float("nan"), infinite=True)["value"] is None
    with pytest.raises(ValueError):
        record("variance", "mse_empirical", 1.0, dist=float("inf"))


def _written(tmp_path, rows=2):
    df = records_frame(IDENTITY, [record("m", f"k{i}", float(i), note="a, b") for i in
                                  range(rows)], env={"schema": SCHEMA_VERSION})
    path = tmp_path / "records.csv"
    write_atomic(df, path)
    return path


def test_records_read_back_as_written(tmp_path):
    path = _written(tmp_path, rows=3)
    df = read_records(path, run_id="abc123")
    assert list(df.columns) == COLUMNS and len(df) == 3
    assert list(df.value) == [0.0, 1.0, 2.0] and set(df.note) == {"a, b"}
    assert (df.schema == SCHEMA_VERSION).all()


def _lines(path):
    return path.read_text().splitlines(keepends=True)


#: (what is done to a good file, the reason read_records gives)
DAMAGES = [
    (lambda p: p.write_bytes(b""), "empty file"),
    (lambda p: p.write_text(p.read_text()[:-1]), "cut mid-line"),
    (lambda p: p.write_text(_lines(p)[0]), "no records (header only)"),
    (lambda p: p.write_text("".join(_lines(p)[:2]) + "x,y\n"), "line 3 has 2 fields"),
    (lambda p: p.write_text(p.read_text().replace(",0.0,", ",zero,", 1)),
     "column value, line 2: 'zero' is not a number"),
    (lambda p: p.write_text("".join(_lines(p)[:2]) + _lines(p)[2].replace("abc123", "zzz", 1)),
     "2 run_ids in one file"),
    (lambda p: p.write_text(p.read_text().replace(f",{SCHEMA_VERSION},", ",99,")),
     "schema value 99"),
    (lambda p: p.write_bytes(p.read_bytes().replace(b"a, b", b"a\xff b", 1)), "not UTF-8"),
    (lambda p: p.write_text(p.read_text().replace("note", "remark", 1)),
     "not this schema's columns (missing note, unknown remark)"),
]


@pytest.mark.parametrize("damage,reason", DAMAGES, ids=[r[:24] for _, r in DAMAGES])
def test_each_kind_of_damage_is_refused_with_the_path_and_the_reason(tmp_path, damage, reason):
    path = _written(tmp_path)
    damage(path)
    with pytest.raises(DamagedRecords) as err:
        read_records(path)
    assert err.value.status == "damaged" and str(path) in str(err.value)
    assert reason in err.value.reason, err.value.reason


def test_records_in_another_runs_directory_are_refused(tmp_path):
    path = _written(tmp_path)
    with pytest.raises(DamagedRecords, match="holds run abc123 but lies in the directory of "
                                             "run other"):
        read_records(path, run_id="other")


def test_several_files_are_written_all_or_none(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.txt"
    assert write_all_atomic([(pd.DataFrame({"x": [1]}), a), ("done\n", b)]) == [a, b]
    assert a.read_text() == "x\n1\n" and b.read_text() == "done\n"

    def fails(tmp):
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError) as err:
        write_all_atomic([(pd.DataFrame({"x": [2]}), a), (fails, tmp_path / "c.txt")])
    assert str(tmp_path / "c.txt") in str(err.value) and "No space" in str(err.value)
    assert a.read_text() == "x\n1\n"  # the first file is not replaced: none of them is
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.txt"]  # no temporary
