"""Shared fixtures (small fixed-seed data, dtypes, the thread limits restored after each test)
and the rule that a BLAS error message anywhere (the test's own output or a subprocess's)
fails the test.  Helpers are in tests/helpers.py."""
import importlib
import os
import subprocess
import sys

# Bytecode is cached (Python's default) even where PYTHONDONTWRITEBYTECODE=1, as container
# images often set: the suite starts hundreds of Python processes (its workers, run.py and
# the launchers' jobs), and without the cache each one compiles rffbench from source
# (~0.5 s) and each worker rewrites every test module's asserts afresh.  The caches are
# __pycache__ folders, ignored by git; set before rffbench is imported and inherited by
# every process the suite starts.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

import rffbench  # noqa: E402, F401  (thread-pool env defaults before numpy loads)

# isort: split
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tests.helpers import PLUGIN_DIR, blas_errors  # noqa: E402

#: pytester: the tests of the suite's own rules (a BLAS message fails a test) run a test file
pytest_plugins = ["pytester"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test whose captured output holds a BLAS error message fails, whatever it asserted."""
    outcome = yield
    report = outcome.get_result()
    found = blas_errors(*(text for name, text in report.sections
                          if name.startswith("Captured") and name.endswith(call.when)))
    if found and report.outcome != "failed":
        report.outcome = "failed"
        report.longrepr = (f"BLAS refused a call during this test ({len(found)} message(s), "
                           f"e.g. {found[0]!r}): its output was left unwritten")


#: session fixtures shared by tests of several modules: their tests run in one worker
ONCE_PER_SESSION = {"default_runs_once"}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups off the items
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``--dist loadgroup``): the tests that share a module-scoped
    fixture (a sweep made once for its module's tests) run in one worker, so the fixture is
    made once; those of the example plug-in in one worker for all its modules (its install
    is per worker), and so those of each fixture made once per session for tests of
    several modules (:data:`ONCE_PER_SESSION`).  The other tests go to whichever worker
    is free."""
    for item in items:
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if "plugin" in defs:
            item.add_marker(pytest.mark.xdist_group("plugin"))
        elif shared := ONCE_PER_SESSION & set(defs):
            item.add_marker(pytest.mark.xdist_group(min(shared)))
        elif any(d.scope == "module" for fds in defs.values() for d in fds):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


@pytest.fixture(autouse=True, scope="session")
def _blas_errors_in_subprocesses():
    """The same for the output a test captures from a subprocess (subprocess.run,
    check_output, Popen.communicate)."""
    communicate = subprocess.Popen.communicate

    def checked(self, *args, **kwargs):
        out, err = communicate(self, *args, **kwargs)
        found = blas_errors(out, err)
        if found:
            pytest.fail(f"BLAS refused a call in {self.args!r} ({len(found)} message(s), e.g. "
                        f"{found[0]!r}): its output was left unwritten", pytrace=False)
        return out, err

    subprocess.Popen.communicate = checked
    yield
    subprocess.Popen.communicate = communicate


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(params=[np.float64, np.float32], ids=["float64", "float32"])
def dtype(request):
    return request.param


def _test_threads():
    """The numba and BLAS threads a test starts with: all cores, or under pytest-xdist the
    worker's share of them (two workers on 2 cores: one thread each, not two pools of two
    spinning on the same cores).  numba's pool keeps its size: a test may still ask for
    more (the threads check, ``threads=`` of a run)."""
    import os

    import numba

    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return max(1, numba.config.NUMBA_NUM_THREADS // workers)


@pytest.fixture(autouse=True)
def _restore_thread_limits():
    """A run sets global numba/BLAS thread counts; give the next test its share again."""
    import numba
    from threadpoolctl import threadpool_limits

    n = _test_threads()
    numba.set_num_threads(n)
    threadpool_limits(limits=n)
    yield
    numba.set_num_threads(n)
    threadpool_limits(limits=n)


@pytest.fixture(scope="session")
def default_runs_once():
    """The default run once cold and once warm, each in its own process
    (rffbench.bench.default_runs(1), ~25 s): shared by the startup benchmark's command and
    the README's samples, which read the same two runs."""
    from rffbench.bench import default_runs

    return default_runs(1)


@pytest.fixture(scope="session")
def _plugin_site(tmp_path_factory):
    """The example plug-in installed by pip (``--target``: into a folder of this session,
    not the environment, so that tests running beside this one in other processes never
    see it): the folder, for the import path."""
    site = tmp_path_factory.mktemp("plugin-site")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--target", str(site), str(PLUGIN_DIR)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return site


@pytest.fixture(scope="module")
def plugin(_plugin_site):
    """The example plug-in, installed (its entry points found by the registries) for this
    module's tests, then gone again."""
    import rffbench.config

    sys.path.insert(0, str(_plugin_site))
    importlib.invalidate_caches()
    rffbench.config.register_configs()  # its config-group options, as run.py does
    yield importlib.import_module("rffbench_example_plugin")
    sys.path.remove(str(_plugin_site))
    for name in [m for m in sys.modules if m.split(".")[0] == "rffbench_example_plugin"]:
        del sys.modules[name]
    from rffbench.registry import REGISTRIES

    for reg in REGISTRIES.values():  # what the registries loaded from it goes with it
        for name in [n for n, obj in reg._loaded.items()
                     if getattr(obj, "__module__", "").startswith("rffbench_example_plugin")
                     or type(obj).__module__.startswith("rffbench_example_plugin")]:
            del reg._loaded[name]
    importlib.invalidate_caches()
    rffbench.config.register_configs()  # the later tests see the config without it
