"""rffbench.interrupts: a Ctrl-C that arrives where Python cannot raise it is remembered."""
import sys

import pytest


def test_a_remembered_ctrl_c_is_silent_where_python_cannot_raise_it():
    """Ctrl-C inside a ctypes callback (numba's cache hook while it loads code) printed
    "Exception ignored on calling ctypes callback function" and a traceback before the
    one-line message; the interrupt is remembered and raised again by checkpoint(), so
    that print is dropped; other unraisable exceptions are printed as before."""
    import signal
    import types

    from rffbench import interrupts

    before = signal.getsignal(signal.SIGINT), sys.unraisablehook
    printed = []
    sys.unraisablehook = printed.append  # what Python's default hook would print
    try:
        interrupts.install()
        interrupts._REQUESTED.set()
        info = types.SimpleNamespace(exc_type=KeyboardInterrupt, exc_value=KeyboardInterrupt(),
                                     exc_traceback=None, err_msg="Exception ignored on "
                                     "calling ctypes callback function", object=None)
        sys.unraisablehook(info)
        assert printed == []
        with pytest.raises(KeyboardInterrupt):
            interrupts.checkpoint()
        other = types.SimpleNamespace(exc_type=ValueError, exc_value=ValueError("boom"),
                                      exc_traceback=None, err_msg="Exception ignored in",
                                      object=None)
        sys.unraisablehook(other)
        assert printed == [other]
    finally:
        interrupts._REQUESTED.clear()
        signal.signal(signal.SIGINT, before[0])
        sys.unraisablehook = before[1]


@pytest.mark.parametrize("where", ["run", "composition", "loading"])
def test_a_librarys_error_after_ctrl_c_is_the_interruption_not_a_traceback(
        tmp_path, monkeypatch, where):
    """Ctrl-C landing inside a library can leave its state half updated, so that the next
    call raises its own error (omegaconf's AttributeError while Hydra composed, seen once at
    0.3 s into a start; and while Hydra's import built its own configs, before the command
    was loaded): with Ctrl-C remembered, that error is the interruption's, one line and
    exit 130, in a run, outside one and while loading (no records)."""
    import rffbench.cli as cli
    import rffbench.entry as entry
    import rffbench.experiment as experiment
    from rffbench import interrupts
    from rffbench.results import RECORDS_FILE
    from tests.helpers import run_cli

    def broken(*a, **k):
        interrupts._REQUESTED.set()
        raise AttributeError("'NoneType' object has no attribute '_invalidate_flags_cache'")

    monkeypatch.setattr(*{"run": (experiment, "run"), "composition": (cli, "_main"),
                          "loading": (entry, "_cli")}[where], broken)
    try:
        p = run_cli("dataset=wine", f"hydra.run.dir={tmp_path / 'r'}")
    finally:
        interrupts._REQUESTED.clear()
    assert p.returncode == 130 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert p.stderr.strip().splitlines()[-1].startswith("rffbench: interrupted")
    assert not (tmp_path / "r" / RECORDS_FILE).exists()
