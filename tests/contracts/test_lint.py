"""The tree is clean under ruff, configured in pyproject.toml (line length 100, pycodestyle,
pyflakes, import order): what a contributor's editor and CI report is nothing."""
import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT


def test_the_tree_is_clean_under_ruff():
    try:
        import ruff  # noqa: F401  (the test extra installs it)
    except ImportError:
        if shutil.which("ruff") is None:
            pytest.skip("ruff is not installed (pip install -e '.[test]')")
    cmd = [sys.executable, "-m", "ruff"] if "ruff" in sys.modules else ["ruff"]
    p = subprocess.run([*cmd, "check", "--no-cache", "--output-format", "concise", str(ROOT)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
