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
