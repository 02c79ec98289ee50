"""Reading pickled numbers from downloaded files without running their code.

``pickle.load`` on a file from the internet can run anything: a pickle names callables
(``os.system``) and calls them.  :func:`load_arrays` reads only what a pickle of numpy
arrays in plain containers needs: the numpy names that rebuild an array
(``_reconstruct`` with ``ndarray``, or protocol 5's ``_frombuffer``, and ``dtype``, each
wrapped and checked; numeric numpy scalars; protocol 2's ``_codecs.encode`` of latin-1
text into bytes) and the pickle
protocol's own dicts, lists, tuples, strings and numbers.  Any other name, a persistent
id, an object dtype or a non-array object in the result is refused with
:class:`UnsafePickleError` before it can be called.

:func:`load_numbers` reads the numbers of a *dill* pickle of (default)dicts of lists, as
Büchel et al. stored theirs: dill writes a ``defaultdict(lambda: ...)`` as the lambda's
code object, rebuilt by ``dill._dill._create_code`` and ``_create_function`` with the
``__main__`` module as its globals.  Those names resolve to inert stand-ins: the code's
bytes are never made into code, the function is never made, and calling a stand-in (a
pickle's REDUCE of one) is refused; ``collections.defaultdict`` becomes a plain dict
(its factory dropped).
"""
from __future__ import annotations

import io
import pickle

import numpy as np

from ..readers import open_regular

#: where numpy pickles point for the array rebuilder (numpy < 2 and >= 2), and for the
#: buffer-based one of pickle protocol 5
_RECONSTRUCT = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray",
                                                             "_reconstruct")}
_FROMBUFFER = {("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer")}
_SCALAR = {("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar")}
#: what a result may hold
_PLAIN = (dict, list, tuple, str, bytes, int, float, bool, type(None))


class UnsafePickleError(pickle.UnpicklingError):
    """A pickle holds something other than numpy arrays in plain containers."""


class _NdarrayName:
    """What the pickle gets for ``numpy.ndarray``: accepted only as the type that
    ``_reconstruct`` rebuilds, never called."""


_NDARRAY = _NdarrayName()


def _reconstruct(subtype, shape, dtype_code):
    if subtype is not _NDARRAY:
        raise UnsafePickleError("refused: _reconstruct of something other than numpy.ndarray")
    if not (isinstance(shape, tuple) and all(isinstance(s, int) for s in shape)
            and sum(shape) == 0):
        raise UnsafePickleError(f"refused: _reconstruct with shape {shape!r} (numpy pickles "
                                "start from an empty array)")
    return np.ndarray.__new__(np.ndarray, shape, "b")


def _frombuffer(buf, dtype, shape, order):
    if not isinstance(dtype, np.dtype) or dtype.hasobject or dtype.kind not in "biufc":
        raise UnsafePickleError(f"refused: _frombuffer with dtype {dtype!r}")
    if not isinstance(buf, (bytes, bytearray, pickle.PickleBuffer)):
        raise UnsafePickleError(f"refused: _frombuffer of a {type(buf).__name__}")
    if not (isinstance(shape, tuple) and all(isinstance(n, int) and n >= 0 for n in shape)
            and order in ("C", "F")):
        raise UnsafePickleError(f"refused: _frombuffer with shape {shape!r}, order {order!r}")
    return np.frombuffer(bytes(buf), dtype=dtype).reshape(shape, order=order).copy()


def _scalar(dtype, data=None):
    """numpy scalars: multiarray.scalar(dtype, raw bytes)."""
    if not isinstance(dtype, np.dtype) or dtype.hasobject or dtype.kind not in "biufc" \
            or not isinstance(data, bytes) or len(data) != dtype.itemsize:
        raise UnsafePickleError(f"refused: a numpy scalar of dtype {dtype!r}")
    return np.frombuffer(data, dtype=dtype)[0]


def _latin1_bytes(text, encoding):
    """Protocol 2 writes bytes as _codecs.encode(text, "latin1")."""
    if not isinstance(text, str) or encoding != "latin1":
        raise UnsafePickleError(f"refused: _codecs.encode({type(text).__name__}, {encoding!r})")
    return text.encode("latin1")


def _dtype(spec, *args):
    if not isinstance(spec, str):
        raise UnsafePickleError(f"refused: dtype({spec!r})")
    dt = np.dtype(spec, *args)
    if dt.hasobject or dt.kind not in "biufc":
        raise UnsafePickleError(f"refused: dtype {dt} (only numeric arrays are read)")
    return dt


class ArraysOnlyUnpickler(pickle.Unpickler):
    """An Unpickler that resolves only the names numpy's arrays need (module docs)."""

    def find_class(self, module, name):
        if (module, name) in _RECONSTRUCT:
            return _reconstruct
        if (module, name) in _FROMBUFFER:
            return _frombuffer
        if (module, name) == ("numpy", "ndarray"):
            return _NDARRAY
        if (module, name) == ("numpy", "dtype"):
            return _dtype
        if (module, name) == ("_codecs", "encode"):
            return _latin1_bytes
        if (module, name) in _SCALAR:
            return _scalar
        raise UnsafePickleError(f"refused: the pickle names {module}.{name}; only numpy "
                                "arrays in dicts, lists and tuples are read")

    def persistent_load(self, pid):
        raise UnsafePickleError("refused: the pickle uses persistent ids")


#: what a result may expand to: containers and arrays counted as often as they are
#: referenced (a small pickle can reference one list from two places, 60 levels deep:
#: 2^60 paths), and how deep containers may nest
MAX_OBJECTS = 1_000_000
MAX_DEPTH = 100


def _check(obj, where="the pickle"):
    """UnsafePickleError unless ``obj`` is numeric arrays in plain containers, nesting at
    most MAX_DEPTH deep and expanding to at most MAX_OBJECTS objects when every shared
    reference is followed (computed once per object: no walk of the 2^n paths)."""
    size = {}  # id -> expanded object count (None while its children are being checked)
    keep = []  # the objects whose ids are in size (an id is unique while its object lives)
    stack = [(obj, where, 0, False)]
    while stack:
        o, at, depth, done = stack.pop()
        if isinstance(o, (np.ndarray, np.generic)):
            if o.dtype.hasobject or o.dtype.kind not in "biufc":
                raise UnsafePickleError(f"refused: {at} holds an array of dtype {o.dtype}")
            continue
        if isinstance(o, _NdarrayName) or not isinstance(o, _PLAIN):
            raise UnsafePickleError(f"refused: {at} holds a {type(o).__name__}")
        if not isinstance(o, (dict, list, tuple)):
            continue
        children = [x for kv in o.items() for x in kv] if isinstance(o, dict) else list(o)
        if done:
            total = 1
            for c in children:
                n = size.get(id(c), 1)
                if n is None:
                    raise UnsafePickleError(f"refused: {at} contains itself")
                total += n
            if total > MAX_OBJECTS:
                raise UnsafePickleError(f"refused: {where} expands to more than "
                                        f"{MAX_OBJECTS:,} objects (shared references)")
            size[id(o)] = total
            continue
        if id(o) in size:
            if size[id(o)] is None:
                raise UnsafePickleError(f"refused: {at} contains itself")
            continue
        if depth >= MAX_DEPTH:
            raise UnsafePickleError(f"refused: {where} nests containers more than "
                                    f"{MAX_DEPTH} deep")
        size[id(o)] = None
        keep.append(o)
        stack.append((o, at, depth, True))
        if isinstance(o, dict):
            stack.extend((v, f"{at}[{k!r}]", depth + 1, False) for k, v in o.items())
            stack.extend((k, at, depth + 1, False) for k in o)
        else:
            stack.extend((v, f"{at}[{i}]", depth + 1, False) for i, v in enumerate(o))


def load_arrays(source):
    """The numpy arrays (in dicts, lists, tuples) of a pickle: a path, bytes or a binary
    file; :class:`UnsafePickleError` for anything else.  Nothing in the file is run.

    Parameters
    ----------
    source : str, Path, bytes or binary file
        The pickle.

    Returns
    -------
    object
        The arrays in their containers.
    """
    if isinstance(source, (bytes, bytearray)):
        fh = io.BytesIO(source)
    elif hasattr(source, "read"):
        fh = source
    else:
        fh = open_regular(source)  # a FIFO or a device: one line, not a reader that hangs
    try:
        obj = ArraysOnlyUnpickler(fh, encoding="latin1").load()
    finally:
        if fh is not source:
            fh.close()
    _check(obj)
    return obj


# --------------------------------------------------------------------------
# dill pickles of dicts of numbers
# --------------------------------------------------------------------------
#: the largest pickle load_numbers reads (their files are 3.5 KB)
MAX_NUMBERS_BYTES = 16 << 20
#: the types dill's _load_type may name in a pickle of dicts of lists
_TYPE_NAMES = {"list", "dict", "tuple", "float", "int"}


class _Inert:
    """What a dill function, code object, type or module name becomes: a label, never
    callable (REDUCE of it fails), its BUILD state ignored."""

    def __init__(self, what):
        self.what = what

    def __setstate__(self, state):
        pass

    def __repr__(self):
        return f"<inert {self.what}>"


def _create_code(*args):
    return _Inert("code object (not made)")


def _create_cell(*args):
    return _Inert("closure cell (not made)")


def _create_function(code=None, *args):
    if not isinstance(code, _Inert):
        raise UnsafePickleError("refused: dill._create_function of something other than "
                                "dill's own code record")
    return _Inert("function (not made)")


def _load_type(name):
    if name not in _TYPE_NAMES:
        raise UnsafePickleError(f"refused: dill._load_type({name!r}); only "
                                f"{', '.join(sorted(_TYPE_NAMES))} are read")
    return _Inert(f"type {name}")


def _defaultdict(factory=None, *items):
    if items or not (factory is None or isinstance(factory, _Inert)):
        raise UnsafePickleError("refused: defaultdict with a factory that is not an inert "
                                "stand-in")
    return {}


#: (module, name) -> stand-in; a lambda's globals (``__builtin__.__main__`` for a script's,
#: ``module.__dict__`` for a module's) become labels, their modules never imported
_DILL_NAMES = {("collections", "defaultdict"): _defaultdict,
               ("dill._dill", "_create_code"): _create_code,
               ("dill._dill", "_create_cell"): _create_cell,
               ("dill._dill", "_create_function"): _create_function,
               ("dill._dill", "_load_type"): _load_type}
_MAIN = {("__builtin__", "__main__"), ("builtins", "__main__")}


class NumbersOnlyUnpickler(pickle.Unpickler):
    """An Unpickler for dill's pickles of (default)dicts of numbers (module docs)."""

    def find_class(self, module, name):
        if (module, name) in _DILL_NAMES:
            return _DILL_NAMES[(module, name)]
        if (module, name) in _MAIN or name == "__dict__":  # a lambda's globals (not imported)
            return _Inert(f"globals of {module}")
        raise UnsafePickleError(f"refused: the pickle names {module}.{name}; only numbers in "
                                "dicts and lists (dill's defaultdicts of lambdas) are read")

    def persistent_load(self, pid):
        raise UnsafePickleError("refused: the pickle uses persistent ids")


def load_numbers(source, limit=MAX_NUMBERS_BYTES):
    """The numbers of a (dill) pickle of dicts, lists and tuples: a path or bytes.
    :class:`UnsafePickleError` (one line) for a file larger than ``limit`` bytes, a name
    outside the stand-ins, a call of a stand-in, a function or anything but plain
    containers of numbers and strings in the result, or bytes that are not a pickle.
    Nothing in the file is run."""
    if isinstance(source, (bytes, bytearray)):
        data = bytes(source)
    else:
        with open_regular(source) as fh:
            data = fh.read(limit + 1)
    if len(data) > limit:
        raise UnsafePickleError(f"refused: larger than {limit:,} bytes")
    try:
        obj = NumbersOnlyUnpickler(io.BytesIO(data), encoding="latin1").load()
    except UnsafePickleError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # cut or crafted: pickle's own errors, or a stand-in called
        raise UnsafePickleError(f"refused: not a readable pickle of numbers "
                                f"({type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else ''})"
                                ) from None
    _check(obj)
    return obj
