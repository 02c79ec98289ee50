"""The synthetic data: uniform points in the d-ball, labelled by a smooth function.
"""
from __future__ import annotations

import numpy as np

from ..checks import Int, Key, OneOf, Real
from ..memory import Need, Plan
from .base import LOAD_COPIES, SYNTHETIC_CHUNK, TASKS, DatasetLoader


def synthetic_blocks(cfg, seed):
    """The synthetic data, block by block: (start, stop, X block, y block) for blocks of
    SYNTHETIC_CHUNK rows, each from its own seeded stream (see :func:`_synthetic`)."""
    d = cfg.d if cfg.d is not None else 8
    n, r = cfg.n, cfg.radius
    root = np.random.SeedSequence([seed, 0x5E7])
    waves_seq, *chunk_seqs = root.spawn(1 + -(-n // SYNTHETIC_CHUNK))
    wr = np.random.default_rng(waves_seq)
    J = 8
    V = wr.standard_normal((d, J)) * (3.0 / (r * np.sqrt(d)))
    phase = wr.uniform(0, 2 * np.pi, J)
    amp = np.full(J, 1.0 / np.sqrt(J))
    for c, seq in enumerate(chunk_seqs):
        s, e = c * SYNTHETIC_CHUNK, min(n, (c + 1) * SYNTHETIC_CHUNK)
        rng = np.random.default_rng(seq)
        g = rng.standard_normal((e - s, d))
        g /= np.linalg.norm(g, axis=1, keepdims=True)
        g *= r * rng.random((e - s, 1)) ** (1.0 / d)
        y = np.cos(g @ V + phase) @ amp + cfg.noise * rng.standard_normal(e - s)
        yield s, e, g, (y > 0).astype(np.int64) if cfg.task == "classification" else y


def write_synthetic_npy(path, cfg, seed=0):
    """The synthetic data as a (n, d + 1) .npy file (target last), written block by
    block through a memory map: a dataset=file input of any size in bounded memory."""
    d = cfg.d if cfg.d is not None else 8
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(cfg.n, d + 1))
    for s, e, X, y in synthetic_blocks(cfg, seed):
        out[s:e, :d] = X
        out[s:e, d] = y
    out.flush()
    del out
    return path


class Synthetic(DatasetLoader):
    """Points uniform in the d-ball of radius r; smooth random target.

    f(x) = sum_j a_j cos(v_j . x + phi_j), J = 8 fixed random waves with
    |v_j| ~ 3/r (a few oscillations across the ball); regression target
    f(x) + noise N(0, noise^2); classification target 1[f(x) + noise e > 0].
    """

    KEYS = {"n": Key(2000, Int(2), "number of points"),
            "d": Key(None, Int(1, none=True), "input dimension (null = 8)"),
            "radius": Key(1.0, Real(gt=0), "radius of the ball the points are drawn in"),
            "noise": Key(0.1, Real(ge=0), "standard deviation of the target noise"),
            "task": Key("regression", OneOf(TASKS),
                        "regression (smooth target) or classification (its sign)")}

    def load(self, cfg, seed):
        d = cfg.d if cfg.d is not None else 8
        n, r = cfg.n, cfg.radius
        X = np.empty((n, d))
        y = np.empty(n, dtype=np.int64 if cfg.task == "classification" else np.float64)
        for s, e, Xb, yb in synthetic_blocks(cfg, seed):
            X[s:e], y[s:e] = Xb, yb
        info = dict(task=cfg.task, source=f"synthetic: uniform in the {d}-ball of radius {r}",
                    licence="generated", diameter=2.0 * r)
        return X, y, info

    def plan(self, cfg):
        """dataset.n x dataset.d (and the targets), scalable: the plan can say which
        dataset.n or dataset.d would fit."""
        plan = Plan()
        plan.add("load", [Need("generating the synthetic data (dataset.n x dataset.d, with "
                               "the split and standardised copies)",
                               lambda v: LOAD_COPIES * 8.0 * v["dataset.n"] * v["dataset.d"]
                               + 24.0 * v["dataset.n"],
                               {"dataset.n": (cfg.n, 2), "dataset.d": (cfg.d or 8, 1)})])
        return plan


#: the sources this module registers (rffbench.datasets.builtin collects them)
SOURCES = {"synthetic": Synthetic()}
