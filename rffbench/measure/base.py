"""The measurement base class and its registry.

A measurement is one class in one module: its config block, its checks, its
memory, its records and what the report makes of them::

    from dataclasses import dataclass
    from rffbench.measure import Measurement
    from rffbench.results import record

    @dataclass
    class AlignmentConfig:
        enabled: bool = False       # every block has ``enabled``
        n_points: int = 500

    class Alignment(Measurement):
        '''Kernel-target alignment of the exact and the approximate Gram.'''
        name = "alignment"           # the block measure.alignment, the records' measurement
        Config = AlignmentConfig

        def run(self, ctx, cfg):
            ...
            return [record("alignment", "alignment", value, method="features")]

registered as a built-in in :data:`rffbench.measure.MEASUREMENTS` or by a
plug-in's entry point in the group ``rffbench.measurements``.  From the
registered classes come the config schema (``measure.<name>``, checked by the
Config's ``__post_init__``), ``--help``, the order in which a run calls them,
the report's tables and figures and which config keys the report treats as a
condition of their values.
"""
from __future__ import annotations

import inspect

#: metrics that are measurements of time or memory (every measurement's): they differ from
#: run to run; the report's results.csv says so in its ``varies`` column
MEASURED = ("*time_s", "peak_rss_mb", "throughput_*", "speedup_*", "fraction_of_limit",
            "dask_workers_lost", "first_touch_s", "*process_ratio", "*unstable")


class Measurement:
    """One measurement (module docs).  Subclasses set :attr:`name` and :attr:`Config`
    and implement :meth:`run`; the rest has defaults."""

    #: the config block ``measure.<name>`` and the ``measurement`` column of its records
    name: str = None
    #: dataclass of the block: an ``enabled: bool`` field and the knobs, their values
    #: declared in ``constraints`` (:mod:`rffbench.checks`) and checked in ``__post_init__``
    #: by ``check_constraints(self, "measure.<name>")`` (one ConfigError line naming the key)
    Config: type = None
    #: keys of the block that choose *what* is measured rather than *how*: the report
    #: never treats a difference in them as a condition (``enabled`` always is one)
    selection_keys: tuple = ()
    #: prefixes of config keys outside ``measure.<name>`` that condition the values (the
    #: kernel, map, data and run keys always do), e.g. ``("model.",)`` for a model's error
    conditioned_by: tuple = ()
    #: config blocks outside ``measure.<name>`` that are this measurement's settings alone
    #: (learning: ``model``, ``backend``): like its own block, they are inert while it is
    #: off (not checked, not part of a run's identity)
    settings: tuple = ()

    #: which of its values are not bit-for-bit the same for the same config and seed
    #: (:meth:`varies`): metric name patterns (fnmatch) -> why the last bits may depend on
    #: the thread count (a BLAS or LAPACK reduction whose order does); every other value,
    #: apart from the measured times and memory (MEASURED), is the same bits across runs,
    #: launchers and thread counts (tested for every registered map at 1 and 2 threads)
    thread_dependent: dict = {}

    def varies(self, metric):
        """('measured' | 'threads', why) for a metric whose value is not the same bits for
        the same config and seed, or None.

        Parameters
        ----------
        metric : str
            A record's metric.

        Returns
        -------
        tuple of (str, str) or None
        """
        from fnmatch import fnmatch

        for pat in MEASURED:
            if fnmatch(metric, pat):
                return "measured", "a measured time or memory: differs from run to run"
        for pat, why in self.thread_dependent.items():
            if fnmatch(metric, pat):
                return "threads", why
        return None

    def check(self, ctx, cfg):
        """Raise ConfigError for a request that cannot be met with this data (sizes,
        memory), after the data is loaded and before any measurement starts.

        Parameters
        ----------
        ctx : RunContext
            The run: its config, data, kernel and map factory.
        cfg : Config
            The measurement's block (``measure.<name>``).

        Returns
        -------
        None
        """

    def needs(self, ctx, cfg):
        """The allocations that grow with n, d or D (:class:`rffbench.memory.Need`), for the
        memory plan that refuses a run before it starts.

        Parameters
        ----------
        ctx : RunContext
            The run (data shape known, nothing allocated yet).
        cfg : Config
            The measurement's block.

        Returns
        -------
        list of rffbench.memory.Need
        """
        return []

    def run(self, ctx, cfg):
        """Measure; a list of records (:func:`rffbench.results.record`).  Extra tables go
        into ``ctx.tables[file_name]`` (written next to records.csv).

        Parameters
        ----------
        ctx : RunContext
            The run.
        cfg : Config
            The measurement's block.

        Returns
        -------
        list of dict
            Records.
        """
        raise NotImplementedError

    def tables(self, df, origins):
        """A plug-in's report tables of these records (a list of
        :class:`rffbench.report.tables.Table`); ``df`` holds every complete run's records
        with their conditions.  rffbench's own measurements have theirs in
        ``rffbench/report/NAME.py`` (rffbench.report.catalog); this hook is not called
        for them.

        Parameters
        ----------
        df : pandas.DataFrame
            Every complete run's records, with their conditions.
        origins : dict
            Where each condition's value came from (rffbench.report).

        Returns
        -------
        list of rffbench.report.tables.Table
        """
        return []

    def figures(self):
        """A plug-in's report figures: {name: function(FigContext) -> (list of Drawn,
        reason when nothing is drawn)}, as :class:`rffbench.report.figures.Figure` specs
        are.  rffbench's own measurements have theirs in ``rffbench/report/NAME.py``.

        Returns
        -------
        dict
            {name: function(FigContext) -> (list of Drawn, reason)}.
        """
        return {}

    @classmethod
    def summary(cls):
        """One line for ``--help``: the docstring's first sentence."""
        doc = " ".join((inspect.getdoc(cls) or "").split("\n\n")[0].split())
        return doc.split(". ")[0].rstrip(".")
