"""Shared fixtures (small fixed-seed data, dtypes, the thread limits restored after each test)
and the rule that a BLAS error message anywhere (the test's own output or a subprocess's)
fails the test.  Helpers are in tests/helpers.py."""
import importlib
import importlib.metadata
import subprocess
import sys

import rffbench  # noqa: F401  (thread-pool env defaults before numpy loads)

# isort: split
import numpy as np
import pytest

from tests.helpers import DIST, PLUGIN_DIR, blas_errors

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


@pytest.fixture(autouse=True)
def _restore_thread_limits():
    """A run sets global numba/BLAS thread counts; give the next test all cores again."""
    import numba
    from threadpoolctl import threadpool_limits

    yield
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    threadpool_limits(limits=numba.config.NUMBA_NUM_THREADS)


@pytest.fixture(scope="module")
def plugin():
    """The example plug-in, installed for this module's tests (and removed again
    if it was not installed before)."""
    try:
        importlib.metadata.distribution(DIST)
        installed_before = True
    except importlib.metadata.PackageNotFoundError:
        installed_before = False
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                            str(PLUGIN_DIR)], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        importlib.invalidate_caches()
    import rffbench.config

    rffbench.config.register_configs()  # its config-group options, as run.py does
    yield importlib.import_module("rffbench_example_plugin")
    if not installed_before:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", DIST],
                       capture_output=True, timeout=300)
        importlib.invalidate_caches()
        rffbench.config.register_configs()  # the later tests see the config without it
