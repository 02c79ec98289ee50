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
