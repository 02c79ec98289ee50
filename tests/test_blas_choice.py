"""rffbench/blas_choice.py and the products it routes: RFFBENCH_BLAS read once per process,
oneMKL found in the environment's lib folder or refused in one line, and under oneMKL the
same numbers as under the default BLAS (the compiled GEMMs, the Python products, a map,
a Gram), with the records naming it.  The oneMKL cases run where the ``mkl`` package is
installed (CI installs it; skipped elsewhere)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rffbench import blas_choice
from rffbench.errors import RffbenchError
from tests.helpers import ROOT, blas_errors

needs_mkl = pytest.mark.skipif(blas_choice.mkl_path() is None,
                               reason="oneMKL (pip install mkl) is not installed")


@pytest.mark.parametrize("value,want", [(None, "default"), ("", "default"), (" ", "default"),
                                        ("default", "default"), ("MKL", "mkl"),
                                        (" mkl ", "mkl")])
def test_the_choice_is_read_from_the_environment(value, want):
    env = {} if value is None else {blas_choice.ENV: value}
    assert blas_choice.requested(env) == want


@pytest.mark.parametrize("value", ["openblas", "mkl,default", "1"])
def test_a_choice_not_known_is_one_line_naming_the_choices(value):
    with pytest.raises(RffbenchError) as err:
        blas_choice.requested({blas_choice.ENV: value})
    assert str(err.value) == (f"RFFBENCH_BLAS={value!r} is not allowed: use one of "
                              "default, mkl")


def test_onemkl_is_found_in_an_environments_lib_folder_or_named_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(blas_choice.ctypes.util, "find_library", lambda name: None)
    empty = tmp_path / "empty"
    (empty / "lib").mkdir(parents=True)
    assert blas_choice.mkl_path([empty]) is None
    assert blas_choice.missing("mkl", [empty]).startswith(
        "oneMKL's runtime library (libmkl_rt) is not installed in this environment")
    assert blas_choice.missing("default", [empty]) is None
    env = tmp_path / "env"
    (env / "lib").mkdir(parents=True)
    (env / "lib" / "libmkl_rt.so.2").write_bytes(b"")
    assert blas_choice.mkl_path([empty, env]) == str(env / "lib" / "libmkl_rt.so.2")
    assert blas_choice.missing("mkl", [env]) is None


_PROBE = r"""
import json, sys
import rffbench
import numpy as np
from rffbench import _numba as nbk
from rffbench.clock import blas_info
from rffbench.features import feature_map_class
from rffbench.kernels import make_kernel

rng = np.random.default_rng(0)
X = rng.standard_normal((600, 24))
out = {"chosen": nbk.blas.CHOSEN, "blas": blas_info()}
A, B = rng.standard_normal((37, 19)), rng.standard_normal((19, 23))
out["matmul"] = nbk.matmul(A, B).tolist()
out["matmul_f"] = nbk.matmul(np.asfortranarray(A), B.T.copy().T).tolist()
m = feature_map_class("rff")(kernel="gaussian", lengthscale=3.0, n_components=256,
                             random_state=0).fit(X)
out["rff"] = m.transform(X).tolist()
out["gram"] = make_kernel("rational_quadratic", lengthscale=3.0).fit(X).gram(X).tolist()
json.dump(out, sys.stdout)
"""


@needs_mkl
@pytest.mark.slow
def test_onemkl_gives_the_default_blas_numbers_and_is_named():
    """Results do not change with the BLAS: each product to its rounding (float64, k <= 24
    terms: 1e-13 relative), the map and the Gram to the same; the records' BLAS text
    says which ran."""
    got = {}
    for choice in ("default", "mkl"):
        p = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True,
                           env=dict(os.environ, **{blas_choice.ENV: choice}), text=True,
                           timeout=300)
        assert p.returncode == 0 and not blas_errors(p.stderr), p.stderr[-2000:]
        got[choice] = json.loads(p.stdout)
    base, mkl = got["default"], got["mkl"]
    assert (base["chosen"], mkl["chosen"]) == ("default", "mkl")
    assert mkl["blas"].startswith("RFFBENCH_BLAS=mkl: ") and " mkl " in f" {mkl['blas']}"
    assert not base["blas"].startswith("RFFBENCH_BLAS")
    for key in ("matmul", "matmul_f", "rff", "gram"):
        np.testing.assert_allclose(np.array(mkl[key]), np.array(base[key]), rtol=1e-12,
                                   atol=1e-13, err_msg=key)


@needs_mkl
@pytest.mark.slow
def test_the_differential_suite_passes_under_onemkl():
    """Every compiled entry against its numpy reference over generated shapes, dtypes and
    layouts, and the GEMM's own tests, in a process whose products run on oneMKL (the
    default suite runs them on the default BLAS)."""
    env = dict(os.environ, **{blas_choice.ENV: "mkl"})
    p = subprocess.run([sys.executable, "-m", "pytest", "tests/contracts/test_differential.py",
                        "tests/_numba/test_blas.py", "tests/_numba/test_products.py", "-q",
                        "-m", "not slow", "-n", "0", "-p", "no:cacheprovider"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0 and not blas_errors(p.stdout, p.stderr), \
        (p.stdout + p.stderr)[-3000:]
    assert " passed" in p.stdout.splitlines()[-1] and "failed" not in p.stdout.splitlines()[-1]
