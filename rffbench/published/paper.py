"""The framework of a paper's published points: a :class:`Paper` (its CSV in this folder,
the protocol that makes a run comparable with its points, the measured metric) and each of
its methods as an rffbench map (:class:`Method`).  The papers themselves:
:mod:`.papers`; the test that compares their points with ours: :mod:`.verdicts`."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Method:
    """A paper's method as an rffbench map: ``features`` with the flattened config values
    ``params`` (a key absent from a run's config is at its default, given here too)."""

    name: str
    features: str
    kernels: tuple
    params: dict = field(default_factory=dict)
    #: the paper's size per frequency vector: its x is n_freq times this (1 where it counts
    #: frequency vectors; 2 where it counts the real outputs [cos, sin] of each)
    per_freq: int = 1

    def matches(self, cfg, kernel):
        if kernel not in self.kernels or cfg.get("features.name") != self.features:
            return False
        return all(cfg.get(k, default) in allowed for k, (default, allowed)
                   in self.params.items())


#: Paper.record_map: how one of our records becomes a paper's quantity
RECORD_MAPS = {"": lambda v: v, "one_minus": lambda v: 1.0 - v}


@dataclass(frozen=True)
class Paper:
    """A paper's published points (``csv``) and how a run is matched to one of them."""

    key: str
    citation: str
    csv: str
    measurement: str
    metric: str
    #: flattened config key -> (value a comparable run has, why)
    protocol: dict
    methods: tuple
    #: kernel -> the lengthscale the paper's kernel has, as a function of d (and its words)
    lengthscale: dict
    #: method -> what differs in rffbench's implementation, measured (shown where a point
    #: differs, and in the section's notes)
    notes: dict = field(default_factory=dict)
    x: str = "n_freq"
    x_label: str = "frequency vectors n_freq = 2 n (d + 1)"
    #: (n_freq, d) -> the paper's own index n of that size, or None (quffka: n_freq =
    #: 2 n (d + 1)); and the words for the sizes in a reason
    n_of: object = None
    #: the CSV column that holds the paper's index (read as ``n``)
    n_column: str = "n"
    #: rffbench dataset -> (the paper's dataset it stands in for, how the data differ):
    #: another sample of the same data where the paper's own rows are not to be had; its
    #: points are compared with the paper's and marked (the report says how they differ)
    substitutes: dict = field(default_factory=dict)
    #: the paper's dataset -> what is known of how its data differ from rffbench's loader of
    #: that name (shown in the report wherever its points are compared)
    data_notes: dict = field(default_factory=dict)
    #: "one": all of a point's runs share one sample of the data (the sample's own effect
    #: is not in their spread); "each": every run drew its own sample (split), so the runs'
    #: spread holds it (:func:`compare`)
    samples: str = "one"
    #: with samples "each": why both spreads hold all that varies between runs (the report's
    #: words)
    samples_why: str = ("every published run and every seed of ours drew its own split of "
                        "the data, so both spreads hold the sample's effect")
    #: how the protocol here differs from the paper's where no test can show it (words for
    #: the report, after the quantity)
    protocol_note: str = ""
    #: the paper's datasets compared (empty: all of its CSV's)
    datasets: tuple = ()
    #: the record of ours that measures ``metric`` (empty: ``metric`` itself) and how its
    #: value becomes the paper's quantity (a key of ``RECORD_MAPS``; "one_minus": 1 - v, an
    #: error rate as an accuracy)
    record_metric: str = ""
    record_map: str = ""
    #: the record's method column (learning records name the model: "ridge")
    record_method: str = ""

    def ours(self, value):
        """Our record's value as the paper's quantity (``record_map``)."""
        return RECORD_MAPS[self.record_map](value)

    @functools.cached_property
    def source(self):
        """The CSV's ``# key: value`` header lines as a dict."""
        out = {}
        with open(HERE / self.csv, encoding="utf-8") as fh:
            for line in fh:
                if not line.startswith("#"):
                    break
                k, _, v = line[1:].partition(":")
                out[k.strip()] = v.strip()
        return out

    @functools.cached_property
    def points(self):
        """The published points, a DataFrame (the CSV without its header)."""
        import pandas as pd

        df = pd.read_csv(HERE / self.csv, comment="#")
        if "metric" in df.columns:  # a CSV of several metrics: this paper's
            df = df[df.metric == self.metric].reset_index(drop=True)
        if self.datasets:
            df = df[df.dataset.isin(self.datasets)].reset_index(drop=True)
        return df.assign(n=df[self.n_column])

    def match(self, cfg, ident):
        """(points, reasons): the published points a run is comparable with, each a dict of
        the CSV's key columns (one per method the run's map is: e.g. a paper's real and
        complex variants of one map, at their own sizes), or [] and the reasons it is not
        (empty when the paper has nothing for the run's dataset and kernel at all).
        ``cfg``: the run's flattened config; ``ident``: its record identity (dataset, d,
        kernel, lengthscale, n_train, features, n_freq)."""
        pts = self.points
        dataset, substitute = self.substitutes.get(ident["dataset"], (ident["dataset"], None))
        rows = pts[(pts.dataset == dataset) & (pts.kernel == ident["kernel"])]
        if rows.empty:
            return [], []
        first = rows.iloc[0]
        reasons = []
        for key, (want, why) in self.protocol.items():
            have = cfg.get(key)
            if callable(want):
                ok, want_text = want(have, first), why
            else:
                ok, want_text = have == want, f"{key}={want} ({why})"
            if not ok:
                reasons.append(f"{key}={have} (the paper: {want_text})")
        if "first_rows" in rows.columns and substitute is None \
                and int(ident["n_train"]) != int(first.first_rows):
            reasons.append(f"n_train={ident['n_train']} (the paper samples from the first "
                           f"{first.first_rows} rows: dataset.split=ordered with the right "
                           "dataset.test_size)")
        ls_fn, ls_text = self.lengthscale[ident["kernel"]]
        want_ls = ls_fn(int(ident["d"]))  # None: the kernel does not depend on it
        if want_ls is not None and not math.isclose(float(ident["lengthscale"]), want_ls,
                                                     rel_tol=1e-6):
            reasons.append(f"lengthscale={float(ident['lengthscale']):.6g} (the paper: "
                           f"{ls_text} = {want_ls:.6g})")
        methods = [m for m in self.methods if m.matches(cfg, ident["kernel"])]
        if not methods:
            reasons.append(f"features={ident['features']} with these parameters is none of "
                           "the paper's methods (" + ", ".join(
                               sorted({f"{m.name}: {m.features}" for m in self.methods
                                       if ident['kernel'] in m.kernels})) + ")")
        nf, found = int(ident["n_freq"]), []
        for m in methods:
            n = (self.n_of or _quffka_n)(nf * m.per_freq, int(ident["d"]))
            if n is not None and (rows[rows.method == m.name].n == n).any():
                found.append(dict(dataset=dataset, kernel=ident["kernel"], method=m.name, n=n,
                                  ours_data=ident["dataset"]))
        if methods and not found:
            reasons.append(f"n_freq={nf} is not one of the paper's {self.x_label}: "
                           + ", ".join(str(v) for v in sorted(rows.n_freq.unique())))
        if reasons:
            return [], reasons
        return found, []


def _quffka_n(n_freq, d):
    """n of n_freq = 2 n (d + 1) (Munkhoeva et al.), or None."""
    step = 2 * (d + 1)
    return None if n_freq % step else n_freq // step
