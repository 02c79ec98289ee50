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


def test_help_lists_no_config_group_unless_its_template_names_them(monkeypatch):
    """Hydra built the option list of every config group (134 of them, ~5 s) for any
    --help, whatever its template shows; rffbench's shows none of it: counted, none made.
    --hydra-help's template names them: listed there."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    calls = []
    listing = ConfigLoaderImpl.get_group_options
    monkeypatch.setattr(ConfigLoaderImpl, "get_group_options",
                        lambda self, *a, **k: calls.append(a) or listing(self, *a, **k))
    r = run_cli("--help")
    assert r.returncode == 0 and r.stdout.startswith("rffbench: random"), r.stderr
    assert calls == []
    r = run_cli("--hydra-help")
    assert r.returncode == 0 and "== Configuration groups ==" in r.stdout, r.stderr
    assert len(calls) > 10 and "hydra/launcher: basic" in r.stdout.replace(",", "")
