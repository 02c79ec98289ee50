"""rffbench.bench: --save and --compare through the command."""
import pytest


@pytest.mark.slow
def test_bench_save_and_compare_flag_a_slower_product(tmp_path):
    """`python -m rffbench.bench --products ... --save` then `--compare` on another commit:
    the ratios new / saved, exit 1 when a row is more than --factor times slower; each
    row names its product's route."""
    import subprocess
    import sys

    import pandas as pd

    base = [sys.executable, "-m", "rffbench.bench", "--products", "600,4", "--kernels",
            "gaussian,laplacian,intersection", "--repeats", "1", "--processes", "1"]
    saved = tmp_path / "saved.csv"
    done = subprocess.run(base + ["--save", str(saved)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    df = pd.read_csv(saved)
    assert set(df.impl) == {"float64", "mixed", "python_tiles"} and (df.time_s > 0).all()
    # one worker process: its fraction is the ratio of its medians
    assert ((df.fraction_of_limit - df.limit_s / df.time_s).abs() < 1e-9).all()
    assert (df.process_ratio == 1).all() and not df.unstable.any()
    routes = df.set_index(["kernel", "impl"])["product"]
    assert routes["intersection", "float64"] == routes["intersection", "mixed"] \
        == "sorted coordinates" and routes["gaussian", "float64"] == "tiles"
    assert set(routes[:, "python_tiles"]) == {"python tiles"}
    # the precision each route made its products in: mixed on the fused tiles only
    prec = df.set_index(["kernel", "impl"])["precision"]
    assert prec["gaussian", "mixed"] == "mixed" and prec["intersection", "mixed"] == "float64"
    assert set(prec[:, "python_tiles"]) == {"float64"}
    ok = subprocess.run(base + ["--compare", str(saved), "--factor", "1000"],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "new_over_saved" in ok.stdout
    df.loc[df.kernel == "laplacian", "time_s"] *= 1e-6  # as if it had been far faster before
    df.to_csv(saved, index=False)
    slow = subprocess.run(base + ["--compare", str(saved), "--factor", "1000"],
                          capture_output=True, text=True)
    assert slow.returncode == 1
    assert f"3 row(s) more than 1000x slower than {saved}" in slow.stdout


def test_the_device_check_is_refused_in_one_line_without_a_gpu():
    """`--device cuda` where the CUDA path cannot run (no CuPy, no GPU): one line naming what is
    missing, exit 2, no table; a flag of another benchmark is refused beside it."""
    import subprocess
    import sys

    from rffbench.cuda import unavailable

    reason = unavailable()
    if reason is None:
        pytest.skip("the CUDA path runs here (a GPU): the device check itself is the test")
    p = subprocess.run([sys.executable, "-m", "rffbench.bench", "--device", "cuda",
                        "--cuda-maps", "100,4,8"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == f"python -m rffbench.bench: error: --device cuda: {reason}"
    p = subprocess.run([sys.executable, "-m", "rffbench.bench", "--device", "cuda",
                        "--kernels", "gaussian"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "--kernels has no effect with --device cuda" in p.stderr


@pytest.mark.slow
def test_the_device_check_runs_whole_on_the_simulator(tmp_path):
    """`python -m rffbench.bench --device cuda` at tiny shapes on numba's CUDA simulator: the CUDA
    tests pass, every map's device output equals its CPU output, K v equals the CPU's,
    and the table says the times are the simulator's."""
    import os
    import subprocess
    import sys

    import pandas as pd

    pytest.importorskip("numba_cuda")
    out = tmp_path / "gpu.csv"
    p = subprocess.run([sys.executable, "-m", "rffbench.bench", "--device", "cuda",
                        "--cuda-maps", "5,3,6",
                        "--cuda-product", "7,2", "--repeats", "2", "--out", str(out)],
                       capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1"))
    assert p.returncode == 0, p.stderr[-3000:]
    df = pd.read_csv(out)
    tests = df[df.kind == "tests"].note.iloc[0]
    assert tests.startswith("exit 0:") and "passed" in tests and "failed" not in tests
    maps = df[(df.kind == "map") & df.impl.str.startswith("rffbench")]
    assert len(maps) == 14 and set(maps.dtype) == {"float32", "float64"}
    tol = maps.dtype.map({"float32": 1e-6, "float64": 1e-12})
    assert (maps.max_abs_diff <= tol).all(), maps[["impl", "dtype", "max_abs_diff"]]
    prod = df[df.kind == "product"].iloc[0]
    assert prod.max_abs_diff < 1e-12 and prod.N == 7
    assert (df[df.kind != "tests"].note.str.contains("CUDA simulator")).all()
    assert set(df.device) == {"CUDA simulator"}
