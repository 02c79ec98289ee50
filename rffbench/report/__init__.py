"""Sweep report: what was run, what is missing, every figure with its caption, the tables.

    python -m rffbench.report SWEEP_DIR [--out DIR] [--tail-D D] [--delta X] [--no-pdf]

(also run at the end of every multirun by :class:`rffbench.launch.RffbenchCallback`).

* :mod:`.collect` finds every run under SWEEP_DIR (``runs/<run_id>/``, single
  run directories, nested sweeps) with its status, and expands each
  ``multirun.yaml`` into the jobs its command asked for: a job that never
  ran is ``missing``; a records file cut mid-line, with wrong types or an
  unknown schema value is ``damaged`` (with its path), never half-read.
* :mod:`.grouping` decides, once for every figure and table, what is a panel,
  a line, a table row or a separate file: every condition that varies except
  the seed.  :mod:`.figures` and :mod:`.tables` draw from that grouping only.
* Written into the report directory (default SWEEP_DIR/report):
  ``index.html`` (one self-contained page: what was run, job counts, problems,
  every figure with its caption, the tables, the environment), ``summary.md``
  (the same in Markdown), ``results.csv`` (every record of every complete run
  with its conditions), ``jobs.csv`` (every run and expected job with its
  status) and the figures as PNG (and PDF).

Exit codes: 0 complete; 1 incomplete (failed, missing, interrupted, running or
damaged runs: listed in the report); 2 nothing to report (no such directory,
no run at all).
"""
from .cli import main
from .collect import ReportError, collect
from .driver import Report, make_report

__all__ = ["make_report", "main", "Report", "ReportError", "collect"]
