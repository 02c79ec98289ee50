"""``--save`` / ``--compare``: a saved table read back and the time ratios new / saved."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

from ..errors import BenchError, first_line, os_error_text
from ..readers import DamagedFile, read_text


def read_saved(path):
    """A CSV saved by ``--save`` (as text: compared as text), read bounded; BenchError
    naming it otherwise."""


    try:
        text = read_text(path, 64 << 20)
        old = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except OSError as exc:
        raise BenchError(os_error_text(exc, "--compare: cannot read the saved CSV")) from None
    except (DamagedFile, ValueError, pd.errors.ParserError) as exc:
        raise BenchError(f"--compare {path}: not a CSV of this benchmark "
                         f"({first_line(exc)})") from None
    if "time_s" not in old.columns:
        raise BenchError(f"--compare {path}: not saved by this benchmark (no time_s column)")
    times = pd.to_numeric(old["time_s"], errors="coerce")
    bad = ~(np.isfinite(times) & (times > 0))
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise BenchError(f"--compare {path}: its time_s column holds {old['time_s'].iloc[i]!r} "
                         f"(row {i + 1}), not a time in seconds: a saved table's times are "
                         "positive numbers")
    return old


def compare(rows, saved):
    """Rows of this run beside a saved CSV of the same benchmark: time ratios new / saved
    on the columns that identify a row (everything but the timings, fractions and notes),
    compared as text (a saved CSV reads empty cells back as NaN, this run has '')."""


    new = pd.DataFrame(rows)
    old = read_saved(saved) if not isinstance(saved, pd.DataFrame) else saved
    measured = ("time", "_s", "fraction", "gflops", "speedup", "over", "rss", "note",
                "residual", "iterations", "rmse", "diff", "first_measurement", "process",
                "unstable", "loads", "machine")
    keys = [c for c in new.columns if c in old.columns and not any(m in c for m in measured)]
    if "time_s" not in old.columns or not keys:
        raise BenchError(f"--compare: not saved by the same benchmark (its columns: "
                         f"{', '.join(list(old.columns)[:8])})")
    left = new.assign(**{k: new[k].map(lambda v: "" if pd.isna(v) else str(v)) for k in keys})
    right = old[keys + ["time_s"]].rename(columns={"time_s": "time_s_saved"})
    right["time_s_saved"] = pd.to_numeric(right["time_s_saved"], errors="coerce")
    both = left.merge(right, on=keys)
    if both.empty:
        raise BenchError("--compare: no row of this run matches a saved row (another "
                         "shape, map, kernel or thread count?)")
    both["new_over_saved"] = both["time_s"] / both["time_s_saved"]
    if not np.isfinite(both["new_over_saved"].to_numpy(dtype=float)).all():
        raise BenchError("--compare: a row of this run has no time to compare (not a number)")
    return both[keys + ["time_s", "time_s_saved", "new_over_saved"]].to_dict("records")
