"""What the extractors of published numbers (:mod:`~rffbench.published.quffka`,
:mod:`~rffbench.published.buechel`, :mod:`~rffbench.published.wacker`) share: the
``--commit`` argument, the walk over a file's nested dicts, a point's summary columns, and
the command's ending (the CSV with its source header on stdout, or
one line on stderr and exit 2)."""
from __future__ import annotations

import argparse
import pickle
import re
import sys

from ..errors import first_line, os_error_text
from ..readers import DamagedFile


class ExtractError(ValueError):
    """A file that is not the paper's: one line naming it and what is wrong."""


def commit_hash(value):
    """argparse type of ``--commit``: the source repository's commit."""
    if not re.fullmatch(r"[0-9a-fA-F]{7,40}", value):
        raise argparse.ArgumentTypeError(f"--commit={value!r}: use the source repository's "
                                         "commit hash (7 to 40 hexadecimal digits)")
    return value


def summary(values):
    """The columns every published point's row has, of its runs' ``values`` (a float array):
    runs, distinct (the values that differ), mean, sd (ddof 1) and median."""
    import numpy as np

    return dict(runs=values.size, distinct=int(np.unique(values).size),
                mean=float(values.mean()), sd=float(values.std(ddof=1)),
                median=float(np.median(values)))


def level(obj, at, what, known=None, whose=""):
    """The items of the dict ``obj`` (at ``at`` in the file) whose keys are ``known``
    ``what``s (None: any); ExtractError otherwise, ending in ``whose``."""
    if not isinstance(obj, dict):
        raise ExtractError(f"{at} is a {type(obj).__name__}, not a dict of {what}s{whose}")
    unknown = [k for k in obj if known is not None and k not in known]
    if unknown:
        raise ExtractError(f"{at}: unknown {what} {unknown[0]!r} (known: "
                           f"{', '.join(map(str, known))}){whose}")
    return obj.items()


def finish(prog, extract, header, where="", kind="pickle"):
    """Run ``extract()`` (a DataFrame) and write ``header`` and its CSV to stdout: 0; or
    one line on stderr, prefixed by ``where``, and 2 for a file that cannot be read, is
    refused by the safe reader or is not the paper's (``kind``: what the files are)."""
    try:
        df = extract()
    except OSError as exc:
        print(f"{prog}: error: {os_error_text(exc, 'cannot read the file')}", file=sys.stderr)
        return 2
    except (pickle.UnpicklingError, ExtractError, DamagedFile) as exc:  # refused, or not the
        # paper's file, or not a regular file
        print(f"{prog}: error: {where}{first_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a pickle cut or crafted: its own exceptions (EOFError, ...)
        print(f"{prog}: error: {where}not a readable {kind} ({type(exc).__name__}: "
              f"{first_line(exc)})", file=sys.stderr)
        return 2
    sys.stdout.write(header)
    df.to_csv(sys.stdout, index=False, float_format="%.8g")
    return 0
