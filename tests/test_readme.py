"""The README's "Use from Python" blocks run, in order, in one namespace, and say what
they claim (the Pipeline with defaults reaches exact kernel ridge's accuracy)."""
import re
import sys
import types
import warnings

from conftest import ROOT


def python_blocks(section):
    text = (ROOT / "README.md").read_text()
    start = text.index(f"## {section}")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)


def test_use_from_python_blocks_run(capsys):
    blocks = python_blocks("Use from Python")
    assert len(blocks) >= 5
    # a real module, as a user's script is: classes defined in it can be pickled
    mod = types.ModuleType("readme_blocks")
    sys.modules[mod.__name__] = mod
    ns = mod.__dict__
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for i, code in enumerate(blocks):
                exec(compile(code, f"README.md block {i + 1}", "exec"), ns)
    finally:
        del sys.modules[mod.__name__]
    # the Pipeline with default (median) lengthscale reaches the exact kernel's accuracy range
    assert ns["acc_exact"] > 0.97 and ns["acc_rff"] >= ns["acc_exact"] - 0.01
    assert ns["search"].best_score_ > 0.95
    assert ns["r2"] > 0.4
    assert ns["report"].passed
    need = ns["need"].set_index("method")["D_required"]
    assert need["hoeffding"] == 147556  # 4 ln(40) / 0.01^2, rounded up
    out = capsys.readouterr().out
    assert "check_feature_map(stratified_rff, kernel=gaussian): passed" in out
