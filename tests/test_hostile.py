"""Reading results and data never runs code: hostile files for every reader.

Results travel (shared sweep folders, reference reports) and data files come from
elsewhere.  A name read from a file resolves only among built-ins and installed
plug-ins (never as an import path); arrays load without pickle; YAML loads without
tags that construct objects; Parquet extension types that would unpickle are not
honoured; the HTML report escapes every field that comes from a file or the command
line.  Each test plants a payload that would leave a marker file if it ran.
"""
import json
import os
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import HTMLPage, run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAYLOAD = "<img src=x onerror=alert(1)>"


class _Marker:
    """Pickles as a call to os.system that creates ``path`` (what a hostile pickle does)."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def _report(folder, *args):
    """``python -m rffbench.report .`` run inside ``folder`` (so that a module planted
    in the folder is importable, as it would be for a user who received it)."""
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-m", "rffbench.report", ".", "--no-pdf", *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def tail_sweep(tmp_path_factory):
    """A sweep whose report draws the empirical-tail figure (it resolves the map's name)."""
    sweep = tmp_path_factory.mktemp("hostile") / "s"
    p = run_cli("-m", "dataset=synthetic", "dataset.n=120", "dataset.d=3",
                "measure.bounds.trials=4", "measure.learning.repeats=1",
                "measure.timing.repeats=3", "measure.learning.exact=false",
                "features=rff_pairs", "D=256,512", f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-2000:]
    assert (sweep / "report" / "bounds_tail.png").exists()  # the figure that resolves names
    return sweep


def _rename_map(folder, old, new):
    """Every records/trials file and config.json of the sweep name map ``new``."""
    for f in (folder / "runs").glob("*/*.csv"):
        df = pd.read_csv(f, keep_default_na=False, dtype=str)
        if "features" in df:
            df.loc[df.features == old, "features"] = new
            df.to_csv(f, index=False)
    for f in (folder / "runs").glob("*/config.json"):  # the config and the overrides
        blob = json.loads(f.read_text().replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1]))
        assert blob["config"]["features"]["name"] == new
        f.write_text(json.dumps(blob))


def test_a_map_name_in_records_is_never_imported(tail_sweep, tmp_path):
    folder = tmp_path / "shared"
    shutil.copytree(tail_sweep, folder, symlinks=True)
    shutil.rmtree(folder / "report")
    marker = tmp_path / "IMPORTED"
    (folder / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nX = 1\n")
    _rename_map(folder, "rff_pairs", "evil:X")
    p = _report(folder)
    assert p.returncode == 0, p.stdout + p.stderr
    assert not marker.exists(), "the report imported a module named in a records file"
    assert (folder / "report" / "bounds_tail.png").exists()
    assert "evil:X" in (folder / "report" / "results.csv").read_text()  # kept as-is


def test_registry_installed_never_follows_an_import_path(tmp_path, monkeypatch):
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import KERNELS

    marker = tmp_path / "IMPORTED"
    (tmp_path / "evil2.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nX = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for reg in (FEATURE_MAPS, KERNELS):
        assert reg.installed("evil2:X") is None
        assert reg.installed("rff" if reg is FEATURE_MAPS else "gaussian") is not None
        assert reg.installed(None) is None
    assert not marker.exists()


def test_every_field_from_a_file_or_the_command_line_is_escaped_in_the_html(tail_sweep,
                                                                              tmp_path):
    folder = tmp_path / f"sweep {PAYLOAD}"  # the folder's own name is shown too
    shutil.copytree(tail_sweep, folder, symlinks=True)
    shutil.rmtree(folder / "report")
    _rename_map(folder, "rff_pairs", PAYLOAD)
    for f in (folder / "runs").glob("*/records.csv"):
        df = pd.read_csv(f, keep_default_na=False, dtype=str)
        df["note"], df["cpu"], df["blas"], df["dataset"] = PAYLOAD, PAYLOAD, PAYLOAD, PAYLOAD
        df.to_csv(f, index=False)
    mr = folder / "multirun.yaml"
    mr.write_text(mr.read_text().replace("- D=256,512", f"- D=256,512\n    - '+tag={PAYLOAD}'"))
    p = _report(folder)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    text = (folder / "report" / "index.html").read_text()
    assert PAYLOAD not in text
    assert text.count("&lt;img src=x onerror=alert(1)&gt;") >= 5  # the fields are shown
    page = HTMLPage.parse(folder / "report" / "index.html")
    assert all(src.startswith("data:image/png;base64,") for src in page.images)
    assert "<script" not in text.lower()


def test_yaml_tags_in_a_sweep_file_are_not_constructed(tail_sweep, tmp_path):
    folder = tmp_path / "s"
    shutil.copytree(tail_sweep, folder, symlinks=True)
    shutil.rmtree(folder / "report")
    marker = tmp_path / "CONSTRUCTED"
    mr = folder / "multirun.yaml"
    mr.write_text(f"evil: !!python/object/apply:os.system ['touch {marker}']\n" + mr.read_text())
    p = _report(folder)
    assert not marker.exists()
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stderr[-1500:]
    assert "multirun.yaml: unreadable" in (folder / "report" / "index.html").read_text()


@pytest.mark.parametrize("fmt", ["npy", "npz"])
def test_a_pickled_data_file_is_refused_without_running_it(tmp_path, fmt):
    marker = tmp_path / "UNPICKLED"
    obj = np.empty((4, 3), dtype=object)
    obj[:] = _Marker(marker)
    path = tmp_path / f"data.{fmt}"
    if fmt == "npy":
        np.save(path, obj, allow_pickle=True)
    else:
        np.savez(path, X=obj, y=np.zeros(4))
    p = run_cli("dataset=file", f"dataset.path={path}", "D=16", f"hydra.run.dir={tmp_path / 'run'}",
                "measure.bounds.enabled=false", "measure.learning.enabled=false")
    assert p.returncode != 0
    assert not marker.exists(), "a data file's pickle was run"
    last = [ln for ln in p.stderr.strip().splitlines() if ln.strip()][-1]
    assert "dataset.path=" in last and "Traceback" not in p.stderr, p.stderr[-1500:]
    assert not list((tmp_path / "run").rglob("records.csv"))


def test_a_parquet_extension_type_that_would_unpickle_is_not_honoured(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    marker = tmp_path / "UNPICKLED"
    # the field metadata pyarrow < 14.0.1 unpickled on read (CVE-2023-47248)
    field = pa.field("x0", pa.binary(), metadata={
        b"ARROW:extension:name": b"arrow.py_extension_type",
        b"ARROW:extension:metadata": pickle.dumps(_Marker(marker))})
    schema = pa.schema([field, pa.field("x1", pa.float64()), pa.field("y", pa.float64())])
    table = pa.table([pa.array([b"a"] * 20), pa.array(np.arange(20.0)), pa.array(np.ones(20))],
                     schema=schema)
    path = tmp_path / "data.parquet"
    pq.write_table(table, path)
    p = run_cli("dataset=file", f"dataset.path={path}", "D=16", f"hydra.run.dir={tmp_path / 'run'}")
    assert not marker.exists(), "a Parquet field's pickle was run"
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr[-1500:]
    assert "x0" in p.stderr.strip().splitlines()[-1]  # names the column it refuses


@pytest.mark.parametrize("content", ["a list", "a frame without the target"])
def test_an_rda_file_of_the_wrong_content_gets_one_line(tmp_path, content):
    rdata = pytest.importorskip("rdata")
    if not hasattr(rdata, "write_rda"):
        pytest.skip("this rdata cannot write .rda files")
    folder = tmp_path / "mlbench"
    folder.mkdir()
    obj = ["not", "a", "data", "frame"] if content == "a list" else \
        pd.DataFrame({"V1": [1.0, 2.0], "V2": [3.0, 4.0]})
    rdata.write_rda(folder / "Shuttle.rda", {"Shuttle": obj})
    p = run_cli("dataset=shuttle", f"dataset.path={folder}", "D=16",
                f"hydra.run.dir={tmp_path / 'run'}")
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr[-1500:]
    assert "Shuttle.rda" in p.stderr.strip().splitlines()[-1]
