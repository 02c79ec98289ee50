"""What rffbench keeps of older versions, in one place: how their runs are found and how
their records are read.

* **Run ids of 0.1.** Sweeps written by rffbench 0.1 named their runs by a hash of the whole
  config (minus a hand-kept list of keys added later).  :func:`legacy_run_id` computes that
  id from a frozen copy of the 0.1 schema's defaults (``ids_v0.json``), so that
  :func:`rffbench.runid.find_run` resumes those runs where they are.
* **Records of older schemas.** Schema 3 records (before the ``kernel_params`` column) and
  schema 4 records (before ``device``) are read as they are, the columns added since
  derived (:func:`upgrade_records`); schemas 1 and 2 changed the meaning of metrics: their
  runs are "outdated" and run again.
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
#: the columns each schema version added (read from older records as :func:`upgrade_records`
#: derives them): 4 kernel_params, 5 device
ADDED_COLUMNS = {4: ("kernel_params",), 5: ("device",)}
#: the oldest schema whose records are read (the ones between it and this are upgraded)
OLDEST_READ = 3
#: conditions of a run without config.json (older records): its identity columns
FALLBACK_COLUMNS = ["experiment", "dataset", "n_train", "kernel", "nu", "features", "d", "D",
                    "dtype"]


def columns_of(version, columns):
    """The columns of a schema ``version`` records file, given this schema's ``columns``."""
    later = {c for v, cs in ADDED_COLUMNS.items() if v > version for c in cs}
    return [c for c in columns if c not in later]


def _kernel_params(df):
    """kernel_params of schema 3 records: from the ``nu`` column (the only kernel parameter
    schema 3 recorded, for matern), empty elsewhere."""
    def params(row):
        nu = row.get("nu")
        return f"nu={nu:g}" if row.get("kernel") == "matern" and nu is not None and nu == nu \
            else None

    return [params(r) for r in df[["kernel", "nu"]].to_dict("records")]


#: how each added column is derived for older records (device: every run before schema 5
#: ran on the CPU)
_DERIVE = {"kernel_params": _kernel_params, "device": lambda df: "cpu"}


def upgrade_records(df, version, columns):
    """Schema ``version`` records as this schema's ``columns``: each column added since
    derived (:data:`_DERIVE`) and put in its place.  The ``schema`` column keeps the version
    the run was written with."""
    df = df.copy()
    for v in sorted(ADDED_COLUMNS):
        if v > version:
            for c in ADDED_COLUMNS[v]:
                df[c] = _DERIVE[c](df)
    return df[list(columns)]


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
