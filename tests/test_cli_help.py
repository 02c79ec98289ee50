"""rffbench/cli_help.py: python run.py --help is built from the registries, not Hydra's
generic text."""


from tests.helpers import run_cli


def test_help_lists_the_registries_not_hydras_generic_text():
    r = run_cli("--help")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("rffbench: random Fourier features")
    for name in ("gaussian", "matern", "rff_pairs", "sorf", "nystrom", "fashion_mnist", "ridge",
                 "error_vs_D", "paper_table", "kernel.gamma", "rffbench.feature_maps"):
        assert name in out, name
    assert "binning" in out and "(laplacian)" in out  # maps name the kernels they support
    assert "== Config ==" not in out and "Powered by Hydra" not in out
