"""Data past memory: .npy and Parquet files streamed through a run.
The lazy matrices against the materialised rows, the split, the statistics, ridge on
streamed rows against the same rows in memory, a run that never loads the data whole,
bad input, and files that change or fail while a run streams them."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from rffbench import stream
from rffbench.config import DatasetConfig
from rffbench.datasets import load_dataset
from rffbench.errors import DataError, RffbenchError
from rffbench.experiment import main as run_main
from rffbench.experiment import run
from rffbench.features import FEATURE_MAPS
from rffbench.models import FeatureRidge, encode_targets
from rffbench.results import RECORDS_FILE
from tests.helpers import ROOT, compose_config, run_cli

N, D_IN = 150_000, 5  # more than two split blocks


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(7)
    X = rng.uniform(-2, 3, size=(N, D_IN)) * np.array([1, 10, 0.1, 1, 5])
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1] + 0.05 * rng.standard_normal(N)
    root = tmp_path_factory.mktemp("stream")
    npy = root / "data.npy"
    np.save(npy, np.column_stack([y, X]))  # target first: dataset.target=0
    pq = root / "data.parquet"
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(D_IN)])
    df.insert(2, "target", y)
    df.to_parquet(pq, row_group_size=40_000)
    return dict(X=X, y=y, npy=str(npy), parquet=str(pq), root=root)


def _load(path, **kw):
    target = kw.pop("target", "0" if path.endswith(".npy") else "target")
    return load_dataset(DatasetConfig(name="file", path=path, target=target, **kw), seed=3)


def test_npy_and_parquet_stream_the_same_rows(files):
    a, b = _load(files["npy"]), _load(files["parquet"])
    assert a.streamed and b.streamed and a.task == "regression"
    assert a.X_train.shape == b.X_train.shape and a.X_train.shape[1] == D_IN
    np.testing.assert_array_equal(a.X_train[:], b.X_train[:])
    np.testing.assert_array_equal(a.X_test[:], b.X_test[:])
    np.testing.assert_array_equal(a.y_train, b.y_train)


def test_split_and_standardisation_match_the_rows_in_memory(files):
    data = _load(files["npy"])
    split = data.X_train.split
    test = np.concatenate([split.masks(c)["test"] for c in range(len(split.blocks))])
    Xtr_raw, Xte_raw = files["X"][~test], files["X"][test]
    np.testing.assert_array_equal(data.y_train, files["y"][~test])
    mu, sd = Xtr_raw.mean(axis=0), Xtr_raw.std(axis=0)
    np.testing.assert_allclose(data.X_train[:], (Xtr_raw - mu) / sd, rtol=0, atol=1e-12)
    np.testing.assert_allclose(data.X_test[:], (Xte_raw - mu) / sd, rtol=0, atol=1e-12)
    lo, hi = data.col_range
    np.testing.assert_allclose(lo, ((Xtr_raw - mu) / sd).min(axis=0), atol=1e-12)
    np.testing.assert_allclose(hi, ((Xtr_raw - mu) / sd).max(axis=0), atol=1e-12)
    # each row is a test row with probability 0.25: n_test within 5 binomial SE
    se = np.sqrt(N * 0.25 * 0.75)
    assert abs(test.sum() - 0.25 * N) < 5 * se
    assert not np.array_equal(test, np.concatenate(
        [stream.Split(N, 4, 0.25).masks(c)["test"] for c in range(len(split.blocks))]))


def test_lazy_indexing_equals_the_materialised_array(files):
    X = _load(files["npy"]).X_train
    full = X[:]
    rng = np.random.default_rng(0)
    idx = rng.choice(len(X), 500, replace=False)  # unsorted, scattered
    np.testing.assert_array_equal(X[idx], full[idx])
    np.testing.assert_array_equal(X[70_000:70_100], full[70_000:70_100])
    np.testing.assert_array_equal(X[-3:], full[-3:])
    np.testing.assert_array_equal(X[5], full[5])
    np.testing.assert_array_equal(X[::1000], full[::1000])
    view = X.subset(idx)
    assert view.shape == (500, D_IN)
    np.testing.assert_array_equal(view[10:20], full[idx[10:20]])
    np.testing.assert_array_equal(view.subset([3, 1])[:], full[idx[[3, 1]]])
    with pytest.raises(IndexError):
        X[[len(X)]]


def test_ridge_on_streamed_rows_equals_ridge_in_memory(files):
    data = _load(files["npy"])
    Xs = data.X_train
    Xm = Xs[:]
    Y = encode_targets(data.y_train, "regression", 0)
    fmap = FEATURE_MAPS["rff"](n_components=64, lengthscale=2.0, random_state=0).fit(Xm[:100])
    a = FeatureRidge(1e-3, chunk_rows=10_000).fit(fmap, Xs, Y)
    b = FeatureRidge(1e-3, chunk_rows=10_000).fit(fmap, Xm, Y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict(data.X_test), b.predict(data.X_test[:]))


def test_float32_rows(files):
    data = load_dataset(DatasetConfig(name="file", path=files["npy"], target="0"), seed=3,
                        dtype="float32")
    assert data.X_train[:10].dtype == np.float32 and data.X_train.dtype == np.float32


@pytest.mark.parametrize("lam", ["auto", "1e-3"])
def test_a_run_never_loads_the_data_whole(files, monkeypatch, lam):
    """With np.asarray of a streamed matrix limited to 64 KiB, the whole default run
    (approximation, bounds, learning with its validation split, timing) still works:
    every step reads rows chunk by chunk or samples."""
    monkeypatch.setattr(stream, "MATERIALIZE_MAX_BYTES", 1 << 16)
    cfg = compose_config(["dataset=file", f"dataset.path={files['parquet']}",
                          "dataset.target=target", "D=64", f"model.lam={lam}",
                          "measure.bounds.trials=8", "measure.learning.repeats=1"])
    df, _ = run(cfg)
    lr = df[df.measurement == "learning"].set_index(["method", "metric"]).value
    assert 0 < lr["ridge", "test_rel_rmse"] < 0.5
    assert np.isnan(lr["exact_krr", "test_rmse"])  # n_train > exact_max_n: skipped
    tm = df[df.measurement == "timing"].set_index("metric")
    assert np.isnan(tm.value["map_transform_time_s"])
    assert "streamed" in tm.note["map_transform_time_s"]
    assert df[df.measurement == "approximation"].value.notna().any()


def test_materialising_a_large_stream_is_a_clear_error(files, monkeypatch):
    monkeypatch.setattr(stream, "MATERIALIZE_MAX_BYTES", 1 << 10)
    X = _load(files["npy"]).X_train
    with pytest.raises(RffbenchError, match=r"would load all \d+ x 5 streamed values"):
        np.asarray(X)


def test_n_max_keeps_rows_with_its_probability(files):
    data = _load(files["npy"], n_max=30_000)
    n = data.X_train.shape[0] + data.X_test.shape[0]
    p = 30_000 / N
    assert abs(n - 30_000) < 5 * np.sqrt(N * p * (1 - p))
    assert any("n_max=30000" in note for note in data.notes)


def test_classification_targets(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3000, 3))
    y = (X[:, 0] > 0).astype(float) * 7 + 3  # labels 3 and 10
    np.save(tmp_path / "c.npy", np.column_stack([X, y]))
    data = load_dataset(DatasetConfig(name="file", path=str(tmp_path / "c.npy")), seed=0)
    assert data.task == "classification" and set(np.unique(data.y_train)) == {0, 1}


@pytest.mark.parametrize("make,match", [
    (lambda p: np.save(p / "a.npy", np.ones(10)),
     "a .npy dataset is one 2-d array of feature columns and a target column, got shape (10,)"),
    (lambda p: np.save(p / "a.npy", np.where(np.arange(40).reshape(10, 4) == 22, np.nan, 1.0)),
     "NaN/inf value(s) in the features (first at row 5, column 2)"),
    (lambda p: np.save(p / "a.npy", np.ones((2, 3))), "2 row(s); a run needs at least 3"),
    (lambda p: (p / "a.npy").write_text("not an array"), "cannot read as npy"),
])
def test_bad_files_one_line(tmp_path, capsys, make, match):
    make(tmp_path)
    cfg = compose_config(["dataset=file", f"dataset.path={tmp_path / 'a.npy'}"])
    out = tmp_path / "out"
    assert run_main(cfg, out) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and "\n" not in err, err
    assert not (out / RECORDS_FILE).exists()


def test_unknown_target_column(files):
    with pytest.raises(DataError, match="dataset.target='nope' is not a column of"):
        _load(files["parquet"], target="nope")


def test_parquet_without_pyarrow_names_the_extra(files, monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    cfg = compose_config(["dataset=file", f"dataset.path={files['parquet']}"])
    assert run_main(cfg, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert "pip install 'rffbench[parquet]'" in err and "\n" not in err


@pytest.mark.slow
def test_reading_a_file_through_keeps_memory_bounded(tmp_path):
    """A 256 MB .npy read whole, block by block (each standardised block then dropped),
    in a fresh process: its peak RSS grows by far less than the file (the file is read
    with positioned reads; a mapped file's pages would stay resident as they are read)."""

    path = tmp_path / "big.npy"
    a = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(2_000_000, 16))
    for s in range(0, a.shape[0], 250_000):
        a[s:s + 250_000] = np.random.default_rng(s).standard_normal((250_000, 16))
    a.flush()
    del a
    code = f"""
from rffbench.config import DatasetConfig
from rffbench.datasets import load_dataset
# the peak RSS of this process image (VmHWM; ru_maxrss would carry the parent's over fork)
rss = lambda: float(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024
before = rss()
data = load_dataset(DatasetConfig(name="file", path={str(path)!r}), seed=0)
X, total = data.X_train, 0.0
for s in range(0, X.shape[0], 65536):
    total += float(X[s:s + 65536].sum())
print(before, rss(), X.shape[0])
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    before, after, n = p.stdout.split()
    assert int(n) > 1_400_000
    # the file is 256 MB; the loading pass and the read keep blocks of 8 MB and the
    # targets (16 MB)
    assert float(after) - float(before) < 80, (before, after)


def test_ordered_split_and_max_scale_streamed_as_in_memory(files):
    """split=ordered: the first rows train, the last test_size of them test, across split
    blocks; scale=max divides by the training rows' largest |value|."""
    data = _load(files["npy"], split="ordered", scale="max", test_size=0.2, n_max=100_000)
    X = files["X"]
    peak = np.abs(X[:80_000]).max()
    assert data.X_train.shape == (80_000, D_IN) and data.X_test.shape == (20_000, D_IN)
    np.testing.assert_allclose(data.X_train[:], X[:80_000] / peak, rtol=1e-15)
    np.testing.assert_allclose(data.X_test[:], X[80_000:100_000] / peak, rtol=1e-15)
    np.testing.assert_array_equal(data.y_train, files["y"][:80_000])
    assert any("rows 1..80000 train" in n for n in data.notes)


def test_xmax_scale_streamed_as_in_memory(tmp_path, rng):
    """scale=xmax divides by the training rows' largest value (quffka's x / x.max()), not
    the largest |value|, streamed or in memory; with no positive value it is refused in one
    line naming the key."""
    X = rng.normal(size=(400, 3)) - 1.0  # the most negative value is the larger in size
    y = rng.normal(size=400)
    np.save(tmp_path / "a.npy", np.column_stack([y, X]))
    np.savez(tmp_path / "a.npz", X=X, y=y)
    top = X[:300].max()
    assert 0 < top < np.abs(X[:300]).max()
    for f in ("a.npy", "a.npz"):
        d = load_dataset(DatasetConfig(name="file", path=str(tmp_path / f), split="ordered",
                                       scale="xmax", test_size=0.25,
                                       target="0" if f.endswith("npy") else None), seed=0)
        np.testing.assert_allclose(d.X_test[:], X[300:] / top, rtol=1e-15)
        np.testing.assert_allclose(d.X_train[:], X[:300] / top, rtol=1e-15)
    np.save(tmp_path / "neg.npy", np.column_stack([y, -np.abs(X)]))
    with pytest.raises(DataError, match=r"dataset.scale=xmax divides by the training rows' "
                                        r"largest value, -.* here; it needs a positive one"):
        _load(str(tmp_path / "neg.npy"), scale="xmax")


# --------------------------------------------------------------------------
# files that change or fail while a run streams them
# --------------------------------------------------------------------------

def _change(path, kind):
    """Truncate, rewrite in place (same size, new contents and time) or replace (a new
    file renamed over it, same contents)."""
    if kind == "truncated":
        os.truncate(path, os.path.getsize(path) // 2)
    elif kind == "rewritten":
        st = os.stat(path)
        with open(path, "r+b") as f:
            f.seek(st.st_size - 64)
            f.write(b"\0" * 64)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    else:
        shutil.copy(path, str(path) + ".new")
        os.replace(str(path) + ".new", path)


@pytest.mark.parametrize("kind", ["truncated", "rewritten", "replaced"])
@pytest.mark.parametrize("fmt", ["npy", "parquet"])
def test_a_file_changed_while_streamed_stops_the_run(files, tmp_path, monkeypatch, capsys,
                                                      fmt, kind):
    """The file changes after the loading pass, before the ridge's pass: one line naming
    the file, the change and the rows being read; exit 2; no records."""
    path = tmp_path / f"data.{fmt}"
    shutil.copy(files[fmt], path)
    scan = stream.scan

    def scan_then_change(*a, **kw):
        out = scan(*a, **kw)
        _change(path, kind)
        return out

    monkeypatch.setattr(stream, "scan", scan_then_change)
    target = "0" if fmt == "npy" else "target"
    cfg = compose_config(["dataset=file", f"dataset.path={path}", f"dataset.target={target}",
                          "D=32", "measure.bounds.trials=2"])
    out = tmp_path / "out"
    assert run_main(cfg, out) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"dataset.path='{path}'" in err, err
    assert "the file changed while the run streamed it" in err and "at rows " in err, err
    assert {"truncated": "size ", "rewritten": "rewritten",
            "replaced": "replaced by another file"}[kind] in err, err
    assert not (out / RECORDS_FILE).exists()


@pytest.mark.slow
def test_files_damaged_before_the_run_through_run_py(tmp_path):
    """What users type: a .npy cut short (its header announces more rows than it holds),
    a Parquet file with a repeated column name, one with missing values, strings among
    the features: one line each."""
    a = np.random.default_rng(0).standard_normal((500, 4))
    np.save(tmp_path / "cut.npy", a)
    os.truncate(tmp_path / "cut.npy", os.path.getsize(tmp_path / "cut.npy") - 800)
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    cols = [pa.array(a[:, j]) for j in range(3)]
    pq.write_table(pa.table(cols, names=["x", "x", "y"]), tmp_path / "twice.parquet")
    pq.write_table(pa.table({"x": pa.array([1, None] * 250, type=pa.int64()),
                             "y": pa.array(a[:, 0])}), tmp_path / "nulls.parquet",
                   row_group_size=200)
    pq.write_table(pa.table({"x": pa.array(a[:, 0]), "s": pa.array(["a"] * 500),
                             "y": pa.array(a[:, 1])}), tmp_path / "strings.parquet")
    np.save(tmp_path / "strings.npy", np.array([["1", "2", "x"]] * 50))
    cases = {"strings.parquet": "non-numeric feature column(s) s; encode or drop them",
             "strings.npy": "the array is not real numbers (dtype <U1)",
             "cut.npy": "the file is truncated: its header announces 500 x 4 values",
             "twice.parquet": "repeated column name(s) 'x'; give every column its own name",
             "nulls.parquet": "missing (null) values in column(s) x of row group 0 (rows 0-200)"}
    for name, match in cases.items():  # in this process: the command's exit and stderr
        p = run_cli("dataset=file", f"dataset.path={tmp_path / name}",
                    f"hydra.run.dir={tmp_path / ('out-' + name)}")
        err = p.stderr.strip().splitlines()
        assert p.returncode == 2 and match in err[-1] and len(err) == 1, (name, p.stderr)
        assert not (tmp_path / ("out-" + name) / RECORDS_FILE).exists()


def test_a_row_group_of_another_schema_is_named(files, monkeypatch):
    """Every row group is checked against the file's schema (a single file cannot hold
    two through pyarrow's writer; the check guards what a reader may still hand back)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    read = pq.ParquetFile.read_row_group

    def other_schema(self, g, **kw):
        table = read(self, g, **kw)
        return table.cast(pa.schema([(f.name, pa.float32()) for f in table.schema])) \
            if g == 1 else table

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", other_schema)
    with pytest.raises(DataError, match=r"row group 1 \(rows 40000-80000\) has the schema "
                                        r"x0: float, .* the file x0: double"):
        _load(files["parquet"])


@pytest.fixture
def eio_mount(tmp_path):
    """A FUSE stub (tests/fixtures/eio_fuse.py, the kernel protocol spoken directly)
    serving one file whose reads fail with EIO as configured; skipped where mounting is
    not allowed."""
    procs = []

    def mount(source, fail_from, fail_after=None):
        if not os.path.exists("/dev/fuse"):
            pytest.skip("no /dev/fuse: the EIO test needs a FUSE mount")
        mnt = tmp_path / f"mnt{len(procs)}"
        mnt.mkdir()
        args = [sys.executable, str(ROOT / "tests/fixtures/eio_fuse.py"), str(mnt),
                str(source), str(fail_from)] + ([str(fail_after)] if fail_after else [])
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        procs.append((proc, mnt))
        line = proc.stdout.readline()
        if "ready" not in line:
            proc.wait(timeout=10)
            pytest.skip(f"cannot mount a FUSE file system here ({line.strip() or 'no reply'})")
        return mnt / "data.npy"

    yield mount
    for proc, mnt in procs:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.parametrize("when", ["during the loading pass", "after the loading pass"])
@pytest.mark.slow
def test_a_file_that_becomes_unreadable_is_one_line(tmp_path, eio_mount, when):
    """EIO from a failing file system (a FUSE stub): in the second block of the loading
    pass, or on every read once the first pass is over.  One line naming the file and
    the rows, exit 2, no records."""
    src = tmp_path / "src.npy"
    np.save(src, np.random.default_rng(0).standard_normal((100_000, 5)))  # 4 MB, 2 blocks
    size = os.path.getsize(src)
    path = eio_mount(src, 3_500_000) if when.startswith("during") \
        else eio_mount(src, size + 1, fail_after=size)
    out = tmp_path / "out"
    p = run_cli("dataset=file", f"dataset.path={path}", "dataset.target=0", "D=32",
                f"hydra.run.dir={out}")
    err = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(err) == 1, p.stderr
    assert f"dataset.path='{path}': reading rows " in err[0], err
    assert "Input/output error; nothing recorded" in err[0], err
    if when.startswith("during"):
        assert "rows 65536-100000" in err[0]
    assert not (out / RECORDS_FILE).exists()
