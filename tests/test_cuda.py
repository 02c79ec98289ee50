"""The CUDA path without a GPU: tests/cuda (every CUDA kernel against numpy) on numba's CUDA
simulator, in a process of its own (NUMBA_ENABLE_CUDASIM must be set before numba is
imported); and the CPU path never imports the GPU packages."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _have_numba_cuda():
    try:
        import numba_cuda  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _have_numba_cuda(), reason="numba-cuda is not installed (pip install "
                                                   "-e '.[test]' installs it for the simulator)")
def test_every_cuda_kernel_matches_numpy_on_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(ROOT / "tests" / "cuda")], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=900)
    tail = p.stdout[-3000:] + p.stderr[-2000:]
    assert p.returncode == 0, tail
    passed = re.search(r"(\d+) passed", p.stdout)
    assert passed and int(passed.group(1)) >= 90 and "skipped" not in p.stdout, tail


def test_the_cpu_path_imports_no_gpu_package():
    """A default run's modules (rffbench imported, one run through the Python API) never
    load numba_cuda, numba.cuda or cupy."""
    code = ("import sys\nfrom rffbench.experiment import run\nfrom tests.helpers import "
            "compose_config\nrun(compose_config(['dataset=synthetic', 'dataset.n=200', "
            "'D=16', 'measure.timing.enabled=false', 'measure.bounds.enabled=false']))\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('numba_cuda', 'cupy') "
            "or m.startswith('numba.cuda') or m.startswith('rffbench.cuda')]\n"
            "print('GPU MODULES:', bad)\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "GPU MODULES: []" in p.stdout, p.stdout[-500:]
