"""rffbench/published/safe.py: pickles read without running anything."""
import io
import os
import pickle
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from rffbench.published.safe import UnsafePickleError, load_arrays
from tests.published.common import BUECHEL, Evil


class _Sub(np.ndarray):
    pass


@pytest.mark.parametrize("payload,match", [
    (Evil(), "names posix.system"),
    ({"a": [np.zeros(3), Evil()]}, "names posix.system"),
    (np.array([1, "a", None], dtype=object), "refused: dtype object"),
    (np.zeros(3).view(_Sub), r"names (tests\.published\.)?test_safe\._Sub"),
    (pd.Series([1.0, 2.0]), "names pandas"),
    ({"when": np.datetime64("2020-01-01")}, "refused"),
])
def test_restricted_reader_refuses_anything_but_numeric_arrays(payload, match):
    blob = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    with pytest.raises(UnsafePickleError, match=match):
        load_arrays(blob)


def test_restricted_reader_refuses_persistent_ids():
    class P(pickle.Pickler):
        def persistent_id(self, obj):
            return "x" if isinstance(obj, str) else None

    buf = io.BytesIO()
    P(buf).dump({"a": "b"})
    with pytest.raises(UnsafePickleError, match="persistent ids"):
        load_arrays(buf.getvalue())


@pytest.mark.parametrize("protocol", [2, 3, pickle.HIGHEST_PROTOCOL])
def test_restricted_reader_returns_arrays_in_plain_containers(protocol, tmp_path):
    data = {"LETTER": {"RBF": {"B": np.arange(10.0).reshape(5, 2)}},
            "x": [np.int64(3), (np.arange(4, dtype=np.float32), "s")]}
    path = tmp_path / "p"
    path.write_bytes(pickle.dumps(data, protocol=protocol))
    got = load_arrays(path)
    np.testing.assert_array_equal(got["LETTER"]["RBF"]["B"], data["LETTER"]["RBF"]["B"])
    assert got["x"][1][0].dtype == np.float32 and got["x"][1][1] == "s"


def test_the_numbers_reader_rebuilds_their_defaultdicts_as_plain_dicts_without_running_them(
        tmp_path, monkeypatch):
    """A dill pickle of defaultdict(lambda: ...) as theirs: the numbers come back in plain
    dicts, the lambda is never made (a missing key is a KeyError, not a call of it)."""
    import dill

    from rffbench.published.safe import load_numbers

    marker = tmp_path / "RAN"
    monkeypatch.setenv("RFFBENCH_TEST_MARKER", str(marker))
    # no closure (as theirs): the lambda's globals are this module's
    inner = defaultdict(lambda: open(os.environ["RFFBENCH_TEST_MARKER"], "w"))
    inner[1] = [0.25, 0.5]
    data = {"rff": defaultdict(lambda: defaultdict(list), {"rbf": inner})}
    got = load_numbers(dill.dumps(data))
    assert got == {"rff": {"rbf": {1: [0.25, 0.5]}}}
    assert type(got["rff"]) is dict and type(got["rff"]["rbf"]) is dict
    with pytest.raises(KeyError):
        got["rff"]["rbf"][2]
    assert not marker.exists()
    theirs = load_numbers(BUECHEL / "letter" / "fp_err.pkl")
    assert set(theirs) == {"rff", "orf", "sorf"}
    assert all(len(v) == 10 for k in theirs.values() for s in k.values() for v in s.values())
