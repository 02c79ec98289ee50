"""Run identity: which runs of a sweep are the same run.

A run's id is a hash of the configuration values that differ from the schema's
defaults (:func:`changes`; ``report``, how a sweep is summarised, is not part of
it).  Adding a key with a default therefore never changes an existing id, and
no table of added keys has to be kept.

Sweeps written by rffbench 0.1 named their runs otherwise: :func:`legacy_run_id`
gives that id (:mod:`rffbench.compat`, where everything kept of older versions is), so
:func:`find_run` resumes those runs where they are.

An id alone cannot notice a *default* that changed between versions (a run
recorded at the old default would hash like one at the new default), so a run
found with records is reused only if its ``config.json`` agrees with the
config asked for (:func:`disagreement`).
"""
from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

from . import compat
from .store import CONFIG_FILE

#: config blocks and keys that are not part of a run's identity (how a sweep is
#: summarised; how long to wait for a cluster and where it is: a scheduler restarted at
#: another address computes the same run)
NOT_IDENTITY = ("report", "backend.timeout", "backend.address")


def _hash(obj) -> str:
    blob = json.dumps(obj, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def _identity_dict(conf, inert=()) -> dict:
    """The config (a Config or its dict) as it counts for identity: NOT_IDENTITY's keys
    dropped, and the ``inert`` blocks (Config.inert_blocks: a measurement that is off keeps
    only its switch, the blocks that are its settings alone are dropped)."""
    d = asdict(conf) if not isinstance(conf, dict) else copy.deepcopy(conf)
    for block in inert:
        if block.startswith("measure.") and isinstance(d.get("measure"), dict):
            d["measure"][block.split(".", 1)[1]] = {"enabled": False}
        else:
            d.pop(block, None)
    for key in NOT_IDENTITY:
        *parents, last = key.split(".")
        node = d
        for p in parents:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(last, None)
    return d


def block_identity(name, block) -> dict:
    """The part of config block ``name`` (a dataclass or dict) that is part of a run's
    identity (NOT_IDENTITY's keys of that block dropped), e.g. for a shared result's key."""
    return _identity_dict({name: asdict(block) if not isinstance(block, dict) else block})[name]


@lru_cache(maxsize=None)
def _defaults_of(cls) -> dict:
    return _identity_dict(cls())


def forget_defaults():
    """Forget the cached defaults (the config's ``measure`` block was rebuilt with the
    measurements installed now): otherwise a plug-in measurement's defaults, installed
    after a first id was computed, would count as changes and give its runs other ids
    than in a fresh process."""
    _defaults_of.cache_clear()


def flatten(d, prefix="") -> dict:
    """{"a.b.c": value} of a nested dict; dicts are walked, everything else is a value
    (an empty dict, such as ``features.params`` unset, is a value)."""
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def changes(conf, drop_inert=True) -> dict:
    """{dotted key: value} of the values of ``conf`` (a :class:`~rffbench.config.Config`)
    that differ from its class's defaults, the settings of a measurement that is off left
    out (``drop_inert``: ids written before rffbench left them out kept them).

    Parameters
    ----------
    conf : Config
        A checked config.
    drop_inert : bool, default True
        Leave out the settings of measurements that are off.

    Returns
    -------
    dict
    """
    now = flatten(_identity_dict(conf, conf.inert_blocks() if drop_inert else ()))
    default = flatten(_defaults_of(type(conf)))
    return {k: v for k, v in now.items() if k not in default or default[k] != v}


def run_id(conf, drop_inert=True) -> str:
    """The run's id: a hash of :func:`changes` (same config -> same id).

    Parameters
    ----------
    conf : Config
        A checked config.
    drop_inert : bool, default True
        Leave out the settings of measurements that are off (False: the ids of rffbench
        versions that kept them).

    Returns
    -------
    str
        12 hexadecimal digits.
    """
    return _hash(changes(conf, drop_inert))


def legacy_run_id(conf):
    """The id rffbench 0.1 gave this config, or None where it could not have existed then
    (:func:`rffbench.compat.legacy_run_id`).

    Parameters
    ----------
    conf : Config
        A checked config.

    Returns
    -------
    str or None
    """
    return compat.legacy_run_id(_identity_dict(conf), flatten(_defaults_of(type(conf))),
                                flatten, _hash)


def find_run(conf, *runs_dirs) -> str:
    """The id under which ``conf`` is (or will be) stored in the first of ``runs_dirs``
    that holds it: its id, the id from before inert blocks stopped counting, or the 0.1
    id (a sweep written by 0.1); its id where none holds it.

    Parameters
    ----------
    conf : Config
        A checked config.
    *runs_dirs : Path
        Folders of run directories, searched in order (a sweep's, then its results folder's
        store).

    Returns
    -------
    str
    """
    rid = run_id(conf)
    candidates = [rid]
    before = run_id(conf, drop_inert=False)  # the id when an inert block still counted
    if before != rid:
        candidates.append(before)
    old = legacy_run_id(conf)
    if old is not None:
        candidates.append(old)
    for d in runs_dirs:
        for c in candidates:
            if (Path(d) / c).exists():
                return c
    return rid


def disagreement(conf, stored: dict):
    """The first value in which a run's stored config (``config.json``'s ``config``)
    differs from ``conf``, as ``(key, stored, asked)``, or None.  Keys that only one
    of them has (added or renamed since) are not compared: the id covers them.

    Parameters
    ----------
    conf : Config
        The config asked for.
    stored : dict
        The stored run's config.

    Returns
    -------
    tuple of (str, object, object) or None
    """
    inert = conf.inert_blocks()  # the same run: what is inert in one is in the other
    now, then = flatten(_identity_dict(conf, inert)), flatten(_identity_dict(stored, inert))
    for k in sorted(now.keys() & then.keys()):
        a, b = now[k], then[k]
        if a != b and json.dumps(a, default=str) != json.dumps(b, default=str):
            return k, b, a
    return None


def stored_disagreement(conf, run_dir):
    """:func:`disagreement` with the ``config.json`` of ``run_dir`` (None if it has none
    that can be read: nothing to compare)."""
    from .readers import DamagedFile, read_json

    try:
        stored = read_json(Path(run_dir) / CONFIG_FILE, {"config": dict}).get("config")
    except (OSError, DamagedFile):
        return None
    return disagreement(conf, stored) if isinstance(stored, dict) else None
