"""Constraints on configuration values, declared once and used everywhere.

Each config block (``rffbench.config`` and each measurement's own block), kernel
and feature map declares the values its parameters take in a class attribute
``constraints = {name: Constraint}`` (in the spirit of scikit-learn's
``_parameter_constraints``).  From that one declaration come:

* the check, :func:`check_constraints` (``__post_init__`` of a config block), with
  one wording, ``key=value is not allowed: use ...``;
* the "allowed" column of the configuration reference in the docs
  (:attr:`Constraint.text`);
* the parametrised test of invalid values (:meth:`Constraint.bad_values`), which
  feeds each declared constraint the values it must refuse.

Checks that involve several keys or the data (``dataset.d`` only for synthetic
data, ``D`` even for a cos/sin map) stay written out where they apply.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError


def require(ok, key, value, allowed):
    """ConfigError ``key=value is not allowed: allowed`` unless ``ok``."""
    if not ok:
        raise ConfigError.not_allowed(key, value, f": {allowed}")


def is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def is_real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def positive_number(v):
    return is_real(v) and v > 0


def numbers_list(v, lo=0.0):
    """A non-empty list of finite numbers >= lo."""
    return isinstance(v, (list, tuple)) and len(v) >= 1 and all(
        is_real(a) and a >= lo for a in v)


def as_list(v):
    """A config list (OmegaConf's ListConfig, a tuple) as a plain list; anything else as is."""
    return list(v) if not isinstance(v, (str, bytes, dict)) and hasattr(v, "__iter__") else v


class Constraint:
    """The values one parameter takes: :meth:`ok`, a phrase for messages and docs
    (:attr:`text`, "use ..."), and values it must refuse (:meth:`bad_values`)."""

    def __init__(self, none=False, text=None):
        #: null (None) is allowed too
        self.none = none
        self._text = text

    @property
    def text(self):
        return self._text or self._or_null(self.default_text())

    def default_text(self):
        return ""

    def ok(self, v):
        return (self.none and v is None) or (v is not None and self._ok(v))

    def _ok(self, v):
        raise NotImplementedError

    def message(self):
        return self.text

    def bad_values(self):
        return [] if self.none else [None]

    def _or_null(self, text):
        return text + (" or null" if self.none else "")


class Int(Constraint):
    """An integer in [lo, hi] (hi None: no upper end)."""

    def __init__(self, lo, hi=None, none=False, text=None):
        super().__init__(none, text)
        self.lo, self.hi = lo, hi

    def default_text(self):
        return (f"use an integer >= {self.lo}" if self.hi is None else
                f"use an integer in {self.lo}..{self.hi}")

    def _ok(self, v):
        return is_int(v) and v >= self.lo and (self.hi is None or v <= self.hi)

    def bad_values(self):
        out = super().bad_values() + [self.lo - 1, 2.5, "x", True]
        return out + ([self.hi + 1] if self.hi is not None else [])


class Real(Constraint):
    """A finite number with bounds: ``gt`` / ``ge`` below, ``lt`` / ``le`` above."""

    def __init__(self, gt=None, ge=None, lt=None, le=None, none=False, text=None):
        super().__init__(none, text)
        self.gt, self.ge, self.lt, self.le = gt, ge, lt, le

    def default_text(self):
        gt, ge, lt, le = self.gt, self.ge, self.lt, self.le
        lo, hi = (gt if gt is not None else ge), (lt if lt is not None else le)
        if lo is not None and hi is not None:
            return (f"use a number in {'(' if gt is not None else '['}{lo:g}, {hi:g}"
                    f"{')' if lt is not None else ']'}")
        if lo is not None:
            return f"use a number {'>' if gt is not None else '>='} {lo:g}"
        if hi is not None:
            return f"use a number {'<' if lt is not None else '<='} {hi:g}"
        return "use a finite number"

    def _ok(self, v):
        return is_real(v) and (self.gt is None or v > self.gt) and \
            (self.ge is None or v >= self.ge) and (self.lt is None or v < self.lt) and \
            (self.le is None or v <= self.le)

    def bad_values(self):
        out = super().bad_values() + [float("nan"), float("inf"), "x"]
        for bound, bad in ((self.gt, self.gt), (self.ge, None if self.ge is None else
                                                 self.ge - 1),
                           (self.lt, self.lt), (self.le, None if self.le is None else
                                                 self.le + 1)):
            if bound is not None:
                out.append(bad)
        return out


class OneOf(Constraint):
    """One of listed values (``choices``: a sequence, or a function returning one, for
    the registries whose contents are known only when used)."""

    def __init__(self, choices, none=False, text=None):
        super().__init__(none, text)
        self._choices = choices

    @property
    def choices(self):
        return list(self._choices() if callable(self._choices) else self._choices)

    def default_text(self):
        return "use one of " + ", ".join(map(str, self.choices))

    def _ok(self, v):
        return any(v is c or (v == c and not isinstance(v, bool)) for c in self.choices)

    def bad_values(self):
        return super().bad_values() + ["no_such_value"]


class Numbers(Constraint):
    """A non-empty list of distinct finite numbers >= lo (> lo with ``strict``): a value
    given twice would be measured and recorded twice as two conditions."""

    def __init__(self, lo=0.0, strict=False, none=False, text=None):
        super().__init__(none, text)
        self.lo, self.strict = lo, strict

    def default_text(self):
        return (f"use a non-empty list of distinct numbers {'>' if self.strict else '>='} "
                f"{self.lo:g}")

    def _ok(self, v):
        return numbers_list(v, self.lo) and not (self.strict and any(a == self.lo for a in v)) \
            and len(set(v)) == len(v)

    def bad_values(self):
        return super().bad_values() + [[], [self.lo - 1], [float("nan")], "x",
                                       [self.lo + 1, self.lo + 1]]


class Check(Constraint):
    """Any other test: ``fn(value) -> bool``, its phrase and values it must refuse."""

    def __init__(self, fn, text, bad, none=False):
        super().__init__(none, text)
        self.fn, self._bad = fn, list(bad)

    def _ok(self, v):
        return self.fn(v)

    def bad_values(self):
        return list(self._bad)


#: a true/false parameter (a map's pairs, centre, h01)
BOOL = Check(lambda v: isinstance(v, bool), "use true or false", ["yes", 1, None])


def check_constraints(obj, prefix, constraints=None):
    """ConfigError for the first attribute of ``obj`` (or key of a dict) that breaks its
    declared constraint (``constraints``, default ``obj.constraints``); ``prefix`` is the
    block's key (``dataset``; "" for the top level)."""
    constraints = obj.constraints if constraints is None else constraints
    for name, c in constraints.items():
        v = obj[name] if isinstance(obj, dict) else getattr(obj, name)
        require(c.ok(v), f"{prefix}.{name}" if prefix else name, v, c.message())


class ParamNamesOnce:
    """Mixin, before scikit-learn's ``BaseEstimator`` in the bases: a class's parameter
    names read from its ``__init__`` once, not at every ``get_params`` (scikit-learn reads
    the signature each time: clone, set_params and the checks of a small map's fit and
    transform read it 9 times, a third of their time on a few rows).  The names of a
    class are its ``__init__``'s, which does not change; each subclass reads its own."""

    @classmethod
    def _get_param_names(cls):
        names = cls.__dict__.get("_param_names_once")
        if names is None:
            names = tuple(super()._get_param_names())
            cls._param_names_once = names
        return list(names)


def declared(cls):
    """The constraints a scikit-learn-style class (a kernel, a feature map) declares for
    the parameters it takes: its ``constraints`` and its bases', the subclass's winning."""
    out = {}
    for klass in reversed(cls.__mro__):
        out.update(getattr(klass, "constraints", None) or {})
    takes = set(cls._get_param_names())
    return {k: c for k, c in out.items() if k in takes}


def parameter_docs(cls):
    """{parameter: description} from the numpydoc ``Parameters`` sections of ``cls`` and its
    bases (the subclass's winning): how a kernel's or a map's own parameter is described
    once, in its class, for ``--help``, the configuration reference and the API pages."""
    import inspect

    out = {}
    for klass in reversed(cls.__mro__):
        doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
        lines = doc.splitlines()
        try:
            start = next(i for i in range(len(lines) - 1)
                         if lines[i].strip() == "Parameters" and set(lines[i + 1].strip()) == {"-"})
        except StopIteration:
            continue
        name, text = None, []
        for i, line in enumerate(lines[start + 2:], start + 2):
            if line and not line.startswith(" "):
                if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
                    break  # the next section
                if name:
                    out[name] = " ".join(text)
                name, text = line.split(":")[0].strip(), []
            elif name and line.strip():
                text.append(line.strip())
        if name:
            out[name] = " ".join(text)
    return out


def signature_defaults(cls):
    """{parameter: default} of ``cls``'s constructor."""
    import inspect

    return {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty}


@dataclass(frozen=True)
class Key:
    """A config key a unit declares on its class where its constructor is not its config
    (a dataset source's ``KEYS``, a map's ``CONFIG_PARAMS``): default, constraint,
    description."""

    default: Any = None
    constraint: Any = None
    text: str = ""


def unit_keys(units, keys_of):
    """The config keys a family of registered units declares as :class:`Key` objects
    (``keys_of(unit)``: ``{key: Key}``): ``{key: (default, constraint, description, [unit
    names])}``.  Two units declaring one key with different defaults is a programming error
    (one key, one default); the first unit's constraint is the key's; where units describe
    one key differently, each description is prefixed by the names of the units that give it."""
    out, texts = {}, {}
    for name, unit in units.items():
        for k, key in (keys_of(unit) or {}).items():
            if k in out:
                if out[k][0] != key.default:
                    raise TypeError(f"{name} declares {k}={key.default!r}, "
                                    f"{out[k][3][0]} {k}={out[k][0]!r}: one key, one default")
                out[k][3].append(name)
            else:
                out[k] = (key.default, key.constraint, "", [name])
            texts.setdefault(k, {})[name] = key.text
    for k, by_unit in texts.items():  # one key, a meaning per unit: each, by names
        said = {}
        for name, t in by_unit.items():
            if t:
                said.setdefault(t, []).append(name)
        text = next(iter(said)) if len(said) == 1 else \
            " ".join(f"{', '.join(names)}: {t.rstrip('.')}." for t, names in said.items())
        out[k] = (out[k][0], out[k][1], text, out[k][3])
    return out


def declared_keys(classes, keys_of):
    """The config keys a family of classes declares through their constructors (a kernel's
    own parameters): :func:`unit_keys` of each class's ``keys_of(cls)``, with the
    constructor's default, the declared constraint and the numpydoc description."""
    def keys(cls):
        docs, cons, defaults = parameter_docs(cls), declared(cls), signature_defaults(cls)
        return {k: Key(defaults.get(k), cons.get(k), docs.get(k, "")) for k in keys_of(cls)}

    return unit_keys({cls.name: cls for cls in classes}, keys)


# --------------------------------------------------------------------------
# where a key has an effect
# --------------------------------------------------------------------------
class Applies:
    """Where a config key has an effect, declared beside its block's constraints
    (``applies = {name: Applies(...)}``): ``when(conf)`` is True where the key changes
    what is computed, given the whole checked config ``conf``; ``why(conf)`` says why it
    does not (a phrase naming the key that decides).  A key set to anything but its
    default where it has no effect is refused (:func:`check_effects`): it would be
    recorded as a condition of runs that it did not change."""

    def __init__(self, when, why):
        self.when, self._why = when, why

    def why(self, conf):
        return self._why(conf) if callable(self._why) else self._why


def field_default(obj, name):
    """The default of dataclass field ``name`` of ``obj``'s class."""
    import dataclasses

    f = obj.__dataclass_fields__[name]
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else None


def is_default(obj, name):
    """Does field ``name`` of dataclass ``obj`` hold its default?"""
    return getattr(obj, name) == field_default(obj, name)


def check_effects(block, prefix, conf, applies=None):
    """ConfigError for the first key of ``block`` (a config dataclass) that is not at its
    default where it has no effect (``applies``, default ``block.applies``), naming it and
    why: ``features.sequence='halton' is not allowed: it has no effect here (...)``."""
    for name, a in (block.applies if applies is None else applies).items():
        if not is_default(block, name) and not a.when(conf):
            key = f"{prefix}.{name}" if prefix else name
            default = field_default(block, name)
            raise ConfigError(f"{key}={getattr(block, name)!r} is not allowed: it has no "
                              f"effect here ({a.why(conf)}); leave it at its default "
                              + ("(null)" if default is None else repr(default)))


#: the most timed repeats of a call: a median over more measures nothing more, and
#: measure.timing.repeats=10^23 ran for ever
MAX_REPEATS = 10000

#: a measurement's n_points
N_POINTS = Int(2, none=True, text="use an integer >= 2 (at most the training-set size) or null")


def takes_text(who, block, k, names):
    """``who takes a, b (did you mean block.a?)``: the further parameters a class takes."""
    near = closest(k, names)
    return (f"{who} takes " + (", ".join(names) if names else "no further parameters")
            + (f" (did you mean {block}.{near}?)" if near else ""))


def closest(word, choices):
    """The closest of ``choices`` to ``word`` (difflib), or None."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return close[0] if close else None
