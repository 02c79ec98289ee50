"""``python -m rffbench.report SWEEP_DIR`` and the ``rffbench-report`` command: the
arguments, the one-line errors and the exit codes (0 complete, 1 incomplete, 2 nothing to
report) around :func:`.driver.make_report`."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import RffbenchError, os_error_text
from .driver import make_report


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m rffbench.report",
                                 description="Report a sweep directory: index.html, summary.md, "
                                             "results.csv, jobs.csv, figures. Exit 0: complete; "
                                             "1: incomplete (listed in the report); 2: nothing "
                                             "to report.")
    ap.add_argument("sweep_dir")
    ap.add_argument("--out", default=None, help="report directory (default SWEEP_DIR/report)")
    ap.add_argument("--tail-D", type=int, default=None,
                    help="only this D in the empirical-tail figure (default: every D)")
    ap.add_argument("--delta", type=float, default=None,
                    help="only this delta in the bound figures (default: every recorded delta)")
    ap.add_argument("--no-pdf", action="store_true", help="PNG only")
    ap.add_argument("--tables", choices=["latex", "none"], default=None,
                    help="latex: also write each table as report/latex/NAME.tex (booktabs; "
                         "each value with its interval; bold: the best map and those not "
                         "significantly different from it, by Welch's t); none: no LaTeX "
                         "files (default: as the runs' report.latex, plain unless set)")
    ap.add_argument("--latex-numbers", choices=["plain", "siunitx"], default=None,
                    help="numbers in the LaTeX tables as written (plain) or as \\num{} "
                         "(siunitx); default: as the runs' report.latex")
    args = ap.parse_args(argv)
    try:
        os.getcwd()
    except OSError as exc:
        print(f"rffbench report: error: the working directory is gone ({exc.strerror}: "
              "deleted?); cd to an existing directory", file=sys.stderr)
        return 2
    try:
        rep = make_report(args.sweep_dir, args.out, args.tail_D, args.delta,
                          pdf=not args.no_pdf,
                          latex="none" if args.tables == "none" else (
                              args.latex_numbers or ("plain" if args.tables else None)))
    except RffbenchError as exc:
        print(f"rffbench report: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"rffbench report: error: {os_error_text(exc, 'cannot write the report')}",
              file=sys.stderr)
        return 2
    print(f"rffbench report: {rep.index} ({rep.status_line})")
    if rep.latex:
        print(f"rffbench report: {len(rep.latex)} LaTeX tables in {rep.latex[0].parent}")
    for line in rep.problem_lines():
        print(f"rffbench report: {line}", file=sys.stderr)
    return 0 if rep.complete else 1
