"""The suite's cost, kept from creeping back by counts, not by clocks (timings here are noisy;
CONTRIBUTING.md, "The suite's budget").

- **Compiled signatures**: a compiled function is compiled once per signature on every
  clean clone (CI's cache is always cold), and an array's layout and read-only flag are part
  of its signature.  Every registered kernel's Gram and every registered map's transform,
  handed its input in each layout numpy makes, compiles (or loads) nothing beyond what the
  C-contiguous input did: one version per dtype.
- **Process starts**: a test that starts ``python`` pays its imports (~4 s on 2 cores)
  before any work (a browser, its own start).  The default suite's tests run the command in
  their own process (``tests.helpers.run_cli``, ``run_module``); the places that start one
  are counted here and each is there because the process is what it tests.
"""
import ast
import warnings
from pathlib import Path

import numpy as np
import pytest
from numba.core import dispatcher

from rffbench.errors import ConfigError
from rffbench.features import FEATURE_MAPS
from rffbench.kernels import KERNELS, make_kernel
from tests.helpers import ROOT

#: the places in the default suite's tests (not marked slow) that start a process
#: (subprocess.run / Popen / check_output, or run_cli / run_module with process=True).
#: Each costs its imports on every run of the suite: raise this only for a test whose point
#: is the process (start-up, Ctrl-C, an environment variable read at import, the installed
#: command, a server), and say so in the test.
DEFAULT_SUITE_PROCESS_SITES = 24


def _layouts(X):
    """X's values in every layout numpy hands over (C first)."""
    n, d = X.shape
    big = np.zeros((2 * n, 2 * d), dtype=X.dtype)
    big[::2, ::2] = X
    ro = X.copy()
    ro.flags.writeable = False
    return [("C", X), ("Fortran", np.asfortranarray(X)), ("strided", big[::2, ::2]),
            ("read-only", ro), ("transposed", np.ascontiguousarray(X.T).T),
            ("broadcast row", np.broadcast_to(X[0], (1, d)))]


class _Compiles:
    """Counts the overloads numba adds (compiled or loaded from its cache) while active."""

    def __init__(self, monkeypatch):
        self.added = []
        real = dispatcher.Dispatcher.add_overload

        def add(disp, cres):
            self.added.append(f"{disp.py_func.__module__}.{disp.py_func.__qualname__}"
                              f"{tuple(str(a) for a in cres.signature.args)}")
            return real(disp, cres)

        monkeypatch.setattr(dispatcher.Dispatcher, "add_overload", add)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(KERNELS.builtins()))
def test_a_kernels_gram_compiles_once_per_dtype_whatever_the_layout(name, dtype, monkeypatch):
    X = np.random.default_rng(0).uniform(0.1, 1.0, (5, 3)).astype(dtype)
    k = make_kernel(name, **({"degree": 2} if name == "anova" else {})).fit(X)
    k.gram(X)  # the C-contiguous input: what it compiles (or loads) is the one version
    seen = _Compiles(monkeypatch)
    for what, V in _layouts(X):
        k.gram(V, X)
        k.gram(X, V)
    assert seen.added == [], f"{name}: a layout compiled another version: {seen.added}"


def _dispatchers():
    """Every module-level compiled function of the package's numba modules."""
    import sys

    import rffbench._numba  # noqa: F401  (its modules loaded)

    out = []
    for mod in [m for k, m in sys.modules.items() if k.startswith("rffbench._numba.")]:
        for v in vars(mod).values():
            if isinstance(v, dispatcher.Dispatcher):
                out.append(v)
    return out


@pytest.mark.parametrize("name", ["gaussian", "laplacian"])  # a GEMM tile, a coordinate tile
def test_a_parallel_loop_compiles_its_row_function_once(name):
    """A prange loop's index is typed int64 first and uint64 once the loop is made parallel:
    a row function handed the index as it is was compiled twice for every kernel and dtype
    (the Gram's tiles: 22 versions where 11 do, ~35 s of a cold suite).  After the tiled
    Gram in both precisions, no compiled function has two versions that differ only in an
    integer's signedness."""
    from rffbench.exact.tiles import TiledRows, tiled_gram

    X = np.random.default_rng(0).uniform(0.1, 1.0, (70, 3))
    k = make_kernel(name).fit(X)
    spec = k.tile_spec()
    for dtype in (np.float64, np.float32):
        rows = TiledRows(spec, k.inputs(X).astype(dtype))
        tiled_gram(spec, rows, rows)
    twins = []
    for disp in _dispatchers():
        sigs = {tuple(str(a).replace("uint64", "int64") for a in sig) for sig in
                disp.signatures}
        if len(sigs) < len(disp.signatures):
            twins.append((disp.py_func.__qualname__, [str(s) for s in disp.signatures]))
    assert twins == [], twins


def _fitted_map(name, X):
    cls = FEATURE_MAPS[name]
    for kernel in (cls.KERNELS or ("gaussian",)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                return cls(kernel=kernel, n_components=8, random_state=0).fit(X)
        except ConfigError:
            continue
    pytest.skip(f"{name} takes none of its kernels on a 6 x 3 input")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(FEATURE_MAPS.builtins()))
def test_a_maps_transform_compiles_once_per_dtype_whatever_the_layout(name, dtype,
                                                                      monkeypatch):
    X = np.random.default_rng(0).uniform(0.1, 1.0, (6, 3)).astype(dtype)
    f = _fitted_map(name, X)
    f.transform(X)
    seen = _Compiles(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for what, V in _layouts(X):
            f.transform(V)
    assert seen.added == [], f"{name}: a layout compiled another version: {seen.added}"


def _starts_a_process(call):
    """Whether an ast.Call starts a process: subprocess's functions, or the helpers with
    process=True."""
    fn = ast.unparse(call.func)
    if fn in ("subprocess.run", "subprocess.Popen", "subprocess.check_output",
              "subprocess.check_call", "subprocess.call"):
        return True
    return fn.split(".")[-1] in ("run_cli", "run_module") and any(
        k.arg == "process" and ast.unparse(k.value) != "False" for k in call.keywords)


def _is_slow(node):
    return any("slow" in ast.unparse(d) for d in node.decorator_list)


def default_suite_process_sites(root=ROOT):
    """["file:line"] of every call that starts a process in the tests the default suite runs
    (and their helpers and fixtures: whatever is not in a test marked slow)."""
    sites = []
    for path in sorted((root / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text())
        slow = {id(n) for top in tree.body if isinstance(top, ast.FunctionDef)
                and _is_slow(top) for n in ast.walk(top)}
        sites += [f"{path.relative_to(root)}:{n.lineno}" for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and id(n) not in slow and _starts_a_process(n)]
    return sites


def test_the_default_suite_starts_no_more_processes_than_its_budget():
    sites = default_suite_process_sites()
    assert len(sites) <= DEFAULT_SUITE_PROCESS_SITES, (
        f"{len(sites)} places in the default suite start a process (budget "
        f"{DEFAULT_SUITE_PROCESS_SITES}): run the command in this process "
        "(tests.helpers.run_cli / run_module) or mark the test slow:\n" + "\n".join(sites))


def test_the_process_count_sees_what_it_counts(tmp_path):
    """The counter itself: a subprocess call and a process=True helper in a default test are
    counted, one in a slow test and an in-process helper call are not."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        "import subprocess, pytest\n"
        "def test_a():\n    subprocess.run(['x'])\n    run_cli('D=1', process=True)\n"
        "    run_cli('D=1')\n    run_module('m', process=False)\n"
        "@pytest.mark.slow\ndef test_b():\n    subprocess.Popen(['x'])\n")
    assert default_suite_process_sites(Path(tmp_path)) == ["tests/test_x.py:3",
                                                           "tests/test_x.py:4"]
