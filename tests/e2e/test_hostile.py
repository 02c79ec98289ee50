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
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from rffbench.report.render import SCRIPT_FILE
from tests.helpers import FIXTURES, HTMLPage, run_cli, run_module
from tests.helpers import ROOT as ROOT_PATH

ROOT = str(ROOT_PATH)
PAYLOAD = "<img src=x onerror=alert(1)>"


class _Marker:
    """Pickles as a call to os.system that creates ``path`` (what a hostile pickle does)."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def _report(folder, *args):
    """``python -m rffbench.report .`` run inside ``folder`` (the folder first on the import
    path, so that a module planted in it is importable, as it would be for a user who
    received it)."""
    return run_module("rffbench.report", ".", "--no-pdf", *args, cwd=folder)


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
    """Every records/trials file and config.json of the sweep name map ``new``; the runs'
    manifests written again, as a crafted folder would carry them (a digest catches
    damage, not a forger)."""
    from rffbench.store import read_manifest, write_manifest

    for f in (folder / "runs").glob("*/*.csv"):
        df = pd.read_csv(f, keep_default_na=False, dtype=str)
        if "features" in df:
            df.loc[df.features == old, "features"] = new
            df.to_csv(f, index=False)
    for f in (folder / "runs").glob("*/config.json"):  # the config and the overrides
        blob = json.loads(f.read_text().replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1]))
        assert blob["config"]["features"]["name"] == new
        f.write_text(json.dumps(blob))
    for d in (folder / "runs").iterdir():
        if (d / "manifest.json").exists():
            write_manifest(d, d.name, read_manifest(d)["files"])


# --------------------------------------------------------------------------
# small files that hang or flood a reader: every reader is bounded
# --------------------------------------------------------------------------
def _copy(tail_sweep, tmp_path):
    folder = tmp_path / "s"
    shutil.copytree(tail_sweep, folder, symlinks=True)
    shutil.rmtree(folder / "report")
    return folder


def _report_lines(folder, within=120):
    """The report of ``folder``: (exit code, stdout, stderr), failing the test (not hanging
    the suite) past ``within`` seconds."""
    p = run_module("rffbench.report", ".", "--no-pdf", cwd=folder, timeout=within)
    assert "Traceback" not in p.stderr, p.stderr[-2000:]
    return p


def _their_shape(tmp_path, payload):
    """A folder laid out as Büchel et al.'s resources/hardware with ``payload`` as
    letter/fp_err.pkl (fp_acc.pkl: their real file)."""
    folder = tmp_path / "hw"
    (folder / "letter").mkdir(parents=True)
    (folder / "letter" / "fp_err.pkl").write_bytes(payload)
    real = FIXTURES / "buechel2024" / "letter" / "fp_acc.pkl"
    (folder / "letter" / "fp_acc.pkl").write_bytes(real.read_bytes())
    return folder


@pytest.mark.slow
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
    # the one script is the page's own (its tables' sorting): no field became one
    assert text.lower().count("<script") == 1
    assert f"<script>{SCRIPT_FILE.read_text()}</script>" in text


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
@pytest.mark.slow
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
@pytest.mark.slow
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


def test_a_pickle_of_shared_references_is_refused_at_once():
    """684 bytes that reference one list from two places 60 levels deep (2^60 paths): the
    safe unpickler refuses it in milliseconds, as it does a list that contains itself and
    containers nested past any numpy pickle."""
    from rffbench.published.safe import UnsafePickleError, load_arrays

    a = []
    for _ in range(60):
        a = [a, a]
    bomb = pickle.dumps(a, protocol=2)
    assert len(bomb) < 1000
    with pytest.raises(UnsafePickleError, match="expands to more than 1,000,000 objects"):
        load_arrays(bomb)
    deep = []
    for _ in range(150):
        deep = [deep]
    with pytest.raises(UnsafePickleError, match="nests containers more than 100 deep"):
        load_arrays(pickle.dumps(deep))
    loop = []
    loop.append(loop)
    with pytest.raises(UnsafePickleError, match="contains itself"):
        load_arrays(pickle.dumps(loop))
    x = np.arange(4.0)
    got = load_arrays(pickle.dumps({"a": [x, x], "b": (x,)}))  # shared arrays are fine
    assert np.array_equal(got["a"][1], x)


def test_the_extractor_refuses_a_hostile_pickle_in_one_line(tmp_path):
    a = []
    for _ in range(60):
        a = [a, a]
    (tmp_path / "bomb").write_bytes(pickle.dumps(a, protocol=2))
    (tmp_path / "other").write_bytes(pickle.dumps({"MNIST2": {}}))
    (tmp_path / "evil").write_bytes(pickle.dumps(_Marker(tmp_path / "RAN")))
    for name, pattern in (("bomb", "refused: the pickle expands"),
                          ("other", "unknown dataset 'MNIST2'"),
                          ("evil", "refused: the pickle names"),
                          ("missing", "cannot read the file")):
        p = run_module("rffbench.published.quffka", str(tmp_path / name), "--commit",
                       "abc1234", timeout=120)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and pattern in lines[0], p.stderr
    assert not (tmp_path / "RAN").exists()


def test_a_yaml_alias_bomb_in_multirun_yaml_is_damaged_not_a_hang(tail_sweep, tmp_path):
    folder = _copy(tail_sweep, tmp_path)
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    bomb = "\n".join(lines) + "\n"
    assert len(bomb) < 1000  # 10^10 nodes once expanded
    mr = folder / "multirun.yaml"
    mr.write_text(bomb + mr.read_text())
    p = _report_lines(folder)
    assert p.returncode in (0, 1)
    page = (folder / "report" / "index.html").read_text()
    assert "YAML that expands to more than 200,000 nodes" in page


def test_an_edited_multirun_yaml_asking_for_millions_of_jobs_does_not_flood(tail_sweep,
                                                                              tmp_path):
    """A 200-byte edit (a range of 10^12 values) is counted, not listed; 40,000 jobs are
    listed in jobs.csv, the page and the terminal show the first 50 problems."""
    for n, listed in ((10**12, False), (20000, True)):
        folder = _copy(tail_sweep, tmp_path / str(n))
        mr = folder / "multirun.yaml"
        mr.write_text(mr.read_text().replace("- D=256,512",
                                             f"- D=256,512\n    - seed=range(0,{n})"))
        p = _report_lines(folder)
        # listed: its jobs are missing (exit 1); counted only: the runs found are complete
        assert p.returncode == (1 if listed else 0), p.stderr[-2000:]
        assert len(p.stdout) + len(p.stderr) < 20000
        report = folder / "report"
        assert (report / "index.html").stat().st_size < 2_000_000
        jobs = pd.read_csv(report / "jobs.csv")
        if listed:
            assert (jobs.kind == "job").sum() == 2 * n
            assert "... and " in p.stderr and "jobs.csv lists every job" in p.stderr
        else:
            assert (jobs.kind == "job").sum() == 0
            assert "more than a report lists" in (report / "index.html").read_text()


@pytest.mark.parametrize("damage", ["deep", "bytes", "shape", "huge"])
def test_a_damaged_ticket_or_config_is_one_line_and_the_run_is_found(tail_sweep, tmp_path,
                                                                     damage):
    """JSON nested 200,000 deep, undecodable bytes, a JSON value of another shape, a 2 MB
    file: as a job's ticket, the job is found by its run's overrides (complete, not 'never
    started'); as a run's config.json, the run is listed as damaged naming the file."""
    body = {"deep": "[" * 200000 + "]" * 200000, "bytes": "\udcff", "shape": "[1, 2, 3]",
            "huge": json.dumps({"overrides": ["x" * 2_000_000]})}[damage]
    folder = _copy(tail_sweep, tmp_path)
    ticket = sorted((folder / ".jobs").glob("*.json"))[0]
    ticket.write_bytes(body.encode("utf-8", "surrogateescape"))
    p = _report_lines(folder)
    assert p.returncode == 0, p.stdout + p.stderr  # every job still complete
    jobs = pd.read_csv(folder / "report" / "jobs.csv", keep_default_na=False)
    found = jobs[(jobs.kind == "job") & jobs.reason.str.contains("found by its overrides")]
    assert len(found) == 1 and found.status.iloc[0] == "complete"
    cfg = sorted((folder / "runs").glob("*/config.json"))[0]
    cfg.write_bytes(body.encode("utf-8", "surrogateescape"))
    p = _report_lines(folder)
    assert p.returncode == 1
    lines = [ln for ln in p.stderr.splitlines() if "damaged: run" in ln]
    assert len(lines) == 1 and f"{cfg.parent.name}/config.json" in lines[0], p.stderr


@pytest.mark.parametrize("name", ["manifest.json", "records.csv", "config.json", "ticket"])
def test_a_fifo_where_a_sweep_file_belongs_is_one_line_not_a_hang(tail_sweep, tmp_path, name):
    """A named pipe (a reader's open waits for a writer that never comes) in place of a
    run's manifest, records or config, or a job's ticket: the report (in a process, killed
    past 120 s rather than hanging the suite) names the file and says what it is; a FIFO
    manifest is set aside by the sweep's resume, which computes the run again."""
    folder = _copy(tail_sweep, tmp_path)
    run = sorted(p for p in (folder / "runs").iterdir() if p.is_dir())[0]
    path = sorted((folder / ".jobs").glob("*.json"))[0] if name == "ticket" else run / name
    path.unlink()
    os.mkfifo(path)
    p = _report_lines(folder)
    if name == "ticket":  # the job is found by its run's overrides
        assert p.returncode == 0, p.stdout + p.stderr
        return
    assert p.returncode == 1, p.stdout + p.stderr
    lines = [ln for ln in p.stderr.splitlines() if "report: damaged:" in ln]
    assert len(lines) == 1 and re.search(rf"runs/{run.name}(/|: ){re.escape(name)}: a FIFO "
                                         r"\(named pipe\), not a regular file", lines[0]), \
        p.stderr
    if name != "manifest.json":
        return
    again = run_cli("-m", "dataset=synthetic", "dataset.n=120", "dataset.d=3",
                    "measure.bounds.trials=4", "measure.learning.repeats=1",
                    "measure.timing.repeats=3", "measure.learning.exact=false",
                    "features=rff_pairs", "D=256,512", f"hydra.sweep.dir={folder}")
    assert again.returncode == 0, again.stderr[-2000:]
    warn = [ln for ln in again.stderr.splitlines() if ln.startswith("rffbench: warning:")]
    assert len(warn) == 1 and "a FIFO (named pipe)" in warn[0] and "set aside" in warn[0]
    assert again.stdout.count("skipped (resume)") == 1
    assert (run / name).is_file() and "complete: 2 complete" in again.stdout


def test_a_claim_file_of_any_size_or_content_is_read_bounded(tmp_path):
    from rffbench.store import holder_alive, read_claim

    c = tmp_path / "claim"
    for body in (b"{" * 100000, b"\xff\xfe", b"[1]", b"{}" + b" " * 5_000_000):
        c.write_bytes(body)
        holder, mtime = read_claim(c)
        assert holder == {} and mtime is not None
    c.unlink()
    os.mkfifo(c)  # no claim at all: stale at once, never waited on
    holder, mtime = read_claim(c)
    assert holder == {} and mtime == 0.0 and not holder_alive(holder, mtime)


def test_a_table_past_its_size_limit_is_damaged_not_read(tail_sweep, tmp_path, monkeypatch):
    """records.csv and the extra tables are read only up to MAX_TABLE_BYTES (256 MB; here
    lowered so that a run's own files are past it): the run is listed as damaged, naming
    the file, and nothing is read whole."""
    from rffbench import readers
    from rffbench.report import make_report

    folder = _copy(tail_sweep, tmp_path)
    monkeypatch.setattr(readers, "MAX_TABLE_BYTES", 1000)
    rep = make_report(folder, pdf=False)
    assert not rep.complete
    damaged = [p for p in rep.problems if p[0] == "damaged"]
    assert damaged and all("records.csv" in p[2] and "larger than 1,000 bytes" in p[2]
                           for p in damaged), rep.problems


def test_hostile_dill_pickles_are_refused_in_one_line_and_nothing_runs(tmp_path, monkeypatch):
    """The reader of Büchel et al.'s dill files (rffbench.published.safe.load_numbers) and
    its extractor: a pickle that calls os.system, a dill lambda that the pickle itself
    calls (REDUCE), a lambda left in the numbers, a type outside the stand-ins, a cut
    file, a file past the size limit and a shared-reference bomb are each refused with
    one line (exit 2 from the command) and no marker file appears."""
    import dill

    from rffbench.published.safe import UnsafePickleError, load_numbers

    marker = tmp_path / "RAN"
    monkeypatch.setenv("RFFBENCH_TEST_MARKER", str(marker))
    fn = dill.dumps(lambda: open(os.environ["RFFBENCH_TEST_MARKER"], "w"))
    assert fn.endswith(b".")
    real = (FIXTURES / "buechel2024" / "letter" / "fp_err.pkl")
    a = []
    for _ in range(60):
        a = [a, a]
    cases = {
        "system": (pickle.dumps(_Marker(marker)), "refused: the pickle names posix.system"),
        "called lambda": (fn[:-1] + b")R.", "refused: not a readable pickle of numbers "
                                           "(TypeError"),
        "lambda left": (dill.dumps({"rff": lambda: 1}), "holds a _Inert"),
        "type": (b"\x80\x02cdill._dill\n_load_type\nX\x0c\x00\x00\x00FunctionType\x85R.",
                 "refused: dill._load_type('FunctionType')"),
        "cut": (real.read_bytes()[:-40], "refused: not a readable pickle of numbers"),
        "bomb": (pickle.dumps(a, protocol=2), "expands to more than 1,000,000 objects"),
    }
    for name, (payload, pattern) in cases.items():
        with pytest.raises(UnsafePickleError, match=re.escape(pattern)):
            load_numbers(payload)
        folder = _their_shape(tmp_path / name.replace(" ", "_"), payload)
        p = run_module("rffbench.published.buechel", str(folder), "--commit", "abc1234",
                       timeout=120, env=dict(RFFBENCH_TEST_MARKER=str(marker)))
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and pattern in lines[0], (name, p.stderr)
        assert "fp_err.pkl" in lines[0] and p.stdout == ""
    with pytest.raises(UnsafePickleError, match="refused: larger than 1,000 bytes"):
        load_numbers(real.read_bytes(), limit=1000)
    assert not marker.exists()
