"""rffbench/_numba/cache.py and the compiler's work: what a run compiles, that it is
cached, keyed by every module of the package, and compiled for the widest vectors."""
import os
import re
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import has_avx512

COMPILE_WATCH = """
import json, sys
from numba.core import event

seen = []


class Listener(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        d = ev.data.get("dispatcher")
        f = getattr(d, "py_func", None)
        if f is not None and f.__module__.startswith("rffbench."):
            seen.append([f.__module__ + "." + f.__qualname__, str(ev.data.get("args"))])


event.register("numba:compile", Listener())
out, sys.argv = sys.argv[1], ["run.py", *sys.argv[2:]]
from rffbench.cli import main
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
json.dump(seen, open(out, "w"))
"""


HOT_PATHS = """
import json, sys
import numpy as np
from rffbench._numba import gram, passes, products
from rffbench.exact import KernelOperator
from rffbench.features import RandomFourierFeatures
from rffbench.kernels import make_kernel

X = np.random.default_rng(0).standard_normal((600, 4))
for name in ("gaussian", "arccos1"):  # a squared-distance tile and a dot-product tile (the
    # attribute is _times_chunk's whatever the tile; laplacian's coordinate tile: +30 s)
    KernelOperator(make_kernel(name).fit(X), X).matvec(np.ones((600, 1)))
RandomFourierFeatures(kernel="gaussian", n_components=64, random_state=0).fit_transform(X)
attr = '"prefer-vector-width"="512"'
seen = {}
for f in (products._times_chunk, products.fold_row, gram.scaled_sqdist_row, passes._cos_block):
    ir = f.inspect_llvm()
    seen[f.__name__] = [len(ir), all(attr in v for v in ir.values()),
                        min(v.count("zmm") for v in f.inspect_asm().values())]
json.dump(seen, open(sys.argv[1], "w"))
"""


CACHE_PROBE = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import _numba as nbk
X = np.linspace(-1.0, 1.0, 6)[:, None]
W = np.full((1, 3), 0.7)
out = np.empty((6, 3))
nbk.gemm_cos_offset(X, W, np.zeros(3), 1.0, np.full(6, 2.0), out)
print(repr(float(out.sum())))
"""


@pytest.mark.slow
def test_a_run_compiles_only_what_it_needs_and_every_function_is_cached(tmp_path):
    """The default run on an empty numba cache compiles each function it uses once, for
    its kernel's codes only (the Gaussian profile: no other profile's or kind's code),
    not the fused kernel product that a prediction of its size does not use; the same run
    again compiles nothing: every compiled function was cached (cache=True)."""
    import json
    import os
    import subprocess
    import sys

    from tests.helpers import ROOT

    script = tmp_path / "watch.py"
    script.write_text(COMPILE_WATCH)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), MPLBACKEND="Agg")

    def run(i):
        out = tmp_path / f"compiled{i}.json"
        p = subprocess.run([sys.executable, str(script), str(out),
                            f"hydra.run.dir={tmp_path / f'r{i}'}"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        return json.loads(out.read_text())

    cold = run(1)
    names = [n for n, _ in cold]
    own = [(n, a) for n, a in cold if "._ov_" not in n]  # not overloads' inline bodies
    assert own and len(own) == len(set(own)), "a function compiled twice"
    gram = [(n, a) for n, a in cold if ".gram." in n]
    assert gram and not any("_times_chunk" in n or "kernel_times" in n for n, _ in gram), names
    for n, args in gram:  # literal codes: the Gaussian's profile (1) only
        literals = [int(v) for v in re.findall(r"Literal\[int\]\((\d+)\)", args)]
        assert set(literals) <= {0, 1}, (n, args)
    assert run(2) == [], "compiled again: not cached"


@pytest.mark.slow
def test_the_hot_loops_are_compiled_for_the_widest_vectors(tmp_path):
    """The functions whose loops make the exact products' tiles (and fold a one-column
    product's values) and the rff map's cosine (compiled afresh, in their own process:
    cached functions carry no IR to read) carry the preferred width, and on an AVX-512
    machine run on zmm registers."""
    import json
    import os
    import subprocess
    import sys

    from tests.helpers import ROOT

    script = tmp_path / "hot.py"
    script.write_text(HOT_PATHS)
    out = tmp_path / "seen.json"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([sys.executable, str(script), str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    seen = json.loads(out.read_text())
    assert set(seen) == {"_times_chunk", "fold_row", "scaled_sqdist_row", "_cos_block"}
    for name, (compiled, marked, zmm) in seen.items():
        assert compiled >= 1 and marked, (name, seen)
        if has_avx512():
            assert zmm > 0, (name, seen)


def test_a_change_to_any_module_recompiles_every_cached_function(tmp_path):
    """numba keys a function's cached code by its own file only, but the compiled code
    inlines the helpers of the other modules (the BLAS call of blas.py inside the maps'
    passes): after a change to blas.py alone, the passes kept the old code (the fix of
    the d = 1 leading dimension did not reach them).  rffbench._numba.cache keys every
    function by all the package's modules: a copy of the package, run, then its blas.py
    changed (alpha 1 -> 2) and run again, gives the new values."""
    import shutil
    import subprocess
    import sys

    from rffbench._numba import cache

    pkg = tmp_path / "_numba"
    shutil.copytree(Path(cache.__file__).parent, pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}  # in the copy

    def probe():
        p = subprocess.run([sys.executable, "-c", CACHE_PROBE, str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        return float(p.stdout.strip().splitlines()[-1])

    X = np.linspace(-1.0, 1.0, 6)[:, None]
    first = probe()
    assert first == pytest.approx(float(np.cos(X @ np.full((1, 3), 0.7)).sum()), rel=1e-12)
    assert any(pkg.glob("__pycache__/*.nbi"))  # cached in the copy's own folder
    stamp = cache.package_stamp(str(pkg))
    blas = pkg / "blas.py"
    text = blas.read_text()
    assert "ab[0] = 1.0" in text
    blas.write_text(text.replace("ab[0] = 1.0", "ab[0] = 2.0"))
    assert cache.package_stamp(str(pkg)) != stamp
    second = probe()
    assert second == pytest.approx(float(np.cos(2.0 * X @ np.full((1, 3), 0.7)).sum()),
                                   rel=1e-12)
