"""rffbench/checks.py: the kinds of constraint (each one's phrase, the values it takes and
those it must refuse), the one-line refusal, the effect rule and the nearest name."""
import re
from dataclasses import dataclass

import numpy as np
import pytest
from omegaconf import OmegaConf

from rffbench.checks import (
    BOOL,
    Applies,
    Check,
    Int,
    Numbers,
    OneOf,
    Real,
    as_list,
    check_constraints,
    check_effects,
    closest,
    is_int,
    is_real,
    takes_text,
)
from rffbench.errors import ConfigError


@pytest.mark.parametrize("c,good,text", [
    (Int(1), [1, 7], "use an integer >= 1"),
    (Int(1, 20, none=True), [None, 1, 20], "use an integer in 1..20 or null"),
    (Real(gt=0, lt=1), [0.5, 1e-9], "use a number in (0, 1)"),
    (Real(ge=0), [0, 3.5], "use a number >= 0"),
    (Real(le=2), [-5, 2], "use a number <= 2"),
    (Real(), [-1e300, 0], "use a finite number"),
    (OneOf(("a", "b")), ["a", "b"], "use one of a, b"),
    (OneOf(lambda: [1, 2]), [1, 2], "use one of 1, 2"),
    (Numbers(lo=0, strict=True), [[0.5, 2]], "use a non-empty list of distinct numbers > 0"),
    (BOOL, [True, False], "use true or false"),
])
def test_constraint_kinds(c, good, text):
    assert c.text == text
    assert all(c.ok(v) for v in good)
    assert not any(c.ok(v) for v in c.bad_values())
    with pytest.raises(ConfigError, match=re.escape(f"k.v={c.bad_values()[0]!r} is not allowed: "
                                                    f"{text}")):
        check_constraints({"v": c.bad_values()[0]}, "k", {"v": c})


def test_a_bool_is_no_number_and_no_choice_of_one():
    assert not is_int(True) and not is_real(False) and is_int(np.int64(3))
    assert not is_real(float("nan")) and not is_real(float("inf")) and is_real(np.float32(1))
    assert not OneOf([1, 0]).ok(True) and OneOf([True, False]).ok(True)
    assert not Int(0).ok(True) and not Real(ge=0).ok(False)


def test_numbers_refuse_a_value_given_twice_and_the_strict_lower_end():
    c = Numbers(lo=1.0, strict=True)
    assert c.ok([1.5, 2.0]) and not c.ok([2.0, 2.0]) and not c.ok([1.0, 2.0])
    assert Numbers(lo=1.0).ok([1.0]) and not Numbers().ok([])


def test_a_written_out_check_and_a_text_of_its_own():
    c = Check(lambda v: v in ("x", "y"), "use x or y", ["z"])
    assert c.ok("x") and not c.ok("z") and c.bad_values() == ["z"] and c.text == "use x or y"
    assert Int(2, none=True, text="use 2 or more").text == "use 2 or more"


def test_the_first_broken_key_is_named_with_its_block():
    cs = {"a": Int(1), "b": Real(gt=0)}
    check_constraints({"a": 1, "b": 0.5}, "blk", cs)
    with pytest.raises(ConfigError, match=r"^blk\.b=-1 is not allowed: use a number > 0$"):
        check_constraints({"a": 1, "b": -1}, "blk", cs)
    with pytest.raises(ConfigError, match=r"^a=0 is not allowed: use an integer >= 1$"):
        check_constraints({"a": 0, "b": -1}, "", cs)  # the top level: no prefix


@dataclass
class _Block:
    mode: str = "plain"
    width: int = 3
    applies = {"width": Applies(lambda conf: conf["mode"] == "wide",
                                lambda conf: f"mode={conf['mode']} has no width")}


def test_a_key_set_where_it_has_no_effect_is_refused_naming_why():
    check_effects(_Block(mode="wide", width=9), "blk", {"mode": "wide"})
    check_effects(_Block(width=3), "blk", {"mode": "plain"})  # its default: no condition
    with pytest.raises(ConfigError) as err:
        check_effects(_Block(width=9), "blk", {"mode": "plain"})
    assert str(err.value) == ("blk.width=9 is not allowed: it has no effect here (mode=plain "
                              "has no width); leave it at its default 3")


def test_the_nearest_name_is_offered_when_there_is_one():
    assert closest("lenghtscale", ["lengthscale", "gamma"]) == "lengthscale"
    assert closest("zzz", ["lengthscale", "gamma"]) is None
    assert takes_text("rff", "features", "n_compnents", ["n_components", "pairs"]) == (
        "rff takes n_components, pairs (did you mean features.n_components?)")
    assert takes_text("linear", "kernel", "x", []) == "linear takes no further parameters"


def test_config_lists_become_plain_lists_and_nothing_else_changes():
    assert as_list(OmegaConf.create({"v": [1, 2]}).v) == [1, 2]
    assert as_list((1, 2)) == [1, 2]
    for v in ("ab", b"ab", {"a": 1}, 3, None):
        assert as_list(v) is v


def test_parameter_names_are_read_once_per_class_and_each_subclass_reads_its_own(
        monkeypatch):
    """ParamNamesOnce: the names scikit-learn reads from __init__, read once per class
    (get_params and clone read no signature again), for every class of its own (a
    subclass's read does not replace its base's; a caller's change to the list does not
    reach the next), and for every registered map and kernel."""
    import inspect

    from sklearn.base import BaseEstimator, clone

    from rffbench.checks import ParamNamesOnce
    from rffbench.features import FEATURE_MAPS
    from rffbench.kernels import KERNELS

    class A(ParamNamesOnce, BaseEstimator):
        def __init__(self, a=1, b=2):
            self.a, self.b = a, b

    class B(A):
        def __init__(self, a=1, b=2, c=3):
            super().__init__(a, b)
            self.c = c

    def sklearns(cls):
        return BaseEstimator._get_param_names.__func__(cls)

    assert A._get_param_names() == ["a", "b"] == sklearns(A)
    assert B._get_param_names() == ["a", "b", "c"] == sklearns(B)
    assert A._get_param_names() == ["a", "b"]
    A._get_param_names().append("x")
    assert A._get_param_names() == ["a", "b"]
    read = []
    signature = inspect.signature
    monkeypatch.setattr(inspect, "signature", lambda *a, **k: read.append(a) or signature(*a, **k))
    assert clone(B(c=5)).set_params(a=4).get_params() == {"a": 4, "b": 2, "c": 5}
    assert read == []
    monkeypatch.undo()
    for cls in [*FEATURE_MAPS.values(), *KERNELS.values()]:
        assert cls._get_param_names() == sklearns(cls), cls
