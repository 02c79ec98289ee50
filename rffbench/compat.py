"""What rffbench keeps of older versions, in one place: how their runs are found and how
their records are read.

* **Run ids of 0.1.** Sweeps written by rffbench 0.1 named their runs by a hash of the whole
  config (minus a hand-kept list of keys added later).  :func:`legacy_run_id` computes that
  id from a frozen copy of the 0.1 schema's defaults (``ids_v0.json``), so that
  :func:`rffbench.runid.find_run` resumes those runs where they are.
* **Records of older schemas.** Schema 3 records (before the ``kernel_params`` column) are
  read as they are, the column added (:func:`upgrade_records`); schemas 1 and 2 changed the
  meaning of metrics: their runs are "outdated" and run again.
* **Runs without config.json** (written before it existed) are grouped by their identity
  columns (:data:`FALLBACK_COLUMNS`).

This module looks at nothing above it: the run-identity helpers are passed in by
:mod:`rffbench.runid`.
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

#: record schemas whose metrics meant something else: their runs are run again
OUTDATED_SCHEMAS = (1, 2)
#: the identity columns of schema 3 records, read with ``kernel_params`` added
SCHEMA3_MISSING = ("kernel_params",)
#: conditions of a run without config.json (older records): its identity columns
FALLBACK_COLUMNS = ["experiment", "dataset", "n_train", "kernel", "nu", "features", "d", "D",
                    "dtype"]


def schema3_columns(columns):
    """The columns of a schema 3 records file, given this schema's ``columns``."""
    return [c for c in columns if c not in SCHEMA3_MISSING]


def upgrade_records(df):
    """Schema 3 records as this schema's: ``kernel_params`` from the ``nu`` column (the only
    kernel parameter schema 3 recorded, for matern), empty elsewhere.  The ``schema`` column
    keeps the version the run was written with."""
    def params(row):
        nu = row.get("nu")
        return f"nu={nu:g}" if row.get("kernel") == "matern" and nu is not None and nu == nu \
            else None

    df = df.copy()
    df.insert(list(df.columns).index("nu") + 1, "kernel_params",
              [params(r) for r in df[["kernel", "nu"]].to_dict("records")])
    return df


@lru_cache(maxsize=None)
def _v0():
    blob = json.loads((Path(__file__).with_name("ids_v0.json")).read_text())
    added = [(tuple(k.split(".")), v) for k, v in blob["added_keys"]]
    return blob["defaults"], added


def _legacy_spelling(d):
    """Values spelled as 0.1 first recorded them: dataset.scale standardize / none was
    dataset.standardize true / false, measure.approximation.cross halves was true."""
    ds = d["dataset"]
    if ds.get("standardize") is None and ds.get("scale") in ("standardize", "none"):
        ds["standardize"] = ds.pop("scale") == "standardize"
    approx = d["measure"]["approximation"]
    if approx.get("cross") == "halves":
        approx["cross"] = True


def legacy_run_id(identity, default, flatten, hash_):
    """The id rffbench 0.1 gave a config, or None where it could not have existed then (a
    key added since is not at its default).  ``identity``: the config as it counts for
    identity (a nested dict); ``default``: the schema's defaults, flattened; ``flatten``
    and ``hash_``: :mod:`rffbench.runid`'s."""
    frozen, added = _v0()
    d = copy.deepcopy(frozen)

    def merge(node, ref, values, prefix):
        """Copy values into the 0.1 tree; False if a key 0.1 lacked is not at default."""
        for k, v in values.items():
            if k in ref:
                if isinstance(v, dict) and isinstance(ref[k], dict) and ref[k]:
                    if not merge(node[k], ref[k], v, f"{prefix}{k}."):
                        return False
                else:
                    node[k] = v
            else:  # added after 0.1: only its default could have been run then
                new = flatten(v, f"{prefix}{k}.") if isinstance(v, dict) and v \
                    else {f"{prefix}{k}": v}
                if any(k2 not in default or default[k2] != v2 for k2, v2 in new.items()):
                    return False
        return True

    if not merge(d, frozen, identity, ""):
        return None
    _legacy_spelling(d)
    for path, dflt in added:
        node = d
        for k in path[:-1]:
            node = node[k]
        if node.get(path[-1]) == dflt:
            node.pop(path[-1])
    return hash_(d)
