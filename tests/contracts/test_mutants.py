"""A verdict that could have said no: maps made wrong on purpose, run through a paper's own
protocol and judged by the project's rule (the report's: rffbench.report.reproductions
.run_rows and .compared), must be rejected by their family's test wherever its power allows;
the right map must not be.

Each protocol is a paper's own on data that ship with rffbench (cheap): dp-rfs's Powerplant
comparison (Wacker et al. 2022: both of its methods, i.i.d. [cos, sin] pairs and SORF
blocks, at three sizes, 10 seeds, one draw each) and quffka's (Munkhoeva et al. 2018: the
Gaussian kernel's i.i.d., orthogonal and QMC methods at n = 1, 3 seeds of their 100
redraws) and Büchel et al.'s (2024: the Gaussian kernel's i.i.d., orthogonal and SORF
frequencies on LETTER at their smallest size, 5 seeds of 10 redraws; LETTER is optional
data, which CI has).  Each run is made with the right config, which the paper's matcher pairs with
its published points; a mutant's run changes one thing (the lengthscale x1.25 or x0.8, half
the frequencies, cos(wx + b) in place of the pairs, i.i.d. in place of orthogonal and the
reverse, Sobol in place of Halton) and its value is compared with the same points.
``python -m pytest -m slow tests/contracts/test_mutants.py -s`` prints the matrices."""
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
import pytest

from rffbench.config import validate
from rffbench.experiment import run
from rffbench.published import PAPERS
from rffbench.report.collect import flatten
from rffbench.report.grouping import with_added_defaults
from rffbench.report.reproductions import compared, run_rows
from tests.helpers import compose_config
from tests.published.common import needs_letter


def _scaled(conf, ls, r):
    """The run's own lengthscale (a number: the median one is the seed's), times r."""
    return replace(conf, kernel=replace(conf.kernel, lengthscale=ls * r, median_subsample=1000))


def _every_protocols(conf, ls, half):
    """The mutants of every protocol: the lengthscale off by 1.25x either way, and ``half``
    (the config with half the frequencies: how a protocol counts them is its own)."""
    return {"lengthscale x1.25": _scaled(conf, ls, 1.25),
            "lengthscale x0.8": _scaled(conf, ls, 0.8),
            "half the frequencies": half}


def _wacker_mutants(conf, method, ls):
    f = conf.features
    return {
        **_every_protocols(conf, ls, replace(conf, D=max(1, conf.D // 2))),
        # as many outputs as the pairs' 2 D: 2 D frequencies, one cos(wx + b) each
        "cos(wx + b), not pairs": replace(conf, D=2 * conf.D, features=(
            replace(f, name="rff") if method == "rff" else replace(f, pairs=False))),
        ("i.i.d., not orthogonal" if method == "srht" else "orthogonal, not i.i.d."):
            replace(conf, features=replace(f, name="rff_pairs" if method == "srht" else "orf")),
    }


def _quffka_mutants(conf, method, ls):
    """quffka sizes its maps by D_n (n_freq = 2 n (d + 1) frequency vectors): a mutant of
    another size gives D in frequencies instead."""
    f, n_freq = conf.features, 2 * conf.D_n * (4 + 1)  # Powerplant: d = 4
    out = _every_protocols(conf, ls, replace(conf, D_n=None, D=n_freq // 2))
    if method == "gaussian_G":
        out["cos(wx + b), not pairs"] = replace(conf, D_n=None, D=2 * n_freq,
                                                features=replace(f, name="rff"))
        out["orthogonal, not i.i.d."] = replace(conf, features=replace(f, name="orf"))
    if method == "gaussian_Gort":
        out["i.i.d., not orthogonal"] = replace(conf, features=replace(
            f, name="rff_pairs", params={}))
    if method == "gaussian_QMC":
        out["Sobol, not Halton"] = replace(conf, features=replace(f, sequence="sobol"))
    return out


def _buechel_mutants(conf, method, ls):
    """Büchel et al.'s Gaussian methods on LETTER (D counts frequency vectors)."""
    f = conf.features
    out = _every_protocols(conf, ls, replace(conf, D=max(1, conf.D // 2)))
    if method == "gaussian_rff":
        out["cos(wx + b), not pairs"] = replace(conf, D=2 * conf.D,
                                                features=replace(f, name="rff"))
        out["orthogonal, not i.i.d."] = replace(conf, features=replace(f, name="orf"))
    else:  # orf, sorf
        out["i.i.d., not orthogonal"] = replace(conf, features=replace(
            f, name="rff_pairs", params={}))
    return out


@dataclass(frozen=True)
class Protocol:
    paper: str  # a key of rffbench.published.PAPERS
    methods: dict  # label -> the overrides that compose its right config
    sizes: dict  # the config key that sizes the map -> its values
    seeds: range
    mutants: object  # (right Config, method label, its lengthscale) -> {name: Config}


PROTOCOLS = {
    "wacker2022": Protocol(
        "wacker2022", {m: ["experiment=wacker2022_powerplant", "wacker_data=powerplant",
                           "hydra.mode=RUN", f"+wacker_method={m}"] for m in ("rff", "srht")},
        {"D": (4, 8, 16)}, range(10), _wacker_mutants),  # D in frequencies
    "munkhoeva2018": Protocol(
        "munkhoeva2018", {m: ["experiment=quadrature", "quffka_data=powerplant",
                              "hydra.mode=RUN", f"+quffka_method={m}"]
                          for m in ("gaussian_G", "gaussian_Gort", "gaussian_QMC")},
        {"D_n": (1,)}, range(3), _quffka_mutants),
    "buechel2024": Protocol(
        "buechel2024", {m: ["experiment=buechel2024", "hydra.mode=RUN", f"+buechel_method={m}"]
                        for m in ("gaussian_rff", "gaussian_orf", "gaussian_sorf")},
        {"D": (31,)}, range(5), _buechel_mutants),
}
#: the protocols on optional data (LETTER: mlbench's files)
NEEDS = {"buechel2024": needs_letter}


def _matrix(proto):
    """mutant -> compared()'s rows for the protocol's points: the right map's and each
    mutant's values against the same published points (a Config is checked when made: a
    composition costs 0.45 s, a replace nothing)."""
    paper = PAPERS[proto.paper]
    (key, sizes), = proto.sizes.items()
    rows = {}
    for method, overrides in proto.methods.items():
        composed = validate(compose_config(overrides))
        for size in sizes:
            for seed in proto.seeds:
                conf = replace(composed, seed=seed, **{key: size})
                right, _ = run(conf)
                cfg = with_added_defaults(flatten(asdict(conf)))
                found, why = run_rows(paper, cfg, right, f"{method}-{size}-{seed}")
                assert found, why
                ls = float(right.lengthscale.iloc[0])
                rows.setdefault("right", []).extend(found)
                for name, mutant in proto.mutants(conf, method, ls).items():
                    wrong, _ = run(mutant)
                    got, _ = run_rows(paper, cfg, right, f"{method}-{size}-{seed}",
                                      value_of=wrong)
                    rows.setdefault(name, []).extend(got)
    return {name: compared(paper, pd.DataFrame(r)) for name, r in rows.items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=NEEDS.get(n, ()))
                                  for n in sorted(PROTOCOLS)])
def test_every_wrong_map_is_rejected_where_the_power_allows_and_the_right_one_is_not(name):
    """The right map: no point and no family differs.  Each mutant: rejected by its family
    (differs), or its family's detectable ratio is above the mutant's measured effect (the
    ratio of its mean to the right map's at the same points): the power did not allow it,
    and the matrix says so; the printed matrix is the note's."""
    matrix = _matrix(PROTOCOLS[name])
    right = matrix["right"]
    assert (right.verdict != "differs").all(), right.to_string()
    assert set(right.family_verdict) <= {"agrees", "inconclusive"}, right.to_string()
    point = ["dataset", "kernel", "method", "n"]
    print(f"\n{name}: mutant | family | effect (ours / right) | points differ | family ratio "
          "[CI] | family detectable | family verdict")
    for mutant, res in sorted(matrix.items()):
        for family, fam in res.groupby(["dataset", "kernel"], sort=True):
            ref = right.set_index(point).loc[[tuple(r) for r in fam[point].to_numpy()]]
            effect = float(np.exp(np.mean(np.log(fam.ours.to_numpy() / ref.ours.to_numpy()))))
            f = fam.iloc[0]
            print(f"{mutant} | {'/'.join(family)} ({len(fam)} points) | {effect:.3f} | "
                  f"{(fam.verdict == 'differs').sum()} of {len(fam)} | {f.family_ratio:.3f} "
                  f"[{f.family_lo:.3f}, {f.family_hi:.3f}] | {f.family_detectable:.3f} | "
                  f"{f.family_verdict}")
            if mutant == "right":
                continue
            size = max(effect, 1 / effect)
            assert f.family_verdict == "differs" or size < f.family_detectable, \
                (mutant, family, effect, f.to_dict())
