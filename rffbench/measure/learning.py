"""Learning: the model on random features against exact kernel ridge, same split.

Rahimi & Recht's Table 1 question for any kernel, map, D and dataset: how
close does the feature model get to the exact kernel machine's test error,
and how much faster does it train.

* The feature model is ``model.name`` (``ridge`` or ``sgd``, rffbench.models);
  the baseline is ``exact_krr`` (rffbench.exact) with the same kernel.
  ``model.lam`` fixes lambda for both; ``auto`` picks, for each model, the
  best of ``model.lam_grid`` on a seeded validation split of the training set
  (``model.val_size``) and then refits on the whole training set.
* Exact KRR is skipped, with the reason in ``note``, above
  ``model.exact_max_n`` training rows or when its n x n matrices would not fit
  in the available memory; when the user asked for it by a key of their own
  (``model.exact_solver``, ``model.precond_rank``, a raised ``exact_max_n``) a
  run that cannot fit it is refused instead, naming that key.
* Metrics: ``test_error_rate`` (classification) or ``test_rmse`` and
  ``test_rel_rmse`` = RMSE / std(y_test) (regression); ``train_time_s`` (map
  fit + features + accumulate + solve, or Gram + factor + solve),
  ``map_time_s``, ``gram_time_s``, ``solve_time_s``, ``predict_time_s`` (test
  features + product, or K(test, train) alpha), ``lambda``, ``peak_rss_mb``
  (the process's peak resident memory so far, VmHWM).  A fit or predict
  that takes less than ``measure.learning.cheap_s`` is repeated
  ``measure.learning.repeats`` times and the median kept (``spread`` = max -
  min); numba is warmed up before any timing.
"""
from __future__ import annotations

import logging
import resource
import time
import warnings
from dataclasses import asdict, dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .. import memory
from ..checks import MAX_REPEATS, Int, Real, check_constraints
from ..clock import Timing, clean_call
from ..errors import ConfigError, RffbenchError
from ..exact import (
    CG_DEFAULTS,
    CHOLESKY_AUTO_MAX_N,
    ExactKRR,
    check_cg_unused,
    choose_solver,
    fused_product,
    not_converged_text,
    prepared_times,
)
from ..exact import select_lambda as exact_select_lambda
from ..memory import Need
from ..models import MODELS, chunk_rows, decode, encode_targets
from ..results import record
from ..runid import block_identity
from ..stream import subset
from .base import Measurement
from .workers import UNSTABLE_RATIO, time_in_processes, unsendable

log = logging.getLogger(__name__)


@dataclass
class LearningConfig:
    """measure.learning: train/test error and time of the model on features vs exact KRR."""

    enabled: bool = True
    #: also fit exact kernel ridge (skipped with a note above model.exact_max_n)
    exact: bool = True
    #: a fit faster than cheap_s seconds is repeated this many times (median kept)
    repeats: int = 3
    #: ... when the fit took less than this many seconds
    cheap_s: float = 2.0
    #: > 1: train_time_s and predict_time_s are timed again in this many worker
    #: processes (started once per command), one after the other
    #: (rffbench.measure.workers; each fit as many times as in the run); the records
    #: keep the median of their medians, their range and whether they differ by more
    #: than unstable_ratio.  1: the run's own process only
    processes: int = 1
    #: per-process medians further apart than this (max / min) mark a time unstable
    unstable_ratio: float = UNSTABLE_RATIO

    constraints = {"repeats": Int(1, MAX_REPEATS),
                   "cheap_s": Real(ge=0, text="use a number of seconds >= 0"),
                   "processes": Int(1, 100), "unstable_ratio": Real(gt=1.0, le=100.0)}

    def __post_init__(self):
        check_constraints(self, "measure.learning")


def peak_rss_mb():
    """Peak resident memory of this process image so far, MiB: VmHWM where /proc has it
    (ru_maxrss also counts the parent's RSS when a process was forked from a big one)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _split(ctx, n, val_size):
    perm = ctx.rng("learning-validation").permutation(n)
    n_val = max(1, int(round(val_size * n)))
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def exact_solver(ctx):
    """'cholesky' or 'cg': model.exact_solver with auto resolved for this run
    (exact.choose_solver, given whether the Cholesky's matrices fit in memory)."""
    return choose_solver(ctx.cfg.model.exact_solver, ctx.data.X_train.shape[0],
                         _cholesky_bytes(ctx) <= _budget(), device=ctx.device)


def _budget():
    avail = memory.available_bytes()
    return float("inf") if avail is None else memory.MEMORY_FRACTION * avail


def _exact_bytes(ctx, solver, rank=None):
    """ExactKRR.memory_bytes for this run's data and model block (``rank``: the cg
    preconditioner's, default model.precond_rank or its default)."""
    m, n = ctx.cfg.model, ctx.data.X_train.shape[0]
    auto = m.lam == "auto"
    return ExactKRR.memory_bytes(
        n, ctx.data.d, n_outputs=ctx.data.n_classes, solver=solver,
        fit_rows=n - int(round(m.val_size * n)), n_lams=len(m.lam_grid) if auto else 0,
        precond_rank=rank or m.precond_rank, kernel=ctx.cfg.kernel.name,
        kernel_params=ctx.cfg.kernel.kernel_params())


def _cholesky_bytes(ctx):
    return _exact_bytes(ctx, "cholesky")


def _cg_bytes(ctx, rank=None):
    return _exact_bytes(ctx, "cg", rank)


def exact_plan(ctx):
    """None if exact KRR can run, else the reason it is skipped."""
    m, n = ctx.cfg.model, ctx.data.X_train.shape[0]
    if n > m.exact_max_n:
        return (f"skipped: n_train={n} > model.exact_max_n={m.exact_max_n} (raise it to run "
                f"the exact baseline: Cholesky up to {CHOLESKY_AUTO_MAX_N} rows, conjugate "
                "gradients without the Gram above)")
    solver = exact_solver(ctx)
    need = _cholesky_bytes(ctx) if solver == "cholesky" else _cg_bytes(ctx)
    if need > _budget():
        what = ("the Gram of" if solver == "cholesky" else
                "the cg solver (data + Nystrom preconditioner) at")
        avail = memory.available_bytes()
        return (f"skipped: {what} n_train={n} needs {need / memory.GIB:.3g} GiB, more than "
                f"{memory.MEMORY_FRACTION:.0%} of the {avail / memory.GIB:.3g} GiB available")
    return None


def check_exact_request(ctx):
    """ConfigError when exact KRR cannot fit in memory although the user asked for it by a
    key of their own (model.exact_solver, model.precond_rank, model.exact_max_n), naming
    that key and what fits; with the defaults it is skipped with its reason instead."""
    from ..checks import field_default

    m, n = ctx.cfg.model, ctx.data.X_train.shape[0]
    if n > m.exact_max_n or exact_plan(ctx) is None:
        return
    solver, budget = exact_solver(ctx), _budget()
    gib = memory.GIB
    avail = f"more than {memory.MEMORY_FRACTION:.0%} of the {memory.available_bytes() / gib:.3g} " \
            "GiB available"
    if solver == "cholesky" and m.exact_solver == "cholesky":
        raise ConfigError(f"model.exact_solver='cholesky' is not allowed at n_train={n}: the "
                          f"Gram needs {_cholesky_bytes(ctx) / gib:.3g} GiB, {avail}; use "
                          "model.exact_solver=cg (no Gram) or auto, or a smaller dataset.n")
    if solver == "cg" and m.precond_rank is not None and _cg_bytes(ctx, 1) <= budget:
        lo, hi = 1, min(m.precond_rank, n)  # the largest rank that fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if _cg_bytes(ctx, mid) <= budget else (lo, mid - 1)
        raise ConfigError(f"model.precond_rank={m.precond_rank} is not allowed at n_train={n}: "
                          f"the cg solver needs {_cg_bytes(ctx) / gib:.3g} GiB, {avail}; "
                          f"model.precond_rank <= {lo} fits")
    if m.exact_solver == "cg" or m.exact_max_n != field_default(m, "exact_max_n"):
        key = "model.exact_solver" if m.exact_solver == "cg" else "model.exact_max_n"
        raise ConfigError(f"{key}={getattr(m, key.split('.')[1])!r} is not allowed: it asks for "
                          f"exact KRR at n_train={n}, whose {solver} solver needs "
                          f"{_exact_bytes(ctx, solver) / gib:.3g}"
                          f" GiB, {avail}; use a smaller dataset.n, or leave {key} at its "
                          "default to skip the exact baseline")


def _score_fn(task, y_true):
    if task == "classification":
        return lambda pred: float(np.mean(pred != y_true))
    return lambda pred: float(np.sqrt(np.mean((pred - y_true) ** 2)))


def _choose(grid, errors):
    """Smallest validation error; ties go to the larger lambda.  An error that is a str
    is the reason a lambda has no solution (not positive definite in floating point,
    cg not converged)."""
    ok = [i for i in range(len(grid)) if not isinstance(errors[i], str)]
    if not ok:
        raise RffbenchError(f"model.lam=auto: no lambda of model.lam_grid={list(grid)} has a "
                            f"solution ({errors[0]}); use larger values")
    best = min(ok, key=lambda i: (errors[i], -grid[i]))
    text = ", ".join(f"{g:g}: " + (e if isinstance(e, str) else f"{e:.4g}")
                     for g, e in zip(grid, errors))
    return grid[best], f"auto: validation error by lambda {{{text}}}"


def timed(fn, repeats, cheap_s, probes=()):
    """Run ``fn() -> (result, phases dict)``; repeat when cheap.  Each call is timed with
    numba's compiler idle (rffbench.clock: a call during which numba compiled is timed
    again).  Returns the result and phases (with ``total``) of the median-time call, the
    spread, the count and a note ('' or what was timed again); phases None when numba
    compiled during every attempt of a call."""
    runs, discarded = [], []
    while True:
        (result, phases), t = clean_call(fn, probes)
        discarded += t.discarded
        if t.seconds is None:
            return result, None, None, 0, Timing(None, discarded).note()
        runs.append((t.seconds, result, phases))
        if runs[0][0] >= cheap_s or len(runs) >= repeats:
            break
    runs.sort(key=lambda r: r[0])
    total, result, phases = runs[len(runs) // 2]
    return (result, dict(phases, total=total), runs[-1][0] - runs[0][0], len(runs),
            Timing(total, discarded).note())


def _metric_rows(method, task, pred, y_test, note=""):
    if task == "classification":
        return [record("learning", "test_error_rate", float(np.mean(pred != y_test)),
                       method=method, note=note)]
    rmse = float(np.sqrt(np.mean((pred - y_test) ** 2)))
    sd = float(np.std(y_test))
    why = "test RMSE / std(y_test)" if sd > 0 else (
        "undefined: std(y_test) = 0 (" + ("a single test row" if y_test.size == 1 else
                                          f"the {y_test.size} test targets are all equal")
        + "); see test_rmse")
    return [record("learning", "test_rmse", rmse, method=method, note=note),
            record("learning", "test_rel_rmse", rmse / sd if sd > 0 else None, method=method,
                   note=why)]


def feature_cell(model, proto, fit_rows, Xtr, target, Xte):
    """The feature model's fit (map fit + features + accumulate + solve) and prediction,
    built in each timing worker (rffbench.measure.workers); warmed up on a few rows here,
    so that numba's code is compiled or loaded before the first timed call."""
    import copy

    few = min(Xtr.shape[0], 64)
    warm = copy.deepcopy(model)
    warm.fit(copy.deepcopy(proto).fit(fit_rows), Xtr[:few], target[:few])
    warm.predict(Xte[:8])

    def fit():
        model.fit(copy.deepcopy(proto).fit(fit_rows), Xtr, target)

    return {"fit": fit, "predict": lambda: model.predict(Xte)}


def exact_cell(model, warm_model, Xtr, Ytr, Xte):
    """Exact KRR's fit and prediction, built in each timing worker (``warm_model``: the same
    solver on a few rows, fitted here first)."""
    few = min(Xtr.shape[0], 64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warm_model.fit(Xtr[:few], Ytr[:few]).predict(Xte[:8])

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # the run records it
            model.fit(Xtr, Ytr)

    return {"fit": fit, "predict": lambda: model.predict(Xte)}


def in_workers(ctx, cfg, cell, kwargs, n_rep):
    """:class:`~rffbench.measure.workers.CellTimes` of ``fit`` and ``predict`` in
    ``measure.learning.processes`` worker processes (``n_rep`` calls each, as many
    as the run's own timing made), or None when the run's own process is all."""
    if cfg.processes <= 1 or not n_rep:
        return None
    log.info("learning: %s timed again in %d worker processes", cell.__name__, cfg.processes)
    return time_in_processes(cell, kwargs, n_rep, processes=cfg.processes, threads=ctx.threads,
                             unstable_ratio=cfg.unstable_ratio, warmups=0)


def worker_rows(method, rows, cells):
    """``rows`` with train_time_s and predict_time_s replaced by the workers' times (the
    median of their medians, their range; the phases stay the run's own, said so), plus
    the ratio of their medians and whether it marks the time unstable."""
    if cells is None:
        return rows
    out = []
    for r in rows:
        for metric, key in (("train_time_s", "fit"), ("predict_time_s", "predict")):
            if r["metric"] == metric and r["method"] == method and r["value"] is not None:
                r = dict(r, value=cells.median(key), spread=cells.spread(key),
                         note=f"{cells.note(key)}; load at the start of each worker: "
                              f"{cells.loads_text()}; in the run's own process: "
                              f"{r['value']:.4g} s ({r['note']})")
                out.append(r)
                out.append(record("learning", metric.replace("_time_s", "_process_ratio"),
                                  cells.ratio(key), method=method,
                                  note=f"max / min of the worker processes' medians of "
                                       f"{metric}"))
                out.append(record("learning", metric.replace("_time_s", "_unstable"),
                                  float(cells.unstable(key)), method=method,
                                  note=f"1: the worker processes' medians of {metric} differ "
                                       f"by more than {cells.unstable_ratio:g}x"))
                break
        else:
            out.append(r)
    return out


def _feature_model(ctx, cfg):
    m, data = ctx.cfg.model, ctx.data
    task = data.task
    Xtr, Xte = data.X_train, data.X_test
    model = MODELS[m.name].from_config(m, task, ctx.cfg.seed, ctx.backend)
    target = model.target(data.y_train, task, data.n_classes)

    def as_pred(out):
        return model.prediction(out, task)

    lam_note = "fixed by model.lam"
    if m.lam == "auto":
        fit_i, val_i = _split(ctx, Xtr.shape[0], m.val_size)
        fmap = ctx.make_map().fit(subset(Xtr, fit_i) if not data.streamed else ctx.fit_rows)
        preds = model.select_lambda(fmap, subset(Xtr, fit_i), target[fit_i], subset(Xtr, val_i),
                                    m.lam_grid)
        score = _score_fn(task, data.y_train[val_i])
        model.lam, lam_note = _choose(m.lam_grid, [p if isinstance(p, str) else score(as_pred(p))
                                                    for p in preds])

    fit_rows = ctx.fit_rows  # the training set (streamed data: a sample of it)
    # numba's code compiled (or loaded from its cache) before any timing, here and on the
    # backend's workers; a timed call during which numba still compiled is timed again
    def warm():
        fmap = ctx.make_map().fit(fit_rows)
        fmap.transform(Xtr[:8])
        return fmap

    _warm_up(ctx, warm)

    def fit():
        t0 = time.perf_counter()
        fmap = ctx.make_map().fit(fit_rows)
        map_fit = time.perf_counter() - t0
        model.fit(fmap, Xtr, target)
        return fmap, dict(model.times_, map_fit_s=map_fit)

    probes = _probes(ctx)
    _, ph, spread, n_rep, fit_why = timed(fit, cfg.repeats, cfg.cheap_s, probes)

    def predict():
        return as_pred(model.predict(Xte)), {}

    pred, pph, pspread, pn, pred_why = timed(predict, cfg.repeats, cfg.cheap_s, probes)
    method = m.name
    rows = _metric_rows(method, task, pred, data.y_test)
    rows += time_rows(method, ph, spread, n_rep, fit_why, [
        ("train_time_s", lambda p: p["total"], lambda p: (
            f"map fit {p['map_fit_s']:.3g} s + features {p.get('map_time_s', 0.0):.3g} s + "
            f"accumulate {p.get('accumulate_time_s', 0.0):.3g} s + solve "
            f"{p.get('solve_time_s', 0.0):.3g} s")),
        ("map_time_s", lambda p: p["map_fit_s"] + p.get("map_time_s", 0.0),
         "map fit + features of the training set"),
    ] + ([("solve_time_s", lambda p: p["solve_time_s"], "D x D Cholesky + solve")]
         if ph is None or "solve_time_s" in ph else []))
    rows += time_rows(method, pph, pspread, pn, pred_why, [
        ("predict_time_s", lambda p: p["total"], "test features + product")])
    rows = worker_rows(method, rows, in_workers(ctx, cfg, feature_cell, dict(
        model=model, proto=ctx.make_map(), fit_rows=np.asarray(fit_rows), Xtr=Xtr,
        target=target, Xte=Xte), n_rep))
    rows += [
        record("learning", "lambda", model.lam, method=method, note=lam_note),
        record("learning", "peak_rss_mb", peak_rss_mb(), "MB", method=method,
               note=RSS_NOTE),
    ]
    return rows


def _probes(ctx):
    """Compilation counters of the backend's worker processes (rffbench.clock probes)."""
    return () if ctx.backend is None else (ctx.backend.numba_events,)


def _warm_up(ctx, fn):
    """``fn()``: the timed code paths on a few rows, so that numba compiles (or loads from
    its cache) before any timing; it returns the fitted map (or None), with which the
    backend's workers warm up their own code."""
    fmap = fn()
    if ctx.backend is not None:
        ctx.backend.warm_up(ctx.kernel, fmap, np.asarray(ctx.fit_rows[:16]),
                            ctx.cfg.model.exact_precision)


def time_rows(method, ph, spread, n_rep, why, specs):
    """Records of timed phases: ``specs`` = [(metric, value of phases, note or note of
    phases)]; ``ph`` None (numba compiled in every attempt): no value, ``why`` instead."""
    rows = []
    for i, (metric, value, note) in enumerate(specs):
        if ph is None:
            rows.append(record("learning", metric, None, "s", method=method, note=why))
            continue
        text = note(ph) if callable(note) else note
        rows.append(record("learning", metric, value(ph), "s", method=method,
                           spread=spread if i == 0 else None, n_repeats=n_rep,
                           note=f"{text}; {why}" if why else text))
    return rows


def _exact(ctx, cfg):
    """Exact KRR's records.  They depend on the data, the kernel, lambda and the solver
    settings, never on D or the map: in a sweep they are computed once and shared by
    every run with the same such settings (the note names the run that computed them)."""
    c = ctx.cfg
    m = c.model
    key = dict(dataset=asdict(c.dataset), kernel=asdict(c.kernel), seed=c.seed, dtype=c.dtype,
               threads=ctx.threads, learning=dict(repeats=cfg.repeats, cheap_s=cfg.cheap_s),
               model={k: getattr(m, k) for k in EXACT_MODEL_KEYS})
    if cfg.processes > 1:  # (absent at 1: keys stay those of older sweeps)
        key["learning"].update(processes=cfg.processes, unstable_ratio=cfg.unstable_ratio)
    if c.device != "cpu":  # (absent on the CPU: keys stay those of older sweeps)
        key["device"] = c.device
    if c.backend.name != "local":  # (absent when local: keys stay those of older sweeps)
        key["backend"] = block_identity("backend", c.backend)  # not backend.timeout
    return ctx.shared("exact_krr", key, lambda: _exact_rows(ctx, cfg))


RSS_NOTE = "process peak resident memory so far (VmHWM)"

#: how exact KRR's train_time_s note starts when cg fitted it (the report marks those points)
CG_TRAIN_NOTE = "cg without the Gram"

#: how the cg records' note names model.exact_precision
PRECISION_NOTES = {"float64": "float64 tiles",
                   "mixed": "mixed precision: float32 tiles, float64 sums and recurrences"}


def products_note(info):
    """How exact KRR's cg solve made its kernel products: the route and precision the
    operator took (the solver's info), and, where they differ, the precision asked."""
    n, route, used = info["products"], info["route"], info["precision"]
    asked = info.get("precision_asked", used)
    unused = "" if asked == used else (
        f"; model.exact_precision={asked} does not apply to this route: float64")
    if route == "explicit features":
        return (f"{n} kernel products through the kernel's {info['features']} explicit "
                f"features, phi (phi^T v) (no pair evaluated, K never formed; float64{unused})")
    if route == "sorted coordinates":
        return (f"{n} kernel products through the kernel's sorted coordinates, prefix sums of "
                f"the minima (no pair evaluated, K never formed; float64{unused})")
    if route == "cuda tiles":
        return (f"{n} kernel products on the GPU (CUDA tiles in shared memory, K never stored; "
                f"float64{unused})")
    if route == "python tiles":
        return (f"{n} kernel products tile by tile through the kernel's Gram (K never stored; "
                f"float64 tiles{unused})")
    return f"{n} fused kernel products (numba tiles, K never stored; {PRECISION_NOTES[used]})"


#: the model keys that exact KRR depends on (not name, chunk_rows, epochs, loss)
EXACT_MODEL_KEYS = ("lam", "lam_grid", "val_size", "center", "exact_max_n", "exact_solver",
                    "cg_tol", "cg_max_iter", "precond_rank", "exact_precision")


def _exact_rows(ctx, cfg):
    m, data = ctx.cfg.model, ctx.data
    task = data.task
    primary = "test_error_rate" if task == "classification" else "test_rmse"
    reason = exact_plan(ctx)
    if reason is not None:
        log.info("learning: exact KRR %s", reason)
        return [record("learning", primary, None, method="exact_krr", note=reason)]
    Xtr, Xte = data.X_train, data.X_test
    Ytr = encode_targets(data.y_train, task, data.n_classes)
    solver = exact_solver(ctx)
    cg = dict(solver=solver, tol=m.cg_tol, max_iter=m.cg_max_iter,
              precond_rank=m.precond_rank, precision=m.exact_precision,
              backend=ctx.backend if solver == "cg" else None, device=ctx.device)
    lam, lam_note = _exact_lambda(ctx, Ytr, cg)
    # the same landmarks for every repeat: each fit solves the same system
    seed = int(ctx.rng("exact-preconditioner").integers(2**32))
    model = ExactKRR(ctx.kernel, lam, m.center, random_state=seed, **cg)

    few, short = _warm_solver(m, solver, Xtr.shape[0])  # here and in the workers' cell

    def warm():  # the same solver on a few rows: its numba code compiled before timing
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warm_model = ExactKRR(ctx.kernel, lam, m.center, random_state=seed,
                                  **dict(cg, **short)).fit(Xtr[:few], Ytr[:few])
            warm_model.predict(Xte[:8])
            if fused_product(Xte.shape[0], Xtr.shape[0]) and ctx.device == "cpu":
                # the full-size prediction's path
                kernel = warm_model.kernel_
                prepared_times(kernel, kernel.inputs(Xte[:8]), kernel.inputs(Xtr[:few]),
                               np.ones((few, 1)), fused=True)

    _warm_up(ctx, warm)
    log.info("learning: exact KRR by %s, n_train=%d", solver, Xtr.shape[0])

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # recorded below instead
            model.fit(Xtr, Ytr)
        return None, model.times_

    probes = _probes(ctx)
    _, ph, spread, n_rep, fit_why = timed(fit, cfg.repeats, cfg.cheap_s, probes)
    info = model.solver_info_
    note = ""
    if solver == "cg" and not info["converged"]:
        note = not_converged_text(info, m.cg_tol, m.cg_max_iter)
        log.warning("learning: exact KRR %s", note)
    pred, pph, pspread, pn, pred_why = timed(lambda: (decode(model.predict(Xte), task), {}),
                                             cfg.repeats, cfg.cheap_s, probes)
    rows = _metric_rows("exact_krr", task, pred, data.y_test)
    if note:  # an unconverged solve is not the exact KRR: no test error, the reason instead
        rows = [record("learning", r["metric"], None, method="exact_krr", note=note)
                for r in rows]
    rows += _solver_rows(solver, m, info, note, ph, spread, n_rep, fit_why)
    rows += time_rows("exact_krr", pph, pspread, pn, pred_why, [
        ("predict_time_s", lambda p: p["total"], "K(test, train) alpha")])
    rows = worker_rows("exact_krr", rows, in_workers(ctx, cfg, exact_cell, dict(
        model=ExactKRR(ctx.kernel, lam, m.center, random_state=seed, **cg),
        warm_model=ExactKRR(ctx.kernel, lam, m.center, random_state=seed, **dict(cg, **short)),
        Xtr=Xtr, Ytr=Ytr, Xte=Xte), n_rep))
    rows += [
        record("learning", "lambda", lam, method="exact_krr", note=lam_note),
        record("learning", "peak_rss_mb", peak_rss_mb(), "MB", method="exact_krr",
               note=RSS_NOTE),
    ]
    return rows


def _exact_lambda(ctx, Ytr, cg):
    """(lam, how it was chosen): model.lam, or with lam=auto the grid's value whose fit on
    the training rows less model.val_size scores best on those held out."""
    m, data = ctx.cfg.model, ctx.data
    if m.lam != "auto":
        return m.lam, "fixed by model.lam"
    Xtr, task = data.X_train, data.task
    fit_i, val_i = _split(ctx, Xtr.shape[0], m.val_size)
    preds = exact_select_lambda(ctx.kernel, Xtr[fit_i], Ytr[fit_i], Xtr[val_i], m.lam_grid,
                                m.center, random_state=ctx.rng("exact-preconditioner"), **cg)
    score = _score_fn(task, data.y_train[val_i])
    return _choose(m.lam_grid, [p if isinstance(p, str) else score(decode(p, task))
                                for p in preds])


def _warm_solver(m, solver, n_train):
    """(rows, solver settings) of a warm-up fit: at most 64 rows and, for cg, 2 iterations
    and a preconditioner of at most that rank (its numba code compiled, nothing timed)."""
    few = min(n_train, 64)
    return few, (dict(max_iter=2, precond_rank=None if m.precond_rank is None else
                      min(m.precond_rank, few)) if solver == "cg" else {})


def _solver_rows(solver, m, info, note, ph, spread, n_rep, fit_why):
    """The exact fit's time records by its solver's phases (Cholesky: Gram, factor and
    solve; cg: preconditioner and iterations, with their count and final residual)."""
    if solver == "cholesky":
        return time_rows("exact_krr", ph, spread, n_rep, fit_why, [
            ("train_time_s", lambda p: p["total"], lambda p: (
                f"Gram {p['gram_time_s']:.3g} s + Cholesky {p['factor_time_s']:.3g} s + "
                f"solve {p['solve_time_s']:.3g} s")),
            ("gram_time_s", lambda p: p["gram_time_s"], "exact n x n Gram (numba)"),
            ("solve_time_s", lambda p: p["factor_time_s"] + p["solve_time_s"],
             "n x n Cholesky + solve")])
    return time_rows("exact_krr", ph, spread, n_rep, fit_why, [
        ("train_time_s", lambda p: p["total"], lambda p: (
            f"{CG_TRAIN_NOTE}: Nystrom preconditioner (rank {info['precond_rank']}) "
            f"{p['precond_time_s']:.3g} s + {info['iterations']} iterations "
            f"{p['solve_time_s']:.3g} s")),
        ("precond_time_s", lambda p: p["precond_time_s"],
         f"Nystrom preconditioner, rank {info['precond_rank']}"),
        ("solve_time_s", lambda p: p["solve_time_s"], products_note(info))]) + [
        record("learning", "cg_iterations", info["iterations"], method="exact_krr",
               note=note or f"converged: relative residual <= model.cg_tol={m.cg_tol:g}"),
        record("learning", "cg_residual", info["residual"], method="exact_krr",
               note="||y - (K + lam I) alpha|| / ||y||, largest over the target columns "
                    "(and the intercept's column of ones), recomputed from alpha"),
    ]


def check_targets(data, dcfg):
    """DataError when the training split leaves nothing to learn: one class
    (classification), all targets equal (regression), or test rows of a class that no
    training row has, whose error would be 1 by construction (an ordered split of a file
    sorted by class; a random split too small to hold every class)."""
    from ..errors import DataError

    where = f"dataset={data.name}"
    ordered = dcfg.split == "ordered"
    how = ("dataset.split=ordered takes the first rows for training (a file sorted by its "
           "target?): use dataset.split=random" if ordered else
           "choose another dataset.test_size or seed, or check the data")
    ytr, yte = np.asarray(data.y_train), np.asarray(data.y_test)
    if data.task == "classification":
        seen = np.unique(ytr)
        if seen.size < 2:
            raise DataError(f"{where}: the {ytr.size} training rows are all of one class "
                            f"({seen[0]}): nothing to learn; {how}")
        unseen = np.setdiff1d(np.unique(yte), seen)
        if unseen.size:
            n = int(np.isin(yte, unseen).sum())
            k = np.union1d(seen, unseen).size
            if ytr.size < k and not ordered:
                how = (f"the training split holds {ytr.size} rows for {k} classes: lower "
                       f"dataset.test_size (now {dcfg.test_size:g})")
            raise DataError(f"{where}: {n} of the {yte.size} test rows are of class(es) "
                            f"{', '.join(map(str, unseen[:5]))}{' ...' if unseen.size > 5 else ''}"
                            f" that no training row has (their error is 1 by construction); "
                            f"{how}")
    elif ytr.size and float(np.ptp(ytr)) == 0.0:
        raise DataError(f"{where}: the {ytr.size} training targets are all equal "
                        f"({float(ytr[0]):g}): nothing to learn; {how}")


class Learning(Measurement):
    """Test error and train / predict time of the model on the features against exact kernel
    ridge, same split."""

    name = "learning"
    Config = LearningConfig
    thread_dependent = {
        m: "the ridge's and the exact KRR's BLAS/LAPACK solves (and sparse products) sum in "
           "an order that depends on the thread count: errors differ by ~1e-13 relative; a "
           "selected lambda or an iteration count can change where candidates tie"
        for m in ("test_rmse", "test_rel_rmse", "test_error_rate", "lambda", "cg_iterations",
                  "cg_residual", "iterations", "residual")}
    selection_keys = ('exact',)
    conditioned_by = ('model.',)
    settings = ("model", "backend")

    def check(self, ctx, cfg):
        m, task = ctx.cfg.model, ctx.data.task
        MODELS[m.name].check(m, task, f"dataset={ctx.data.name}")
        remote = ctx.cfg.backend.name != "local"
        if cfg.processes > 1 and (remote or ctx.data.streamed):
            raise ConfigError(
                f"measure.learning.processes={cfg.processes} is not allowed with "
                + (f"backend.name={ctx.cfg.backend.name}" if remote
                   else f"dataset.path={ctx.cfg.dataset.path} (a streamed .npy or .parquet)")
                + ": the fits are timed again in fresh local processes that are given the "
                  "data; use measure.learning.processes=1")
        if cfg.processes > 1:  # what the workers are given must pickle (importable classes)
            for key, name, obj in (("kernel.name", ctx.cfg.kernel.name, ctx.kernel),
                                   ("features.name", ctx.cfg.features.name, ctx.map_cls)):
                why = unsendable(obj)
                if why:
                    raise ConfigError(
                        f"measure.learning.processes={cfg.processes} is not allowed with "
                        f"{key}={name!r}: its class cannot be sent to the worker processes "
                        f"({why}); define it at the top level of an importable module (not "
                        "inside a function), or use measure.learning.processes=1")
        check_targets(ctx.data, ctx.cfg.dataset)
        if cfg.exact:
            check_exact_request(ctx)
        n = ctx.data.X_train.shape[0]
        if cfg.exact and exact_plan(ctx) is None and exact_solver(ctx) == "cholesky":
            check_cg_unused(f"model.exact_solver={m.exact_solver} solves exact KRR by "
                            f"cholesky at n_train={n}",
                            **{k: getattr(m, k) for k in CG_DEFAULTS})
        if m.lam == "auto" and n - int(round(m.val_size * n)) < 2:
            raise ConfigError(f"model.lam='auto' is not allowed with {n} training rows: the "
                              "validation split leaves fewer than 2 rows to fit; set model.lam")

    def needs(self, ctx, cfg):
        """The model on features (its class's :meth:`~rffbench.models.FeatureModel.memory`:
        ridge holds 3 D x D matrices and a chunk, a sparse map's 3 x columns^2 or, with more
        columns than rows, the dual's n_train x n_train Gram (planned once the columns are
        known: ``ctx.n_columns``), sgd one chunk); lam=auto adds the validation
        predictions.  Exact KRR is not planned here: it is skipped with its reason when it
        cannot fit."""
        m, it, d = ctx.cfg.model, ctx.itemsize, ctx.data.d
        key, total, n_train_of = ctx.rows_key()
        n_out = max(ctx.data.n_classes, 1)
        grid = len(m.lam_grid) if m.lam == "auto" else 0
        model = MODELS[m.name]

        cols = ctx.n_columns  # a sparse map's columns, once it is fitted (else None)

        def memory(v):
            D, n = v["D"], n_train_of(v[key])
            rows = min(chunk_rows(D, m.chunk_rows), n)
            # the columns at other values of D: in proportion (one grid's bins per unit of
            # D), at most one per row and unit of D
            columns = None if cols is None else min(cols * D / ctx.cfg.D, n * D)
            return model.memory(D, n, rows, n_out, lambda r: ctx.map_cls.memory_bytes(
                r, d, D, it, train_rows=n, **ctx.map_params), ctx.map_cls.tags.sparse_output,
                columns)

        what = memory({"D": ctx.cfg.D, key: total})[0]
        return [Need(f"the learning measurement ({what})",
                     lambda v: memory(v)[1] + 8.0 * grid * n_train_of(v[key]) * n_out,
                     {"D": (ctx.cfg.D, 1), key: (total, 4)})]

    def run(self, ctx, cfg):
        m = ctx.cfg.model
        log.info("learning: %s on %s features (D=%d), n_train=%d, lam=%s%s", m.name,
                 ctx.map_cls.name, ctx.cfg.D, ctx.data.X_train.shape[0], m.lam,
                 ", exact KRR baseline" if cfg.exact else "")
        rows = _feature_model(ctx, cfg)
        if cfg.exact:
            rows += _exact(ctx, cfg)
        return rows
