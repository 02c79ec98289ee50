"""Threads per job under Hydra launchers, so parallel jobs never oversubscribe.

``threads_per_job(launcher_cfg)``: the cores of this machine (or the SLURM
allocation) divided by the number of jobs the launcher runs at once, at least
1.  joblib: ``n_jobs`` (-1 or null = one job per core); submitit: the job's
``cpus_per_task``; ray: ``num_cpus`` in its remote options; the basic
launcher runs one job at a time (all cores).  Used only when ``threads`` is
null; the value is recorded in every record's ``threads`` column.
"""
from __future__ import annotations

import os


def cores():
    for var in ("SLURM_CPUS_PER_TASK", "NUMBA_NUM_THREADS"):
        v = os.environ.get(var)
        if v and v.isdigit() and int(v) > 0:
            return int(v)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def threads_per_job(launcher):
    """Threads for one job of a multirun launched by ``launcher`` (its config node)."""
    get = launcher.get if hasattr(launcher, "get") else (lambda k, d=None: d)
    target = str(get("_target_", "") or "")
    n = cores()
    if "joblib" in target.lower():
        jobs = get("n_jobs", -1)
        jobs = n if jobs in (None, -1) or jobs <= 0 else int(jobs)
        return max(1, n // jobs)
    if "submitit" in target.lower():
        cpus = get("cpus_per_task", None)
        return max(1, int(cpus)) if cpus else 1
    if "ray" in target.lower():
        opts = get("ray", {}) or {}
        remote = opts.get("remote", {}) if hasattr(opts, "get") else {}
        cpus = remote.get("num_cpus") if hasattr(remote, "get") else None
        return max(1, int(cpus)) if cpus else 1
    return n
