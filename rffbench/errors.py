"""Exceptions that the command line reports as a one-line error (exit code 2)."""


class RffbenchError(ValueError):
    """Base class: a problem with the user's input, reported without a traceback."""


class ConfigError(RffbenchError):
    """An invalid configuration value: names the key, the value and what is allowed.

    A refusal of one key's value (:meth:`not_allowed`) carries them as data: ``key``,
    ``value`` and ``tail`` (what follows "is not allowed"), so that a caller can restate
    it (a D derived from D_n) without parsing its text; otherwise they are None."""

    def __init__(self, message, key=None, value=None, tail=None):
        super().__init__(message)
        self.key, self.value, self.tail = key, value, tail

    @classmethod
    def not_allowed(cls, key, value, tail):
        """``key=value is not allowed<tail>``, e.g. tail ": use an integer >= 1"."""
        return cls(f"{key}={value!r} is not allowed{tail}", key=key, value=value, tail=tail)


class DataError(RffbenchError):
    """A dataset that cannot be used: missing file, bad values, wrong shape."""


class RangeError(DataError):
    """A number beyond float64's room: a kernel's values on the data (Kernel.check_values),
    a formula's result (rffbench.theory).  Refused, naming what fits."""


class RunDirError(RffbenchError):
    """An output directory that cannot be created or written."""


class PluginError(RffbenchError):
    """A plug-in (map, kernel, dataset) that misbehaved: names it, what was checked and the
    key to change (rffbench.plugins)."""


class BenchError(RffbenchError):
    """A bad flag of ``python -m rffbench.bench``: one line naming it (exit 2)."""


def os_error_text(exc, what):
    """One line for an OSError: ``what`` (the path where there is one, and the system's
    reason)."""
    where = f"{exc.filename}: " if exc.filename is not None else ""
    return f"{what} ({where}{exc.strerror or exc})"


#: the most characters of someone else's message (a library's exception, a plug-in's output)
#: that a one-line error repeats: a parser's message can quote the whole offending line of a
#: file (a 100,000-character line of '[' was printed whole)
QUOTE_MAX = 300


def first_line(text, default="", limit=QUOTE_MAX):
    """The first non-empty line of ``text`` (an exception or a string), at most ``limit``
    characters (cut with '...' and the number of characters left out)."""
    s = str(text).strip() if text is not None else ""
    line = next((ln.strip() for ln in s.splitlines() if ln.strip()), "") or default
    if len(line) > limit:
        line = f"{line[:limit]}... ({len(line) - limit:,} more characters)"
    return line
