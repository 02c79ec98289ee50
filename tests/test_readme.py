"""The Python examples run as written: the "Use from Python" page's blocks (docs/python.md)
in order in one namespace, saying what they claim (the Pipeline with defaults reaches
exact kernel ridge's accuracy), and the README's one example."""
import re
import sys

from conftest import ROOT


def python_blocks(page):
    text = (ROOT / "docs" / page).read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_use_from_python_blocks_run(capsys):
    """The "Use from Python" page's blocks run, in order, in one namespace, and say what
    they claim (the Pipeline with defaults reaches exact kernel ridge's accuracy)."""
    import types
    import warnings

    blocks = python_blocks("python.md")
    assert len(blocks) >= 5
    # a real module, as a user's script is: classes defined in it can be pickled
    mod = types.ModuleType("docs_blocks")
    sys.modules[mod.__name__] = mod
    ns = mod.__dict__
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for i, code in enumerate(blocks):
                exec(compile(code, f"docs/python.md block {i + 1}", "exec"), ns)
    finally:
        del sys.modules[mod.__name__]
    assert ns["acc_exact"] > 0.97 and ns["acc_rff"] >= ns["acc_exact"] - 0.01
    assert ns["search"].best_score_ > 0.95
    assert ns["r2"] > 0.4
    assert ns["report"].passed
    need = ns["need"].set_index("method")["D_required"]
    assert need["hoeffding"] == 147556  # 4 ln(40) / 0.01^2, rounded up
    out = capsys.readouterr().out
    assert "check_feature_map(stratified_rff, kernel=gaussian): passed" in out


def test_the_readme_python_example_runs():
    """The README's one Python example runs as written."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    ns = {}
    exec(compile(blocks[0], "README.md", "exec"), ns)
