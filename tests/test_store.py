"""The run store checks what it hands out: every entry (a run of a sweep folder, a run of
the results folder's store, a shared result) carries a manifest (its id and the digest of
each result file, written last); a resume, a copy out of the store and a read of shared
rows verify it, and a damaged or mismatched entry is set aside (kept) and made again."""
import json
import shutil

import pandas as pd
import pytest

from rffbench import store as st
from rffbench.results import RECORDS_FILE, read_records
from tests.helpers import run_cli, run_module

TINY = ["dataset=synthetic", "dataset.n=200", "dataset.d=3", "measure.bounds.trials=8",
        "measure.learning.repeats=1", "measure.timing.repeats=3", "model.exact_max_n=400"]
CLASSES = [*TINY, "dataset.task=classification", "report.pdf=false"]  # sweeps: PNGs will do


# --------------------------------------------------------------------------
# the mechanism, through the API
# --------------------------------------------------------------------------
def _entry(folder, rid="r1", text="run_id,value\nr1,1.5\nr1,2.5\n"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RECORDS_FILE).write_text(text)
    (folder / "extra.csv").write_text("a\n1\n")
    st.write_manifest(folder, rid, ["extra.csv", RECORDS_FILE])
    return folder


def _check(rid, legacy=None):
    return lambda f: st.check_entry(f, rid, RECORDS_FILE, legacy=legacy)


def test_a_sound_entry_checks_and_each_damage_is_named(tmp_path):
    d = _entry(tmp_path / "r1")
    assert st.check_entry(d, "r1", RECORDS_FILE) == ("ok", None)
    assert st.check_entry(tmp_path / "none", "r1", RECORDS_FILE) == ("absent", None)
    # under another id (another entry's files copied here)
    state, why = st.check_entry(d, "r2", RECORDS_FILE)
    assert state == "damaged" and "entry r1's, not r2's" in why
    # one byte changed, a line cut at a line boundary (no parser can tell), a file gone
    for damage, words in [(lambda: (d / RECORDS_FILE).write_text("run_id,value\nr1,1.5\nr1,2.6\n"),
                           "records.csv differs from its digest"),
                          (lambda: (d / RECORDS_FILE).write_text("run_id,value\nr1,1.5\n"),
                           "records.csv differs from its digest"),
                          (lambda: (d / "extra.csv").unlink(), "extra.csv is missing"),
                          (lambda: (d / st.MANIFEST_FILE).write_text('{"run_id": "r1"'),
                           "manifest.json: not JSON"),
                          (lambda: (d / st.MANIFEST_FILE).write_text(
                              '{"run_id": "r1", "files": {"../x": {"sha256": "0"}}}'),
                           "is not a file name")]:
        _entry(d)
        damage()
        state, why = st.check_entry(d, "r1", RECORDS_FILE)
        assert state == "damaged" and words in why, why


def test_without_a_manifest_only_a_legacy_check_can_accept(tmp_path):
    d = tmp_path / "r1"
    d.mkdir()
    (d / RECORDS_FILE).write_text("run_id\nr1\n")
    state, why = st.check_entry(d, "r1", RECORDS_FILE)
    assert state == "damaged" and "without manifest.json" in why
    assert st.check_entry(d, "r1", RECORDS_FILE, legacy=lambda f: None) == ("ok", None)
    assert st.check_entry(d, "r1", RECORDS_FILE, legacy=lambda f: "cut") == ("damaged", "cut")


def test_acquire_sets_a_damaged_entry_aside_and_keeps_it(tmp_path, capfd):
    d = _entry(tmp_path / "r1")
    assert st.acquire(d, _check("r1")) is None  # sound: nothing to compute
    (d / RECORDS_FILE).write_text("run_id,value\nr1,1.5\nr1,2.")  # cut
    claim = st.acquire(d, _check("r1"))
    assert claim is not None
    kept = list((tmp_path / st.SET_ASIDE_DIR).iterdir())
    assert len(kept) == 1 and kept[0].name.startswith("r1-")
    assert (kept[0] / RECORDS_FILE).read_text().endswith("r1,2.")  # never deleted
    assert sorted(f.name for f in d.iterdir()) == [st.CLAIM_FILE]
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(d) in err[0] and "differs from its digest" in err[0]
    assert str(kept[0]) in err[0]
    claim.release()


def test_a_copy_is_checked_before_it_is_renamed_into_place(tmp_path, monkeypatch):
    src = _entry(tmp_path / "store" / "r1")
    dst = tmp_path / "sweep" / "r1"
    real = shutil.copyfileobj

    def corrupting(fi, fo):  # the source changes between its check and its copy
        real(fi, fo)
        fo.write(b"r1,9\n")

    monkeypatch.setattr(shutil, "copyfileobj", corrupting)
    with pytest.raises(st.DamagedFile, match="its copy differs from the digest"):
        st.copy_checked(src, dst, ["extra.csv", RECORDS_FILE], "r1")
    assert not dst.exists() or not any(dst.iterdir())  # nothing half copied
    monkeypatch.setattr(shutil, "copyfileobj", real)
    st.copy_checked(src, dst, ["extra.csv", RECORDS_FILE], "r1")
    assert st.check_entry(dst, "r1", RECORDS_FILE) == ("ok", None)


# --------------------------------------------------------------------------
# the hostile entries, through the command
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A results folder with one sweep (D=16,24, classification) and its store."""
    root = tmp_path_factory.mktemp("results")
    p = run_cli("-m", *CLASSES, "D=16,24", f"hydra.sweep.dir={root / 'a'}")
    assert p.returncode == 0, p.stderr[-2000:]
    return root


def _copy(folder, tmp_path):
    shutil.copytree(folder, tmp_path / "r", symlinks=True)
    return tmp_path / "r"


def _ids(root):
    """run id by D of the sweep a."""
    out = {}
    for f in (root / "a" / "runs").glob(f"*/{RECORDS_FILE}"):
        out[int(read_records(f).D.iloc[0])] = f.parent.name
    return out


def _one_warning(p, entry):
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("rffbench: warning:")]
    assert len(lines) == 1 and str(entry) in lines[0] and "set aside in" in lines[0], p.stderr
    return lines[0]


@pytest.mark.slow
def test_a_store_entry_cut_in_half_is_set_aside_and_computed_again(folder, tmp_path):
    root = _copy(folder, tmp_path)
    rid = _ids(root)[16]
    rec = root / st.STORE_DIR / rid / RECORDS_FILE
    raw = rec.read_bytes()
    rec.write_bytes(raw[:len(raw) // 2])
    p = run_cli("-m", *CLASSES, "D=16,24", f"hydra.sweep.dir={root / 'b'}")
    assert p.returncode == 0, p.stderr[-2000:]
    line = _one_warning(p, root / st.STORE_DIR / rid)
    assert "records.csv differs from its digest" in line
    assert p.stdout.count("was computed by another sweep") == 1  # D=24 only
    kept = list((root / st.STORE_DIR / st.SET_ASIDE_DIR).glob(f"{rid}-*/{RECORDS_FILE}"))
    assert len(kept) == 1 and kept[0].read_bytes() == raw[:len(raw) // 2]
    for sweep in ("a", "b"):  # the new copy and the store hold whole records again
        read_records(root / sweep / "runs" / rid / RECORDS_FILE, run_id=rid)
    assert st.check_entry(root / st.STORE_DIR / rid, rid, RECORDS_FILE)[0] == "ok"
    again = run_cli("-m", *CLASSES, "D=16,24", f"hydra.sweep.dir={root / 'b'}")
    assert again.stdout.count("skipped (resume)") == 2 and "warning" not in again.stderr


@pytest.mark.slow
@pytest.mark.parametrize("what", ["directory", "records"])
def test_a_store_entry_holding_another_runs_records_is_not_copied_as_this_run(
        folder, tmp_path, what):
    root = _copy(folder, tmp_path)
    ids = _ids(root)
    here, other = root / st.STORE_DIR / ids[16], root / st.STORE_DIR / ids[24]
    if what == "directory":  # the D=24 run's whole entry under the D=16 run's id
        shutil.rmtree(here)
        shutil.copytree(other, here)
    else:
        shutil.copyfile(other / RECORDS_FILE, here / RECORDS_FILE)
    p = run_cli("-m", *CLASSES, "D=16", f"hydra.sweep.dir={root / 'b'}")
    assert p.returncode == 0, p.stderr[-2000:]
    line = _one_warning(p, here)
    assert (f"not {ids[16]}'s" if what == "directory" else "differs from its digest") in line
    got = read_records(root / "b" / "runs" / ids[16] / RECORDS_FILE, run_id=ids[16])
    assert set(got.D) == {16}


@pytest.mark.slow
def test_shared_rows_cut_inside_a_value_are_computed_again(folder, tmp_path):
    """The issue's case: exact KRR's rows.csv cut inside its test error; the next sweep
    with another D recorded 0.02 for 0.0223.  Now the entry is set aside and exact KRR is
    computed again: the same numbers as the first sweep's."""
    root = _copy(folder, tmp_path)
    shared = next((root / st.STORE_DIR / st.SHARED_DIR).glob("exact_krr-*"))
    rows = shared / st.SHARED_ROWS_FILE
    text = rows.read_text()
    line = text.index("learning,test_error_rate,exact_krr,")  # measurement,metric,method,value
    start = line + len("learning,test_error_rate,exact_krr,")
    cut = start + 3  # "0.0" of 0.06: a number still, and a wrong one
    first = read_records(next((root / "a" / "runs").glob(f"*/{RECORDS_FILE}")))
    truth = first[(first.method == "exact_krr") & (first.metric == "test_error_rate")].value
    assert len(truth) == 1 and float(text[start:cut]) != truth.iloc[0]
    rows.write_text(text[:cut] + "\n")
    p = run_cli("-m", *CLASSES, "D=40", f"hydra.sweep.dir={root / 'c'}")
    assert p.returncode == 0, p.stderr[-2000:]
    line = _one_warning(p, shared)
    assert "rows.csv differs from its digest" in line
    got = read_records(next((root / "c" / "runs").glob(f"*/{RECORDS_FILE}")))
    ex = got[got.method == "exact_krr"].set_index("metric").value
    ref = first[first.method == "exact_krr"].set_index("metric").value
    assert ex["test_error_rate"] == truth.iloc[0]
    assert sorted(ex.index) == sorted(ref.index)  # no exact-KRR metric missing
    assert "complete: 1 complete" in p.stdout


@pytest.mark.slow
def test_a_damaged_run_of_a_sweep_folder_is_computed_again_not_skipped(folder, tmp_path):
    root = _copy(folder, tmp_path)
    rid = _ids(root)[24]
    rec = root / "a" / "runs" / rid / RECORDS_FILE
    text = rec.read_text()
    rec.write_text(text[:text.index("\n", len(text) // 2) + 1])  # whole lines: parses
    rep = run_module("rffbench.report", str(root / "a"), "--no-pdf")
    assert rep.returncode == 1 and "differs from its digest" in rep.stdout + rep.stderr
    p = run_cli("-m", *CLASSES, "D=16,24", f"hydra.sweep.dir={root / 'a'}")
    assert p.returncode == 0, p.stderr[-2000:]
    _one_warning(p, root / "a" / "runs" / rid)
    assert p.stdout.count("skipped (resume)") == 1
    assert "complete: 2 complete" in p.stdout
    assert rec.read_text() == text  # copied back from the store, checked


@pytest.mark.slow
def test_a_sweep_folder_written_before_manifests_still_resumes(folder, tmp_path):
    root = _copy(folder, tmp_path)
    for m in (root / "a" / "runs").glob(f"*/{st.MANIFEST_FILE}"):
        m.unlink()
    p = run_cli("-m", *CLASSES, "D=16,24", f"hydra.sweep.dir={root / 'a'}")
    assert p.returncode == 0 and p.stdout.count("skipped (resume)") == 2, p.stderr[-2000:]
    assert "warning" not in p.stderr
    manifest = json.loads(next((root / st.STORE_DIR).glob(f"*/{st.MANIFEST_FILE}")).read_text())
    assert RECORDS_FILE in manifest["files"]
    assert pd.notna(manifest["run_id"])


def test_count_jobs_lets_a_later_override_replace_a_key_as_hydras_sweeper():
    """A command line's +group=a,b (or seed=0) replaces the preset's sweeper.params entry of
    the same key, as Hydra's basic sweeper does: the count is of the jobs that run."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from rffbench.store import count_jobs

    parse = OverridesParser.create().parse_overrides
    preset = ["+m=a,b,c,d", "D_n=1,2,3,4,5", "seed=0,1,2,3,4"]
    assert count_jobs(parse(preset)) == 100
    assert count_jobs(parse(preset + ["+m=a,b", "seed=0,1,2"])) == 2 * 5 * 3
    assert count_jobs(parse(preset + ["seed=7"])) == 4 * 5
    assert count_jobs(parse(preset + ["x=range(0,1000)"])) == 100_000
