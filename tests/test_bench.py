"""rffbench.bench: --save and --compare through the command."""
import pytest

from tests.helpers import run_module


@pytest.mark.slow
def test_bench_save_and_compare_flag_a_slower_product(tmp_path):
    """`python -m rffbench.bench --products ... --save` then `--compare` on another commit:
    the ratios new / saved, exit 1 when a row is more than --factor times slower; each
    row names its product's route."""
    import pandas as pd

    base = ["--products", "600,4", "--kernels", "gaussian,intersection",
            "--repeats", "1", "--processes", "1"]
    saved = tmp_path / "saved.csv"
    done = run_module("rffbench.bench", *base, "--save", str(saved))
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
    # one compare: gaussian's 3 rows flagged, intersection's 3 within the factor (a compare
    # that passes whole, exit 0: test_trust's save-then-compare of every kind)
    df.loc[df.kernel == "gaussian", "time_s"] *= 1e-6  # as if it had been far faster before
    df.to_csv(saved, index=False)
    slow = run_module("rffbench.bench", *base, "--compare", str(saved), "--factor", "1000")
    assert slow.returncode == 1 and "new_over_saved" in slow.stdout
    assert f"3 row(s) more than 1000x slower than {saved}" in slow.stdout


def test_the_device_check_is_refused_in_one_line_without_a_gpu():
    """`--device cuda` where the CUDA path cannot run (no CuPy, no GPU): one line naming what is
    missing, exit 2, no table; a flag of another benchmark is refused beside it."""

    from rffbench.cuda import unavailable

    reason = unavailable()
    if reason is None:
        pytest.skip("the CUDA path runs here (a GPU): the device check itself is the test")
    p = run_module("rffbench.bench", "--device", "cuda", "--cuda-maps", "100,4,8")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == f"python -m rffbench.bench: error: --device cuda: {reason}"
    p = run_module("rffbench.bench", "--device", "cuda", "--kernels", "gaussian")
    assert p.returncode == 2 and "--kernels has no effect with --device cuda" in p.stderr
