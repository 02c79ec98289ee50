"""Progress of long work (trials, chunks, cg iterations, file passes, sweeps) through
logging, thread-safe.

``Progress(what, total, unit)``; ``step(n, left=None, note="")`` after each item.  Quiet
for the first ``MIN_SECONDS`` (short work prints nothing), then at most one line every
``EVERY`` seconds: how far (``done/total unit``), ``note`` (e.g. cg's residual), the time
elapsed and an estimate of what remains: ``left`` items (when the total is unknown or
not what decides the end, e.g. cg's estimate from its residual's rate) or total - done,
at the rate so far.
"""
from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("rffbench.progress")

#: seconds of silence before the first line: short work prints nothing
MIN_SECONDS = 5.0
#: at most one line per this many seconds
EVERY = 5.0


def duration(s):
    """'42 s', '3.5 min', '1.2 h'."""
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min" if s < 7200 else f"{s / 3600:.1f} h"


class Progress:
    def __init__(self, what, total=None, unit=""):
        self.what, self.total, self.unit = what, total, unit
        self.done = 0
        self.t0 = self.last = time.perf_counter()
        self.lines = 0
        self.lock = threading.Lock()

    def step(self, n=1, left=None, note=""):
        """``n`` more items done; ``left``: items still to do, if the caller knows better
        than total - done; ``note``: shown on the line."""
        with self.lock:
            self.done += n
            now = time.perf_counter()
            if now - self.t0 < MIN_SECONDS or now - self.last < EVERY:
                return
            self.last = now
            self.lines += 1
            elapsed = now - self.t0
            if left is None and self.total is not None:
                left = self.total - self.done
            head = f"{self.what}: {self.done}" + (f"/{self.total}" if self.total else "") \
                + (f" {self.unit}" if self.unit else "")
            parts = [head] + ([note] if note else []) + [f"{duration(elapsed)} elapsed"]
            if left is not None and self.done > 0:
                parts.append(f"about {duration(max(left, 0) * elapsed / self.done)} left")
            log.info(", ".join(parts))
