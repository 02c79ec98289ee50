"""Collect a sweep directory: its runs (with their records and configs), its expected jobs.

* **Runs.**  Every run directory under the root (``runs/<run_id>/`` of a sweep,
  a single run's directory, nested sweeps too): ``records.csv`` read and
  checked by :func:`rffbench.results.read_records`, ``config.json`` (the
  resolved config, flattened to dotted keys), and a status:

  ``complete`` (records, and its manifest's digests where it has one), ``failed`` (``error.txt``:
  its line), ``damaged`` or
  ``outdated`` (a records file that cannot be trusted: the reason and path),
  ``running`` (claimed by a live process), ``interrupted`` (Ctrl-C, or a
  claim whose process is gone), ``incomplete`` (none of these).
* **Jobs.**  Each ``multirun.yaml`` (Hydra writes it at a sweep's start) is
  expanded into the jobs of that sweep's command, exactly as Hydra's basic
  sweeper does; the job tickets (``.jobs/``) say which run each job led to.
  A job without a ticket never started: ``missing``.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import RffbenchError, first_line
from ..progress import Progress
from ..readers import MAX_YAML_BYTES, DamagedFile, open_regular, read_json, read_text, yaml_nodes
from ..results import ERROR_FILE, RECORDS_FILE, DamagedRecords, read_records
from ..store import (
    CLAIM_FILE,
    CONFIG_FILE,
    CONFIG_SHAPE,
    INTERRUPTED_FILE,
    JOBS_DIR,
    MANIFEST_FILE,
    RUNS_DIR,
    SET_ASIDE_DIR,
    SweepStore,
    check_entry,
    count_jobs,
    holder_alive,
    job_key,
    read_claim,
)

MULTIRUN_FILE = "multirun.yaml"
#: the most jobs a multirun.yaml is expanded into (each is listed in the report): a sweep
#: of thousands is expanded, an edited file asking for millions is not
MAX_JOBS = 50_000
#: the first line of a failed run's error.txt, at most this many bytes of it
ERROR_LINE_BYTES = 4096
REPORT_DIR = "report"
_MARKERS = {RECORDS_FILE, CONFIG_FILE, CLAIM_FILE, ERROR_FILE, INTERRUPTED_FILE}
#: statuses that make a sweep incomplete
BAD = ("failed", "damaged", "outdated", "running", "interrupted", "incomplete", "missing")


class ReportError(RffbenchError):
    pass


@dataclass
class Run:
    path: Path
    run_id: Optional[str]
    status: str
    reason: str = ""
    config: Optional[dict] = None  # flattened dotted keys
    overrides: list = field(default_factory=list)
    records: object = None  # DataFrame when complete


@dataclass
class Job:
    sweep: str  # sweep dir relative to the root
    index: int
    overrides: list
    run_id: Optional[str]
    status: str
    reason: str = ""


@dataclass
class Sweep:
    path: str  # relative to the root
    overrides: list  # the command's overrides
    params: dict  # hydra.sweeper.params (a preset's sweep)
    launcher: str
    sweeper: str
    n_jobs: Optional[int]  # None: the jobs could not be expanded
    note: str = ""


@dataclass
class Collection:
    root: Path
    runs: list
    jobs: list
    sweeps: list

    @property
    def complete_runs(self):
        return [r for r in self.runs if r.status == "complete"]


def flatten(d, prefix=""):
    """{"a": {"b": 1}} -> {"a.b": 1}; lists become JSON text."""
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        elif isinstance(v, (list, tuple)):
            out[key] = json.dumps(list(v))
        else:
            out[key] = v
    return out


def _run_dirs(root):
    """Directories under ``root`` that hold a run (any of its marker files)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root).parts
        if REPORT_DIR in rel or JOBS_DIR in rel or SET_ASIDE_DIR in rel:
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if d not in (".hydra", JOBS_DIR, SET_ASIDE_DIR)]
        names = set(filenames) & _MARKERS
        if not names:
            continue
        in_store = len(rel) >= 2 and rel[-2] == RUNS_DIR
        # an old-layout job dir with only error.txt is not a run (its job is listed instead)
        if in_store or names & {RECORDS_FILE, CONFIG_FILE, CLAIM_FILE}:
            found.append(Path(dirpath))
    return sorted(found)


def read_run(path):
    """A :class:`Run` for one run directory."""
    cfg_blob = None
    own_id = path.name if path.parent.name == RUNS_DIR else None
    cf = path / CONFIG_FILE
    if cf.exists():
        try:
            cfg_blob = read_json(cf, CONFIG_SHAPE)
        except OSError as exc:
            return Run(path, own_id, "damaged", f"{cf}: not readable ({exc.strerror or exc})")
        except DamagedFile as exc:
            return Run(path, own_id, "damaged", (f"{cf}: not a run's config" if exc.other_shape
                                                 else str(exc)) + " (a JSON object with "
                       "run_id, overrides: a list of strings, config: an object)")
    rid = (cfg_blob or {}).get("run_id") or (path.name if path.parent.name == RUNS_DIR else None)
    if cfg_blob is None and own_id is not None and (path / RECORDS_FILE).exists():
        # a sweep writes every run's config.json before it measures: without it the run's
        # conditions are unknown, and drawn with others its records would be pooled by guess
        return Run(path, own_id, "damaged", f"{cf}: missing: the run's conditions are unknown, "
                   "so its records are left out; the sweep's command run again restores it")
    config = flatten(cfg_blob["config"]) if cfg_blob and "config" in cfg_blob else None
    overrides = (cfg_blob or {}).get("overrides", [])
    run = Run(path, rid, "incomplete", config=config, overrides=overrides)
    rec = path / RECORDS_FILE
    if rec.exists():
        try:
            df = read_records(rec, run_id=rid if path.parent.name == RUNS_DIR else None)
        except DamagedRecords as exc:
            run.status, run.reason = exc.status, f"{rec}: {exc.reason}"
            return run
        # records that parse may still be cut at a line's end or edited: the digests
        state, why = (check_entry(path, rid, RECORDS_FILE)
                      if (path / MANIFEST_FILE).exists() and rid else ("ok", None))
        if state != "ok":  # the next run of its sweep sets it aside and makes it again
            run.status, run.reason = "damaged", f"{path}: {why}"
            return run
        run.run_id = run.run_id or str(df.run_id.iloc[0])
        run.status, run.records = "complete", df
        return run
    claim = path / CLAIM_FILE
    holder, mtime = read_claim(claim)
    if holder is not None:
        who = f"pid {holder.get('pid')} on {holder.get('host')}"
        if holder_alive(holder, mtime):
            run.status, run.reason = "running", f"claimed by {who}"
        else:
            run.status, run.reason = "interrupted", (f"claimed by {who}, which is gone (killed?); "
                                                     "resumable")
        return run
    err = path / ERROR_FILE
    if err.exists():
        try:  # its first line, at most ERROR_LINE_BYTES of it
            with open_regular(err) as fh:
                head = fh.read(ERROR_LINE_BYTES).decode("utf-8", "replace")
        except OSError as exc:
            head = f"(error.txt not readable: {exc.strerror or exc})"
        except DamagedFile as exc:
            head = f"(error.txt not readable: {exc.reason})"
        lines = head.strip().splitlines()
        run.status, run.reason = "failed", lines[0] if lines else "failed (empty error.txt)"
        return run
    if (path / INTERRUPTED_FILE).exists():
        run.status, run.reason = "interrupted", "stopped by Ctrl-C; resumable"
        return run
    run.reason = "no records, no error and no claim: stopped before it finished"
    return run


def expand_jobs(multirun_file):
    """(Sweep, list of override lists) of a ``multirun.yaml``: the jobs Hydra's basic
    sweeper launches for it (None when they cannot be expanded: an unreadable or damaged
    file, another sweeper, more than MAX_JOBS jobs)."""
    from omegaconf import DictConfig, OmegaConf

    rel = str(Path(multirun_file).parent)
    try:  # bounded: size, UTF-8, the nodes its aliases expand to (rffbench.readers)
        text = read_text(multirun_file, MAX_YAML_BYTES)
        yaml_nodes(text, multirun_file)
        h = OmegaConf.create(text).hydra
        overrides = [str(o) for o in (OmegaConf.select(h, "overrides.task") or [])]
        params = OmegaConf.select(h, "sweeper.params")
        params = OmegaConf.to_container(params) if isinstance(params, DictConfig) else {}
    except DamagedFile as exc:
        return Sweep(rel, [], {}, "", "", None, note=f"{exc}: expected jobs unknown"), None
    except Exception as exc:  # not Hydra's file, edited, cut
        return Sweep(rel, [], {}, "", "", None, note=f"{multirun_file}: unreadable "
                     f"({type(exc).__name__}: {first_line(exc)}): "
                     "expected jobs unknown"), None
    params = {str(k): str(v) for k, v in (params or {}).items()}
    launcher = str(OmegaConf.select(h, "launcher._target_") or "").rsplit(".", 1)[-1]
    sweeper = str(OmegaConf.select(h, "sweeper._target_") or "").rsplit(".", 1)[-1]
    sweep = Sweep(rel, overrides, params, launcher, sweeper, None)
    if sweeper != "BasicSweeper":
        sweep.note = f"the {sweeper} chooses its jobs as it runs: expected jobs unknown"
        return sweep, None
    try:
        from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
        from hydra.core.override_parser.overrides_parser import OverridesParser

        parsed = OverridesParser.create().parse_overrides(
            [f"{k}={v}" for k, v in params.items()] + overrides)
        n = count_jobs(parsed)
        if n > MAX_JOBS:
            sweep.note = (f"the sweep asks for {n:,} jobs, more than a report lists "
                          f"({MAX_JOBS:,}): expected jobs unknown (the runs found are reported)")
            return sweep, None
        jobs = BasicSweeper.split_arguments(parsed, None)[0]
    except Exception as exc:  # glob() sweeps need the config loader, ...
        sweep.note = f"cannot expand the sweep's jobs ({type(exc).__name__}: {exc})"
        return sweep, None
    sweep.n_jobs = len(jobs)
    return sweep, jobs


def collect(root):
    """A :class:`Collection` of everything under ``root``."""
    root = Path(root)
    if not root.is_dir():
        raise ReportError(f"{root}: no such directory")
    dirs = _run_dirs(root)
    progress = Progress("report: reading runs", len(dirs), "runs")
    runs = []
    for p in dirs:
        runs.append(read_run(p))
        progress.step()
    by_id = {}
    for r in runs:
        if r.run_id is not None:
            # one identity twice (copied directories): a complete copy wins
            if r.run_id not in by_id or (by_id[r.run_id].status != "complete"
                                         and r.status == "complete"):
                by_id[r.run_id] = r
    runs = [r for r in runs if r.run_id is None or by_id.get(r.run_id) is r]
    by_overrides = {job_key(r.overrides): r for r in runs if r.overrides}
    sweeps, jobs = [], []
    for mf in sorted(root.rglob(MULTIRUN_FILE)):
        if REPORT_DIR in mf.relative_to(root).parts:
            continue
        sweep, expected = expand_jobs(mf)
        sweep.path = str(mf.parent.relative_to(root)) or "."
        sweeps.append(sweep)
        if expected is None:
            continue
        tickets, damaged = SweepStore(mf.parent).tickets()
        for i, ov in enumerate(expected):
            key = job_key(ov)
            t = tickets.get(key)
            if t is None and key in by_overrides:  # its ticket is gone or damaged: the run
                r = by_overrides[key]  # that recorded these overrides is the job's
                why = damaged.get(key, "its ticket is missing")
                jobs.append(Job(sweep.path, i, ov, r.run_id, r.status,
                                (r.reason + "; " if r.reason else "") + f"found by its "
                                f"overrides ({why})"))
            elif t is None and key in damaged:
                jobs.append(Job(sweep.path, i, ov, None, "damaged", damaged[key]))
            elif t is None:
                jobs.append(Job(sweep.path, i, ov, None, "missing", "never started"))
            elif t.get("error"):
                jobs.append(Job(sweep.path, i, ov, None, "failed", t["error"]))
            else:
                r = by_id.get(t.get("run_id"))
                if r is None:
                    jobs.append(Job(sweep.path, i, ov, t.get("run_id"), "missing",
                                    "started, but its run directory is gone"))
                else:
                    jobs.append(Job(sweep.path, i, ov, r.run_id, r.status, r.reason))
    if not runs and not jobs:
        raise ReportError(f"{root}: no runs found (no {RECORDS_FILE}, no {CONFIG_FILE}, no "
                          f"{MULTIRUN_FILE})")
    return Collection(root, runs, jobs, sweeps)


def run_identity(records):
    """The identity columns of a run's records (its first row)."""
    row = records.iloc[0]
    return {k: row[k] for k in ("dataset", "d", "kernel", "lengthscale", "n_train",
                                "features", "n_freq", "seed")}
