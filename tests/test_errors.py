"""rffbench/errors.py: the exceptions reported as one line, and the bounded quote of what
someone else's text said."""
import errno

import pytest

from rffbench.errors import (
    QUOTE_MAX,
    BenchError,
    ConfigError,
    DataError,
    PluginError,
    RangeError,
    RffbenchError,
    RunDirError,
    first_line,
    os_error_text,
)


def test_first_line_bounds_what_it_quotes():
    assert first_line(ValueError("\n\n  a\nb")) == "a"
    assert first_line("", "fallback") == "fallback"
    long = first_line("x" * (QUOTE_MAX + 50))
    assert long == "x" * QUOTE_MAX + "... (50 more characters)"
    assert first_line(None, "none") == "none"
    assert first_line("ab", limit=1) == "a... (1 more characters)"


def test_a_refused_value_carries_its_key_value_and_what_is_allowed():
    """ConfigError.not_allowed: the line the user reads, and the parts as data (a caller
    restates them without parsing the text)."""
    exc = ConfigError.not_allowed("D", 0, ": use an integer >= 1")
    assert str(exc) == "D=0 is not allowed: use an integer >= 1"
    assert (exc.key, exc.value, exc.tail) == ("D", 0, ": use an integer >= 1")
    plain = ConfigError("dataset.path: no such file")
    assert (plain.key, plain.value, plain.tail) == (None, None, None)


@pytest.mark.parametrize("cls", [ConfigError, DataError, RangeError, RunDirError, PluginError,
                                 BenchError])
def test_every_one_line_error_is_an_rffbench_error(cls):
    """The command line reports every RffbenchError as one line (exit 2): each kind is one,
    and a ValueError for callers of the Python API."""
    assert issubclass(cls, RffbenchError) and issubclass(cls, ValueError)


def test_an_os_error_names_the_path_and_the_systems_reason():
    exc = OSError(errno.ENOSPC, "No space left on device", "/out/records.csv")
    assert os_error_text(exc, "cannot write the records") == (
        "cannot write the records (/out/records.csv: No space left on device)")
    assert os_error_text(OSError("plain"), "cannot read") == "cannot read (plain)"
