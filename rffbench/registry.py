"""Name -> object registries with plug-ins: ``FEATURE_MAPS``, ``KERNELS``, ``DATASETS``,
``MODELS`` (and ``MEASUREMENTS``, rffbench.measure).

A registry is a read-only mapping.  A name is found, in this order:

1. among rffbench's own entries;
2. among the installed packages' entry points of the registry's group
   (``rffbench.feature_maps``, ``rffbench.kernels``, ``rffbench.datasets``,
   ``rffbench.models``), e.g.
   in a plug-in's ``pyproject.toml``::

       [project.entry-points."rffbench.feature_maps"]
       stratified_rff = "my_package.maps:StratifiedRFF"

3. as an import path ``"package.module:attribute"`` (not listed, found on use),
   e.g. ``features.name=my_package.maps:StratifiedRFF`` on the command line.

Names read from files (records, config.json, shared sweep folders) resolve with
:meth:`Registry.installed`: only 1 and 2, never an import path, so reading results
never imports anything from where they came from.

Iterating lists 1 and 2 (entry points by their metadata: nothing is imported
until a name is used).  A plug-in that fails to import, or an object of the
wrong kind, raises a one-line :class:`~rffbench.errors.ConfigError` naming it.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import sys
from collections.abc import Mapping
from importlib.metadata import entry_points

from .errors import ConfigError, first_line


def _import_path(path):
    module, _, attr = path.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


#: every Registry by its entry-point group, so that code below a registry's package (a
#: map's base class naming the maps of a kernel) finds it without importing upwards
REGISTRIES = {}


def registry(group):
    """The Registry of entry-point ``group`` (created when its package was imported)."""
    return REGISTRIES[group]


class Registry(Mapping):
    """Built-in entries plus entry points of ``group`` plus import paths (module docs).

    ``key`` is the config key that selects an entry (for messages); ``check(name, obj)``
    raises ConfigError if a plug-in's object is not of the registry's kind.
    """

    def __init__(self, group, key, builtins, check=None):
        self.group = group
        self.key = key
        self._builtins = dict(builtins)
        self._check = check
        self._loaded = {}
        REGISTRIES[group] = self

    # -- where names come from -----------------------------------------------
    def builtins(self):
        """rffbench's own entries (no plug-in is loaded)."""
        return dict(self._builtins)

    def plugin_names(self):
        """Entry-point names of installed plug-ins (builtins win on a clash)."""
        return {ep.name: ep for ep in entry_points(group=self.group)
                if ep.name not in self._builtins}

    @staticmethod
    def is_import_path(name):
        return isinstance(name, str) and ":" in name and not name.startswith(":")

    def origin(self, name):
        """'rffbench', the distribution that provides the entry point, or 'import path'."""
        if name in self._builtins:
            return "rffbench"
        ep = self.plugin_names().get(name)
        if ep is not None:
            dist = getattr(ep, "dist", None)
            return f"plug-in {dist.name if dist else ep.value}"
        return "import path"

    def describe(self, name):
        """Who provides ``name``, for messages: "rffbench's own", "plug-in DIST, entry point
        GROUP: NAME = VALUE" or "import path NAME"."""
        if name in self._builtins:
            return "rffbench's own"
        ep = self.plugin_names().get(name)
        if ep is not None:
            dist = getattr(ep, "dist", None)
            return (f"plug-in {dist.name if dist else '?'}, entry point {self.group}: "
                    f"{ep.name} = {ep.value}")
        return f"import path {name}"

    def _load(self, name):
        if name in self._loaded:
            return self._loaded[name]
        ep = self.plugin_names().get(name)
        what = f"{self.key}={name!r}"
        if ep is None and not self.is_import_path(name):
            raise KeyError(name)
        printed = io.StringIO()
        try:  # what the module prints while it is imported is shown after, or in the line
            with contextlib.redirect_stderr(printed), contextlib.redirect_stdout(printed):
                obj = ep.load() if ep is not None else _import_path(name)
        except (Exception, SystemExit) as exc:  # SystemExit: a module that exits, or parses
            src = f"entry point {ep.value!r} of {self.group}" if ep is not None \
                else "the import path (package.module:attribute)"  # the command line, on import
            first = first_line(exc)
            said = first_line((printed.getvalue().strip().splitlines() or [""])[-1])
            why = (" (the module exits when it is imported: a script's code outside `if "
                   "__name__ == '__main__':`?" + (f" It printed: {said!r}" if said else "")
                   + ")" if isinstance(exc, SystemExit) else "")
            raise ConfigError(f"{what}: cannot load {src}: {type(exc).__name__}: "
                              f"{first}{why}") from None
        sys.stderr.write(printed.getvalue())
        if self._check is not None:
            self._check(name, obj)
        self._loaded[name] = obj
        return obj

    # -- Mapping -------------------------------------------------------------
    def __getitem__(self, name):
        if name in self._builtins:
            return self._builtins[name]
        return self._load(name)

    def __contains__(self, name):
        if not isinstance(name, str):
            return False
        if name in self._builtins or name in self.plugin_names():
            return True
        if self.is_import_path(name):
            self._load(name)  # raises ConfigError (naming why) if it does not load
            return True
        return False

    def __iter__(self):
        yield from self._builtins
        yield from self.plugin_names()

    def __len__(self):
        return len(self._builtins) + len(self.plugin_names())

    def find(self, name):
        """The entry, or None if it is unknown or does not load here (e.g. a report read
        where the plug-in that made the runs is not installed)."""
        try:
            return self[name] if name in self else None
        except ConfigError:
            return None

    def installed(self, name):
        """The entry if ``name`` is built in or an installed plug-in's entry point, else
        None.  Never follows an import path: this is how names read from files (records,
        config.json, a shared sweep folder) resolve, so that reading results runs no code
        from the folder they came with.  Import paths are a command-line feature."""
        if not isinstance(name, str):
            return None
        if name in self._builtins:
            return self._builtins[name]
        if name not in self.plugin_names():
            return None
        try:
            return self._load(name)
        except ConfigError:
            return None

    def get_or_raise(self, name, key=None):
        """The entry, or a ConfigError naming the key, the value and the choices."""
        if name not in self:
            raise ConfigError(f"{key or self.key}={name!r} is not allowed: use one of "
                              f"{', '.join(self)}, a plug-in's entry point in {self.group!r} "
                              "or an import path package.module:name")
        return self[name]


def unimplemented(cls, base, hooks):
    """The methods ``cls`` leaves to ``base``: ``hooks`` lists what it must implement, each
    a tuple of alternatives (e.g. ``("_fit", "fit")``); returns the tuples of which it
    implements none (empty: nothing missing)."""
    return [alts for alts in hooks if all(getattr(cls, h) is getattr(base, h) for h in alts)]


def subclass_check(base, kind, hooks=()):
    """A ``check`` for Registry: the object must be a subclass of ``base`` that implements
    ``hooks`` (:func:`unimplemented`), so that an abstract base given as a plug-in is
    refused here, by name, rather than failing inside a run."""
    def check(name, obj):
        if not (isinstance(obj, type) and issubclass(obj, base)):
            raise ConfigError(f"{name!r} is not {kind}: it must be a subclass of "
                              f"{base.__module__}.{base.__qualname__} (got {obj!r})")
        missing = unimplemented(obj, base, hooks)
        if missing:
            what = " and ".join(" (or ".join(alts) + ")" * (len(alts) - 1) for alts in missing)
            raise ConfigError(f"{name!r} is not a usable {kind.split(' ', 1)[1]}: "
                              f"{obj.__qualname__} does not implement {what}; it leaves "
                              f"{'it' if len(missing) == 1 else 'them'} to "
                              f"{base.__qualname__}")
    return check

