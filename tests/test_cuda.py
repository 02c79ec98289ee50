"""The CUDA path without a GPU: tests/cuda (every CUDA kernel against numpy) on numba's CUDA
simulator, in a process of its own (NUMBA_ENABLE_CUDASIM must be set before numba is
imported); and the CPU path never imports the GPU packages."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
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
@pytest.mark.slow
def test_the_device_check_runs_whole_on_the_simulator(tmp_path):
    """`python -m rffbench.bench --device cuda` at tiny shapes on numba's CUDA simulator, in
    a process of its own: the CUDA tests (tests/cuda: every CUDA kernel against numpy) pass
    there, none skipped; every map's device output equals its CPU output, K v equals the
    CPU's, and the table says the times are the simulator's."""
    import pandas as pd

    from tests.helpers import run_module

    out = tmp_path / "gpu.csv"
    p = run_module("rffbench.bench", "--device", "cuda", "--cuda-maps", "5,3,6",
                   "--cuda-product", "7,2", "--repeats", "2", "--out", str(out),
                   env=dict(NUMBA_ENABLE_CUDASIM="1"), process=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    df = pd.read_csv(out)
    tests = df[df.kind == "tests"].note.iloc[0]
    passed = re.fullmatch(r"exit 0: (\d+) passed in .*", tests)
    assert passed and int(passed.group(1)) >= 90, tests  # and none failed, none skipped
    maps = df[(df.kind == "map") & df.impl.str.startswith("rffbench")]
    assert len(maps) == 14 and set(maps.dtype) == {"float32", "float64"}
    tol = maps.dtype.map({"float32": 1e-6, "float64": 1e-12})
    assert (maps.max_abs_diff <= tol).all(), maps[["impl", "dtype", "max_abs_diff"]]
    prod = df[df.kind == "product"].iloc[0]
    assert prod.max_abs_diff < 1e-12 and prod.N == 7
    assert (df[df.kind != "tests"].note.str.contains("CUDA simulator")).all()
    assert set(df.device) == {"CUDA simulator"}


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


def _cuda_unavailable():
    from rffbench.cuda import unavailable

    return unavailable()


def test_device_cuda_is_refused_in_one_line_where_it_cannot_run(tmp_path):
    """device=cuda without a GPU or CuPy (the simulator off): one line naming what is
    missing, exit 2, no records; a map without a CUDA transform is refused by the config
    check wherever it runs."""
    from tests.helpers import refused, run_cli

    reason = _cuda_unavailable()
    if reason is None:
        pytest.skip("the CUDA path runs here: device=cuda is not refused")
    p = run_cli("device=cuda", "dataset=wine", f"hydra.run.dir={tmp_path / 'r'}")
    assert refused(p, tmp_path / "r") == f"rffbench: error: device=cuda cannot run here: " \
                                         f"{reason}"
    p = run_cli("device=cuda", "features=nystrom", f"hydra.run.dir={tmp_path / 'n'}")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines()[-1].startswith(
        "rffbench: error: features='nystrom' is not allowed: device=cuda needs a map with a "
        "CUDA transform: arccos, fastfood")


def test_the_api_says_what_the_command_line_says_where_cuda_cannot_run():
    """A map's on_device('cuda') and exact KRR's fit with device='cuda' where the CUDA path
    cannot run: the command line's one line (what is missing), before any device call; an
    unknown device for exact KRR is refused by name."""
    from rffbench.errors import ConfigError
    from rffbench.exact import ExactKRR
    from rffbench.features import RandomFourierFeatures

    reason = _cuda_unavailable()
    if reason is None:
        pytest.skip("the CUDA path runs here")
    X = np.random.default_rng(0).standard_normal((20, 3))
    y = X[:, 0]
    says = f"device='cuda' cannot run here: {reason}"
    with pytest.raises(ConfigError) as e:
        RandomFourierFeatures(n_components=8, random_state=0).fit(X).on_device("cuda")
    assert str(e.value) == says
    with pytest.raises(ConfigError) as e:
        ExactKRR(device="cuda").fit(X, y)
    assert str(e.value) == says
    with pytest.raises(ConfigError, match=r"^device='tpu' is not allowed: use one of cpu, "
                                          r"cuda$"):
        ExactKRR(device="tpu").fit(X, y)


SIM_ARGS = ["dataset=synthetic", "dataset.n=60", "dataset.d=3", "D=8",
            "measure.bounds.enabled=false", "measure.learning.enabled=false",
            "measure.approximation.enabled=false"]


@pytest.fixture(scope="module")
def cpu_store(tmp_path_factory):
    """A results folder whose store holds the CPU's run of SIM_ARGS (sweep a)."""
    from tests.helpers import run_cli

    root = tmp_path_factory.mktemp("simstore")
    first = run_cli("-m", "device=cpu", *SIM_ARGS, f"hydra.sweep.dir={root / 'a'}",
                    env=dict(NUMBA_ENABLE_CUDASIM="0"))
    assert first.returncode == 0, first.stderr[-2000:]
    return root


@pytest.mark.parametrize("device, sim, says", [
    ("cuda", "1", "device=cuda cannot run here: numba's CUDA simulator is on "
                  "(NUMBA_ENABLE_CUDASIM=1), its times are the CPU's, not a GPU's: use "
                  "device=cuda_sim (for tests) or unset NUMBA_ENABLE_CUDASIM"),
    ("cuda_sim", "0", "device=cuda_sim cannot run here: it runs on numba's CUDA simulator, "
                      "which NUMBA_ENABLE_CUDASIM=1 in the environment turns on (set before "
                      "the command starts); on a GPU use device=cuda")],
    ids=["cuda-simulator-on", "cuda_sim-simulator-off"])
@pytest.mark.parametrize("sweep", [False, True])
def test_the_simulator_is_its_own_device_and_a_gpu_run_is_never_served_one(
        tmp_path, monkeypatch, cpu_store, device, sim, says, sweep):
    """device=cuda with numba's CUDA simulator on (its times would be the CPU's under the
    GPU's name) and device=cuda_sim with it off: one line, exit 2, nothing written; in a
    sweep the refusal comes before the results folder's store is looked at, so a run of the
    same config that the store holds is not copied (planted here as the store's only run)."""
    from rffbench.results import RECORDS_FILE
    from tests.helpers import refused, run_cli

    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", sim)
    args = SIM_ARGS
    if not sweep:
        p = run_cli(f"device={device}", *args, f"hydra.run.dir={tmp_path / 'r'}")
        assert refused(p, tmp_path / "r") == f"rffbench: error: {says}"
        return
    # the store's run of this very config (device and all), as another sweep left it: the
    # CPU's run of it, moved to the device's run id with a manifest that verifies
    import shutil

    from rffbench.config import validate
    from rffbench.runid import run_id
    from rffbench.store import read_manifest, write_manifest
    from tests.helpers import compose_config

    shutil.copytree(cpu_store, tmp_path, symlinks=True, dirs_exist_ok=True)
    (cpu_entry,) = [p for p in (tmp_path / ".runs").iterdir() if p.is_dir()]
    rid = run_id(validate(compose_config([f"device={device}", *args])))
    entry = shutil.copytree(cpu_entry, tmp_path / ".runs" / rid)
    for f in entry.glob("*.*"):  # its files name the device's id and the device
        text = f.read_text().replace(cpu_entry.name, rid)
        f.write_text(text.replace('"device": "cpu"', f'"device": "{device}"')
                     if f.name == "config.json" else text)
    write_manifest(entry, rid, list(read_manifest(cpu_entry)["files"]))
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", sim)
    p = run_cli("-m", f"device={device}", *args, f"hydra.sweep.dir={tmp_path / 'b'}")
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert f"rffbench: error: {says}" in p.stderr.splitlines()
    assert "computed by another sweep" not in p.stdout
    assert not list((tmp_path / "b").rglob(RECORDS_FILE))


RUN = ["dataset=synthetic", "dataset.n=60", "dataset.d=3", "D=8", "seed=3", "model.lam=0.01",
       "model.exact_solver=cg", "model.cg_tol=1e-11", "measure.bounds.trials=3",
       "measure.bounds.n_points=10", "measure.approximation.n_points=30"]


@pytest.mark.skipif(not _have_numba_cuda(), reason="numba-cuda is not installed (pip install "
                                                   "-e '.[test]' installs it for the simulator)")
@pytest.mark.slow
def test_a_run_on_the_device_records_the_cpu_runs_numbers(tmp_path):
    """The installed ``rffbench device=cuda_sim`` on numba's CUDA simulator and ``python
    run.py`` on the CPU, same config: every approximation, learning and bounds number agrees
    to rounding (the maps draw on the host; exact KRR by cg on both), the device column says
    where each ran (cuda_sim: the simulator, never cuda), and the timing measurement
    records the device's parts (the device clock n/a on the simulator, with its reason)."""
    from rffbench.results import read_records
    from tests.helpers import installed_command

    exe = installed_command("rffbench")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", MPLBACKEND="Agg")
    gpu = subprocess.run([exe, "device=cuda_sim", *RUN, f"hydra.run.dir={tmp_path / 'gpu'}"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert gpu.returncode == 0, gpu.stderr[-3000:]
    from tests.helpers import run_cli

    cpu = run_cli(*RUN, f"hydra.run.dir={tmp_path / 'cpu'}")
    assert cpu.returncode == 0, cpu.stderr[-3000:]
    g, c = (read_records(tmp_path / k / "records.csv") for k in ("gpu", "cpu"))
    assert set(g.device) == {"cuda_sim"} and set(c.device) == {"cpu"}
    assert re.search(r"^rffbench run \w+: .* threads, device=cuda_sim$", gpu.stdout, re.M)
    assert re.search(r"^rffbench run \w+: .* threads$", cpu.stdout, re.M)  # the CPU: unsaid
    assert g.run_id.iloc[0] != c.run_id.iloc[0]  # device is part of the run's identity

    def values(df, measurement, metrics):
        sel = df[(df.measurement == measurement) & df.metric.isin(metrics)]
        return sel.set_index(["metric", "method"]).value.sort_index()

    approx = ["max_abs_error", "rel_fro_error", "rel_spectral_error", "expected_rel_fro_error"]
    learn = ["test_rmse", "test_rel_rmse", "cg_iterations"]
    bounds = ["eps_empirical", "diam"]  # trials one at a time on the device, threads here
    for m, metrics in (("approximation", approx), ("learning", learn), ("bounds", bounds)):
        a, b = values(g, m, metrics), values(c, m, metrics)
        assert list(a.index) == list(b.index) and len(a) >= 3
        np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=1e-8, atol=1e-10)
    route = g[(g.metric == "solve_time_s") & (g.method == "exact_krr")].note.iloc[0]
    assert "kernel products on the GPU" in route
    t = g[g.measurement == "timing"].set_index("metric")
    assert t.value[["h2d_time_s", "d2h_time_s", "device_first_call_s",
                    "map_transform_time_s"]].gt(0).all()
    assert np.isnan(t.value["map_device_time_s"]) and "simulator" in t.note["map_device_time_s"]
    assert "map_device_time_s" not in set(c.metric)
