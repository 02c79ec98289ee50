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
  in the available memory.
* Metrics: ``test_error_rate`` (classification) or ``test_rmse`` and
  ``test_rel_rmse`` = RMSE / std(y_test) (regression); ``train_time_s`` (map
  fit + features + accumulate + solve, or Gram + factor + solve),
  ``map_time_s``, ``gram_time_s``, ``solve_time_s``, ``predict_time_s`` (test
  features + product, or K(test, train) alpha), ``lambda``, ``peak_rss_mb``
  (the process's peak resident memory so far, ru_maxrss).  A fit or predict
  that takes less than ``measure.learning.cheap_s`` is repeated
  ``measure.learning.repeats`` times and the median kept (``spread`` = max -
  min); numba is warmed up before any timing.
"""
from __future__ import annotations

import logging
import resource
import time

import numpy as np

from .. import memory
from ..memory import Need
from ..config import SGD_LOSSES
from ..errors import ConfigError, RffbenchError
from ..exact import ExactKRR
from ..exact import select_lambda as exact_select_lambda
from ..models import FeatureRidge, FeatureSGD, chunk_rows, decode, encode_targets
from ..results import record

log = logging.getLogger(__name__)


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _split(ctx, n, val_size):
    perm = ctx.rng("learning-validation").permutation(n)
    n_val = max(1, int(round(val_size * n)))
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def exact_plan(ctx):
    """None if exact KRR can run, else the reason it is skipped."""
    m, n = ctx.cfg.model, ctx.data.X_train.shape[0]
    if n > m.exact_max_n:
        return (f"skipped: n_train={n} > model.exact_max_n={m.exact_max_n} (an n x n Gram and "
                "an O(n^3) Cholesky)")
    n_fit = n - int(round(m.val_size * n))
    need = 8 * max(n * n, 2 * n_fit * n_fit + (n - n_fit) * n_fit if m.lam == "auto" else 0)
    avail = memory.available_bytes()
    if avail is not None and need > memory.MEMORY_FRACTION * avail:
        return (f"skipped: the Gram of n_train={n} needs {need / memory.GIB:.3g} GiB, more than "
                f"{memory.MEMORY_FRACTION:.0%} of the {avail / memory.GIB:.3g} GiB available")
    return None


def check(ctx, cfg):
    m, task = ctx.cfg.model, ctx.data.task
    if m.name == "sgd" and m.loss is not None and m.loss not in SGD_LOSSES[task]:
        raise ConfigError(f"model.loss={m.loss!r} is not allowed for the {task} dataset="
                          f"{ctx.data.name}: use one of {', '.join(SGD_LOSSES[task])}")
    n = ctx.data.X_train.shape[0]
    if m.lam == "auto" and n - int(round(m.val_size * n)) < 2:
        raise ConfigError(f"model.lam='auto' is not allowed with {n} training rows: the "
                          "validation split leaves fewer than 2 rows to fit; set model.lam")


def needs(ctx, cfg):
    """The model on features: ridge holds Z^T Z, its symmetric copy and the factor (3 D x D)
    and one feature chunk (and its float64 copy); the dual (sparse maps) an n_train x
    n_train Gram and its factor; sgd one chunk; lam=auto adds the validation predictions.
    Exact KRR is not planned here: it is skipped with its reason when it cannot fit."""
    m, it, d = ctx.cfg.model, ctx.itemsize, ctx.data.d
    key, total, n_train_of = ctx.rows_key()
    n_out = max(ctx.data.n_classes, 1)
    grid = len(m.lam_grid) if m.lam == "auto" else 0
    sparse = ctx.map_cls.sparse_output

    def nbytes(v):
        D, n = v["D"], n_train_of(v[key])
        rows = min(chunk_rows(D, m.chunk_rows), n)
        fmap = ctx.map_cls.memory_bytes(rows, d, D, it, fit_rows=n, **ctx.map_params)
        preds = 8.0 * grid * n * n_out
        if sparse and m.name == "ridge":
            return 16.0 * n * n + ctx.map_cls.memory_bytes(n, d, D, it, fit_rows=n) + preds
        if m.name == "ridge":
            return 8.0 * (3 * D * D + rows * D + D * n_out) + fmap + preds
        return 8.0 * (2 * rows * D + D * n_out) + fmap + preds

    what = ("the learning measurement (ridge on features: 3 D x D matrices)"
            if m.name == "ridge" and not sparse else
            "the learning measurement (ridge in the dual: n_train x n_train)"
            if m.name == "ridge" else "the learning measurement (sgd on feature chunks)")
    return [Need(what, nbytes, {"D": (ctx.cfg.D, 1), key: (total, 4)})]


def _score_fn(task, y_true):
    if task == "classification":
        return lambda pred: float(np.mean(pred != y_true))
    return lambda pred: float(np.sqrt(np.mean((pred - y_true) ** 2)))


def _choose(grid, errors):
    """Smallest validation error; ties go to the larger lambda.  An error of None marks
    a lambda at which the system was not positive definite in floating point."""
    ok = [i for i in range(len(grid)) if errors[i] is not None]
    if not ok:
        raise RffbenchError(f"model.lam=auto: the system is not positive definite in floating "
                            f"point at any lambda of model.lam_grid={list(grid)}; use larger "
                            "values")
    best = min(ok, key=lambda i: (errors[i], -grid[i]))
    text = ", ".join(f"{g:g}: " + ("not positive definite" if e is None else f"{e:.4g}")
                     for g, e in zip(grid, errors))
    return grid[best], f"auto: validation error by lambda {{{text}}}"


def timed(fn, repeats, cheap_s):
    """Run ``fn() -> (result, phases dict)``; repeat when cheap.  Returns the
    result and phases of the median-time call, the spread and the count."""
    runs = []
    while True:
        t0 = time.perf_counter()
        result, phases = fn()
        total = time.perf_counter() - t0
        runs.append((total, result, phases))
        if runs[0][0] >= cheap_s or len(runs) >= repeats:
            break
    runs.sort(key=lambda r: r[0])
    total, result, phases = runs[len(runs) // 2]
    return result, dict(phases, total=total), runs[-1][0] - runs[0][0], len(runs)


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


def _feature_model(ctx, cfg):
    m, data = ctx.cfg.model, ctx.data
    task = data.task
    Xtr, Xte = data.X_train, data.X_test
    Ytr = encode_targets(data.y_train, task, data.n_classes)
    if m.name == "ridge":
        model = FeatureRidge(m.lam, m.center, m.chunk_rows)
        target = Ytr
    else:
        model = FeatureSGD(m.lam, task, m.loss, m.epochs, ctx.cfg.seed, m.chunk_rows)
        target = data.y_train
    as_pred = (lambda s: decode(s, task)) if m.name == "ridge" else (lambda p: p)

    lam_note = "fixed by model.lam"
    if m.lam == "auto":
        fit_i, val_i = _split(ctx, Xtr.shape[0], m.val_size)
        fmap = ctx.make_map().fit(Xtr[fit_i])
        preds = model.select_lambda(fmap, Xtr[fit_i], target[fit_i], Xtr[val_i], m.lam_grid)
        score = _score_fn(task, data.y_train[val_i])
        model.lam, lam_note = _choose(m.lam_grid, [None if p is None else score(as_pred(p))
                                                    for p in preds])

    ctx.make_map().fit(Xtr).transform(Xtr[:8])  # numba warm-up before any timing

    def fit():
        t0 = time.perf_counter()
        fmap = ctx.make_map().fit(Xtr)
        map_fit = time.perf_counter() - t0
        model.fit(fmap, Xtr, target)
        return fmap, dict(model.times_, map_fit_s=map_fit)

    _, ph, spread, n_rep = timed(fit, cfg.repeats, cfg.cheap_s)

    def predict():
        return as_pred(model.predict(Xte)), {}

    pred, pph, pspread, pn = timed(predict, cfg.repeats, cfg.cheap_s)
    method = m.name
    map_s = ph["map_fit_s"] + ph.get("map_time_s", 0.0)
    rows = _metric_rows(method, task, pred, data.y_test)
    rows += [
        record("learning", "train_time_s", ph["total"], "s", method=method, spread=spread,
               n_repeats=n_rep, note=(f"map fit {ph['map_fit_s']:.3g} s + features "
                                      f"{ph.get('map_time_s', 0.0):.3g} s + accumulate "
                                      f"{ph.get('accumulate_time_s', 0.0):.3g} s + solve "
                                      f"{ph.get('solve_time_s', 0.0):.3g} s")),
        record("learning", "map_time_s", map_s, "s", method=method, n_repeats=n_rep,
               note="map fit + features of the training set"),
    ]
    if "solve_time_s" in ph:
        rows.append(record("learning", "solve_time_s", ph["solve_time_s"], "s", method=method,
                           n_repeats=n_rep, note="D x D Cholesky + solve"))
    rows += [
        record("learning", "predict_time_s", pph["total"], "s", method=method, spread=pspread,
               n_repeats=pn, note="test features + product"),
        record("learning", "lambda", model.lam, method=method, note=lam_note),
        record("learning", "peak_rss_mb", peak_rss_mb(), "MB", method=method,
               note="process peak resident memory so far (ru_maxrss)"),
    ]
    return rows


def _exact(ctx, cfg):
    m, data = ctx.cfg.model, ctx.data
    task = data.task
    primary = "test_error_rate" if task == "classification" else "test_rmse"
    reason = exact_plan(ctx)
    if reason is not None:
        log.info("learning: exact KRR %s", reason)
        return [record("learning", primary, None, method="exact_krr", note=reason)]
    Xtr, Xte = data.X_train, data.X_test
    Ytr = encode_targets(data.y_train, task, data.n_classes)
    lam, lam_note = m.lam, "fixed by model.lam"
    if lam == "auto":
        fit_i, val_i = _split(ctx, Xtr.shape[0], m.val_size)
        preds = exact_select_lambda(ctx.kernel, Xtr[fit_i], Ytr[fit_i], Xtr[val_i], m.lam_grid,
                                    m.center)
        score = _score_fn(task, data.y_train[val_i])
        lam, lam_note = _choose(m.lam_grid, [None if p is None else score(decode(p, task))
                                              for p in preds])
    ctx.kernel.gram(Xtr[:8])  # numba warm-up
    model = ExactKRR(ctx.kernel, lam, m.center)

    def fit():
        model.fit(Xtr, Ytr)
        return None, model.times_

    _, ph, spread, n_rep = timed(fit, cfg.repeats, cfg.cheap_s)
    pred, pph, pspread, pn = timed(lambda: (decode(model.predict(Xte), task), {}), cfg.repeats,
                                   cfg.cheap_s)
    rows = _metric_rows("exact_krr", task, pred, data.y_test)
    solve = ph["factor_time_s"] + ph["solve_time_s"]
    rows += [
        record("learning", "train_time_s", ph["total"], "s", method="exact_krr", spread=spread,
               n_repeats=n_rep, note=f"Gram {ph['gram_time_s']:.3g} s + Cholesky "
                                     f"{ph['factor_time_s']:.3g} s + solve {ph['solve_time_s']:.3g} s"),
        record("learning", "gram_time_s", ph["gram_time_s"], "s", method="exact_krr",
               n_repeats=n_rep, note="exact n x n Gram (numba)"),
        record("learning", "solve_time_s", solve, "s", method="exact_krr", n_repeats=n_rep,
               note="n x n Cholesky + solve"),
        record("learning", "predict_time_s", pph["total"], "s", method="exact_krr",
               spread=pspread, n_repeats=pn, note="K(test, train) alpha"),
        record("learning", "lambda", lam, method="exact_krr", note=lam_note),
        record("learning", "peak_rss_mb", peak_rss_mb(), "MB", method="exact_krr",
               note="process peak resident memory so far (ru_maxrss)"),
    ]
    return rows


def measure(ctx, cfg):
    m = ctx.cfg.model
    log.info("learning: %s on %s features (D=%d), n_train=%d, lam=%s%s", m.name,
             ctx.map_cls.name, ctx.cfg.D, ctx.data.X_train.shape[0], m.lam,
             ", exact KRR baseline" if cfg.exact else "")
    rows = _feature_model(ctx, cfg)
    if cfg.exact:
        rows += _exact(ctx, cfg)
    return rows

