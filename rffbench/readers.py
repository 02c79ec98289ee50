"""Reading the small files of a sweep folder, bounded.

Sweep folders travel between people, so every file rffbench reads back from one (a run's
``config.json``, a job's ticket, a claim, Hydra's ``multirun.yaml``, a records table) may
have been cut, edited or crafted.  Each reader here has limits (bytes, nesting depth,
YAML aliases and the nodes they expand to) and, past one, says the file is damaged in
one line naming it (:class:`DamagedFile`), instead of hanging, filling the memory or
raising a RecursionError or UnicodeDecodeError.  None of them runs anything from the file,
and none opens anything but a regular file (:func:`open_regular`, :func:`regular_file`: a
FIFO would block the reader for ever, a device never end).
"""
from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

from .errors import RffbenchError, first_line

#: the largest JSON file of a sweep that is read (configs are ~3 KB, tickets and claims
#: ~200 bytes)
MAX_JSON_BYTES = 1 << 20
#: JSON nesting deeper than this is not a file rffbench wrote (a config nests 4 deep)
MAX_JSON_DEPTH = 64
#: the largest multirun.yaml that is read (Hydra writes a few KB)
MAX_YAML_BYTES = 4 << 20
#: YAML nodes after expanding aliases (Hydra's multirun.yaml has a few hundred and no
#: aliases; a few lines of anchors and aliases can stand for billions)
MAX_YAML_NODES = 200_000


class DamagedFile(RffbenchError):
    """A file that cannot be what it should be: its path and why, in one line."""

    def __init__(self, path, reason, other_shape=False):
        self.path, self.reason = Path(path), reason
        #: readable JSON, of another shape than the file's (rather than no JSON at all)
        self.other_shape = other_shape
        super().__init__(f"{path}: {reason}")


#: what a path that is not a regular file is, for the one line
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


def _not_regular(path, mode):
    kind = next((k for test, k in _KINDS if test(mode)), "not a regular file")
    return DamagedFile(path, f"{kind}, not a regular file: rffbench reads only files (a "
                             "pipe or a device would block the reader or never end)")


def regular_file(path):
    """``path``, checked to name a regular file (symbolic links followed) before a library
    opens it by name; DamagedFile (one line) for a FIFO, a device, a socket or a directory,
    which a reader would wait on for ever or read without end; OSError as raised."""
    st = os.stat(path)  # never blocks, whatever the file is
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    return path


def open_regular(path):
    """``path`` opened for binary reading, refused unless it is a regular file: opened
    without blocking (a FIFO with no writer would block ``open`` itself), its type checked
    on the open descriptor (no window in which it could be swapped), then read normally.
    DamagedFile as :func:`regular_file`; OSError as raised."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, limit):
    """The bytes of ``path``, at most ``limit`` of them (DamagedFile past it, or when it is
    not a regular file: :func:`open_regular`; OSError as raised)."""
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise DamagedFile(path, f"larger than {limit:,} bytes: not a file rffbench wrote")
    return data


def read_text(path, limit):
    """The UTF-8 text of ``path`` (:func:`read_bytes`; DamagedFile when not UTF-8)."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DamagedFile(path, f"not UTF-8 text (byte {exc.start})") from None


def numbers(column):
    """(a pandas column as numbers, the position of its first entry that is not a number,
    or None): what a reader of a table checks before it trusts a numeric column."""
    import pandas as pd

    num = pd.to_numeric(column, errors="coerce")
    bad = (num.isna() & column.notna()).to_numpy()
    return num, (int(bad.argmax()) if bad.any() else None)


def json_depth(text):
    """The nesting depth of JSON ``text`` ([] and {} outside strings), in one pass."""
    depth = top = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            top = max(top, depth)
        elif ch in "]}":
            depth -= 1
    return top


def parse_json(text, where="", max_depth=MAX_JSON_DEPTH):
    """JSON ``text`` parsed; DamagedFile (naming ``where``) when it is not JSON or nests
    deeper than ``max_depth``."""
    if json_depth(text) > max_depth:
        raise DamagedFile(where, f"JSON nested more than {max_depth} deep: not a file "
                                 "rffbench wrote")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise DamagedFile(where, f"not JSON ({first_line(exc, limit=80)})") from None


def shaped(obj, shape):
    """``obj`` if it is a JSON object whose keys in ``shape`` (key -> allowed types; a list
    ``[type]`` = a list of those) have those types when present, else None."""
    if not isinstance(obj, dict):
        return None
    for key, kind in shape.items():
        if key not in obj:
            continue
        v = obj[key]
        if isinstance(kind, list):
            if not (isinstance(v, list) and all(isinstance(x, kind[0]) for x in v)):
                return None
        elif not isinstance(v, kind):
            return None
    return obj


def read_json(path, shape, limit=MAX_JSON_BYTES):
    """The JSON object of ``path`` in ``shape`` (:func:`shaped`); DamagedFile otherwise
    (too large, not UTF-8, not JSON, too deep, another shape); OSError as raised."""
    obj = shaped(parse_json(read_text(path, limit), path), shape)
    if obj is None:
        raise DamagedFile(path, "a JSON value of another shape than "
                                + ", ".join(f"{k}: {_kind(v)}" for k, v in shape.items()),
                          other_shape=True)
    return obj


def _kind(kind):
    if isinstance(kind, list):
        return f"a list of {_kind(kind[0])}"
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "text", int: "an integer", dict: "an object", list: "a list",
             type(None): "null", float: "a number", bool: "true/false"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def yaml_nodes(text, where="", limit=MAX_YAML_NODES):
    """Check that YAML ``text`` stays small once its aliases are expanded (each alias
    counts the nodes of what it points to): DamagedFile past ``limit`` nodes or when it is
    not YAML.  Counted on the composed node graph, memoised, without building anything."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise DamagedFile(where, f"not YAML ({first_line(exc, limit=80)})") from None
    except RecursionError:
        raise DamagedFile(where, "YAML nested too deep: not a file Hydra wrote") from None
    sizes = {}
    # post-order over the node graph without recursion: a node's expanded size is itself
    # plus its children's, each child counted as often as it is referenced
    stack = [(root, False)] if root is not None else []
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in sizes and not done:
            continue
        children = []
        if isinstance(node, yaml.MappingNode):
            children = [c for pair in node.value for c in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        if not done:
            if len(stack) > limit:
                raise DamagedFile(where, f"YAML nested more than {limit:,} deep")
            sizes[key] = None  # in progress
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        total = 1
        for c in children:
            s = sizes.get(id(c))
            if s is None:  # a cycle (an alias to an ancestor): unbounded when expanded
                raise DamagedFile(where, "YAML aliases refer to their own ancestors")
            total += s
            if total > limit:
                raise DamagedFile(where, f"YAML that expands to more than {limit:,} nodes "
                                         "(aliases): not a file Hydra wrote")
        sizes[key] = total
    return sizes.get(id(root), 0)


#: the largest table a report reads back (records.csv, a run's extra tables): a run writes
#: kilobytes to a few megabytes
MAX_TABLE_BYTES = 256 << 20


def read_table(path, columns=(), limit=MAX_TABLE_BYTES):
    """A CSV table a run wrote (bounded: size, UTF-8, parseable, with ``columns``); a
    pandas DataFrame, DamagedFile otherwise (OSError as raised)."""
    import pandas as pd

    text = read_text(path, limit)
    try:
        df = pd.read_csv(io.StringIO(text))
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DamagedFile(path, f"not a table ({first_line(exc, limit=80)})") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DamagedFile(path, f"no column {missing[0]!r}: not the table rffbench wrote")
    return df
