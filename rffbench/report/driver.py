"""The report driver: :func:`make_report` collects a sweep (:mod:`.collect`), decides its
status, draws every figure and table of the catalog (:mod:`.catalog`) and writes the page,
the summary and the CSV files atomically (the package's docstring says what each holds);
:class:`Report` is what it found and wrote."""
from __future__ import annotations

import datetime as _dt
import logging
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..progress import Progress
from ..results import write_atomic, write_file_atomic
from ..store import write_text_atomic
from .catalog import all_figures, all_tables
from .collect import ReportError, collect
from .figures import STYLE, FigContext, plt
from .grouping import attach_conditions, fmt, summarising, with_added_defaults
from .intervals import coverage_words
from .latex import write_latex
from .render import render_html, render_markdown
from .reproductions import reproduction_sections

log = logging.getLogger(__name__)

#: problems listed on the page, in the summary and on the terminal (jobs.csv has them all)
PROBLEMS_SHOWN = 50


@dataclass
class Report:
    out: Path
    index: Path
    summary: Path
    complete: bool
    counts: Counter
    problems: list = field(default_factory=list)  # (status, what, reason)
    earlier: Counter = field(default_factory=Counter)  # runs not among the expected jobs
    figures: list = field(default_factory=list)  # Drawn (closed)
    skipped: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    latex: list = field(default_factory=list)  # the LaTeX tables written (paths)
    reproductions: list = field(default_factory=list)  # reproductions.Section
    center: str = "mean"  # report.center of the runs
    notes: list = field(default_factory=list)

    @property
    def status_line(self):
        parts = ", ".join(f"{v} {k}" for k, v in sorted(self.counts.items()))
        return ("complete" if self.complete else "INCOMPLETE") + (f": {parts}" if parts else "")

    def shown_problems(self):
        """(the first PROBLEMS_SHOWN problems, a line on the others or ''): what the
        page, the summary and the terminal list; jobs.csv lists every one."""
        rest = self.problems[PROBLEMS_SHOWN:]
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(Counter(p[0] for p in rest).items()))
        more = "" if not rest else (f"... and {len(rest)} more ({kinds}): "
                                    f"{self.out / 'jobs.csv'} lists every job and run")
        return self.problems[:PROBLEMS_SHOWN], more

    def problem_lines(self):
        shown, more = self.shown_problems()
        return [f"{status}: {what}: {reason}" for status, what, reason in shown] + \
            ([more] if more else [])


# --------------------------------------------------------------------------
# status of the sweep
# --------------------------------------------------------------------------
def _status(col):
    """(job counts, counts of the runs not among the jobs, problems, complete, jobs table)
    of a :class:`Collection`."""
    import pandas as pd

    root = col.root
    rows, problems = [], []
    expected_runs = set()
    for j in col.jobs:
        expected_runs.add(j.run_id)
        rows.append(dict(kind="job", sweep=j.sweep, job=j.index, status=j.status,
                         run_id=j.run_id or "", overrides=" ".join(j.overrides),
                         path="", reason=j.reason))
        if j.status != "complete":
            problems.append((j.status, f"job {j.index} of sweep {j.sweep} ("
                             + (" ".join(j.overrides) or "no overrides") + ")", j.reason))
    counts = Counter(j.status for j in col.jobs)
    earlier = Counter()
    for r in col.runs:
        rel = os.path.relpath(r.path, root)
        expected = r.run_id in expected_runs
        rows.append(dict(kind="run", sweep="", job="", status=r.status, run_id=r.run_id or "",
                         overrides=" ".join(r.overrides), path=rel, reason=r.reason))
        if expected:
            continue
        earlier[r.status] += 1
        if r.status in ("damaged", "outdated") or (not col.jobs and r.status != "complete"):
            problems.append((r.status, f"run {r.run_id or ''} ({rel})", r.reason))
    if not col.jobs:  # no multirun.yaml: the runs found are the sweep
        counts = Counter(r.status for r in col.runs)
    damaged = any(r.status in ("damaged", "outdated") for r in col.runs)
    complete = not damaged and all(s == "complete" for s in counts.elements()) and \
        sum(counts.values()) > 0
    jobs = pd.DataFrame(rows, columns=["kind", "sweep", "job", "status", "run_id", "overrides",
                                       "path", "reason"])
    return counts, earlier, problems, complete, jobs


# --------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------
def _save(fig, path, fmt_, dpi):
    write_file_atomic(path, lambda tmp: fig.savefig(tmp, format=fmt_, dpi=dpi))


def make_report(sweep_dir, out_dir=None, tail_D=None, delta=None, pdf=True, dpi=110,
                tables=True, latex=None):
    """Write the report of ``sweep_dir``; returns a :class:`Report`.

    Parameters
    ----------
    sweep_dir : str or Path
        The sweep's folder (or a folder of runs).
    out_dir : str, Path or None, default None
        Where the report goes (None: ``sweep_dir/report``).
    tail_D : int or None, default None
        The D of the bounds' tail figure (None: the largest recorded).
    delta : float or None, default None
        The failure probability of the bounds shown (None: the runs' one).
    pdf : bool, default True
        Also write each figure as PDF.
    dpi : int, default 110
        Resolution of the PNG figures.
    tables : bool, default True
        Write the summary tables.
    latex : str or None, default None
        Also each table as ``latex/NAME.tex``, numbers "plain" or "siunitx" (.latex);
        "none": no LaTeX files; None: as the runs' ``report.latex`` (default plain).

    Returns
    -------
    Report
    """
    import pandas as pd

    root = Path(sweep_dir)
    col = collect(root)
    out = Path(out_dir) if out_dir else root / "report"
    counts, earlier, problems, complete, jobs = _status(col)
    good = col.complete_runs
    # a run whose configuration cannot be read among runs whose can: pooled by the columns
    # it has, it would be a guess; left out, named with its reason
    unknown = [r for r in good if r.config is None]
    if unknown and len(unknown) < len(good):
        good = [r for r in good if r.config is not None]
        complete = False
        for r in unknown:
            problems.append(("left out", f"run {r.run_id} ({os.path.relpath(r.path, root)})",
                             "complete records but no readable config.json: its conditions "
                             "are unknown, so it is drawn with no other run (pooling it "
                             "would be a guess); left out of the figures and tables"))
    if good:  # before anything is written: a question no run can answer is one line
        check_asked(pd.concat([r.records for r in good], ignore_index=True), delta, tail_D)
    out.mkdir(parents=True, exist_ok=True)
    rep = Report(out, out / "index.html", out / "summary.md", complete, counts, problems,
                 earlier)
    if good:
        df = pd.concat([r.records for r in good], ignore_index=True)
        df, origins = attach_conditions(df, good)
        configs = {r.run_id: with_added_defaults(r.config) for r in good
                   if r.config is not None} or None
        ctx = FigContext(df, origins, {r.run_id: r.path for r in good}, delta=delta,
                         tail_D=tail_D, configs=configs)
        interval = _summarised_by(ctx, df, rep, configs)
        with summarising(rep.center, {r.run_id: r.config and with_added_defaults(r.config)
                                      for r in good}, interval):
            rep.reproductions = reproduction_sections(ctx, good)
            rep.tables = all_tables(df, origins)
            _draw(rep, ctx, out, pdf, dpi)
            latex = latex or _runs_setting(ctx, df, rep, "latex")
            if latex != "none":
                rep.latex = write_latex(rep.tables, out / "latex", latex)
    else:
        df = None
        rep.skipped.append("every figure: no complete run")
    if tables:
        if df is not None:
            write_atomic(with_varies(df), out / "results.csv")
        write_atomic(jobs, out / "jobs.csv")
    env = _environment(df)
    write_text_atomic(rep.summary, render_markdown(rep, col, env))
    write_text_atomic(rep.index, render_html(rep, col, env))
    return rep


def _summarised_by(ctx, df, rep, configs):
    """Sets rep.center from the runs' report.center and returns (method, level, resamples)
    of their report.interval, .level, .resamples (each the default where they disagree);
    the notes say where they disagree and where the interval's measured coverage at the
    points' numbers of seeds is outside its band."""
    rep.center = _runs_setting(ctx, df, rep, "center")
    interval = tuple(_runs_setting(ctx, df, rep, key)
                     for key in ("interval", "level", "resamples"))
    if rep.center == "mean":
        warning = coverage_words(interval[0], interval[1], _seed_counts(configs))[1]
        if warning:
            rep.notes.append(warning)
    return interval


def _seed_counts(configs):
    """The numbers of seeds the points of a report pool: per configuration but its seed,
    how many runs (read from their configs)."""
    points = Counter(repr(sorted((k, repr(v)) for k, v in c.items() if k != "seed"))
                     for c in (configs or {}).values())
    return sorted(set(points.values()))


def _runs_setting(ctx, df, rep, key):
    """The runs' report.``key`` (its default where they disagree, said in the notes)."""
    from ..config import ReportConfig

    default = getattr(ReportConfig(), key)
    values = ctx.config_values(df.run_id, f"report.{key}", default)
    if len(values) > 1:
        rep.notes.append(f"the runs disagree on report.{key}: the default {default} is used")
    return next(iter(values)) if len(values) == 1 else default


def check_asked(df, delta=None, tail_D=None):
    """ReportError (one line naming what the runs do have) when the report is asked for a
    ``--delta`` or a ``--tail-D`` that no run recorded."""
    import numpy as np

    sup = df[(df.measurement == "bounds") & (df.metric == "eps_empirical")]
    if delta is not None:
        have = sorted(set(sup.delta.dropna()))
        if not np.isclose(have, delta).any():
            raise ReportError(f"--delta {delta:g}: no run recorded it; " + (
                f"the runs recorded delta {', '.join(fmt(v) for v in have)}" if have else
                "no run recorded bounds (measure.bounds.enabled=true records them)"))
    if tail_D is not None:
        have = sorted(set(sup.D.dropna().astype(int)))
        if tail_D not in have:
            raise ReportError(f"--tail-D {tail_D}: no run recorded bounds at D={tail_D}; " + (
                f"the runs recorded them at D = {', '.join(map(str, have))}" if have else
                "no run recorded bounds (measure.bounds.enabled=true records them)"))


def with_varies(df):
    """``df`` with a ``varies`` column: '' where a value is the same bits for the same
    config and seed, 'measured' (a time or memory) or 'threads' (its last bits depend on
    the thread count): each measurement's :meth:`~rffbench.measure.Measurement.varies`."""
    from ..measure import measurement_classes

    classes = measurement_classes()
    cache = {}

    def kind(m, metric):
        if (m, metric) not in cache:
            cls = classes.get(m)
            v = cls().varies(metric) if cls is not None else None
            cache[m, metric] = v[0] if v else ""
        return cache[m, metric]

    out = df.copy()
    out["varies"] = [kind(m, k) for m, k in zip(df.measurement, df.metric)]
    return out


def _draw(rep, ctx, out, pdf, dpi):
    p = plt()
    made = set()

    def save(d):
        _save(d.fig, out / f"{d.name}.png", "png", dpi)
        made.add(f"{d.name}.png")
        if pdf:
            _save(d.fig, out / f"{d.name}.pdf", "pdf", dpi)
            made.add(f"{d.name}.pdf")
        p.close(d.fig)
        d.fig = None

    with p.rc_context(STYLE):
        for sec in rep.reproductions:
            for d in sec.figures:
                save(d)
            for name, frame in sec.files:
                write_atomic(frame, out / name)
        figures = all_figures()
        progress = Progress("report: drawing", len(figures), "figure specs")
        for name, fn in figures.items():
            try:
                drawn, why = fn(ctx)
            except Exception as exc:  # a bug: the figure is listed as failed, the report goes on
                log.debug("figure %s failed", name, exc_info=True)
                drawn, why = [], f"{name}: failed to draw ({type(exc).__name__}: {exc})"
            if not drawn:
                rep.skipped.append(why)
            for d in drawn:
                save(d)
                rep.figures.append(d)
            progress.step()
    for f in list(out.glob("*.png")) + list(out.glob("*.pdf")):  # figures of an older report
        stem = f.stem.split("__")[0]
        if f.name not in made and (stem in figures or stem.startswith("reproduction_")):
            f.unlink()


def _environment(df):
    """[(name, text)] of the runs' environment: each distinct value with its run count."""
    import matplotlib
    import pandas as pd

    rows = []
    if df is not None:
        runs = df.drop_duplicates("run_id")
        for col in ("rffbench", "numba", "numpy", "scipy", "sklearn", "threads", "blas", "cpu",
                    "runtime_env", "git_sha"):
            vc = runs[col].fillna("").astype(str).value_counts()
            text = "; ".join(f"{fmt(v) if v else '(none)'}" + (f" ({n} runs)" if len(vc) > 1
                                                                else "") for v, n in vc.items())
            rows.append((col, text))
        dates = pd.to_datetime(runs.date, errors="coerce").dropna()
        if len(dates):
            rows.append(("run dates", f"{dates.min()} to {dates.max()}"))
    import hydra

    rows.append(("report made with", f"python {sys.version.split()[0]}, pandas {pd.__version__}, "
                                      f"matplotlib {matplotlib.__version__}, hydra "
                                      f"{hydra.__version__}, on "
                                      f"{_dt.datetime.now().isoformat(timespec='seconds')}"))
    return rows
