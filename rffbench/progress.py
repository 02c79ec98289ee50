"""Progress of long loops (trials, chunks) through logging, thread-safe.

``Progress(what, total)``; ``step()`` after each item logs at every 10% of a
loop of at least ``MIN_ITEMS`` items that has run for ``MIN_SECONDS`` so far,
so short loops stay quiet and long ones report how far they are and the rate.
"""
from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("rffbench.progress")

MIN_ITEMS = 20
MIN_SECONDS = 2.0


class Progress:
    def __init__(self, what, total):
        self.what = what
        self.total = total
        self.done = 0
        self.next_tenth = 1
        self.t0 = time.perf_counter()
        self.lock = threading.Lock()

    def step(self, n=1):
        if self.total < MIN_ITEMS:
            return
        with self.lock:
            self.done += n
            if self.done * 10 < self.next_tenth * self.total:
                return
            self.next_tenth = self.done * 10 // self.total + 1
            elapsed = time.perf_counter() - self.t0
            if elapsed >= MIN_SECONDS:
                log.info("%s: %d/%d (%.0f%%) in %.1f s", self.what, self.done, self.total,
                         100.0 * self.done / self.total, elapsed)
