"""A verdict that could have said no: maps made wrong on purpose, run through a paper's own
protocol and judged by the project's rule (rffbench.published.compare), must be rejected
by their family's test wherever its power allows; the right map must not be.

The protocol is dp-rfs's Powerplant comparison (Wacker et al. 2022: experiment=
wacker2022_powerplant, shipped data, cheap): both of its methods (i.i.d. [cos, sin] pairs and
SORF blocks) at three sizes, 10 seeds, one draw each.  Each run is made with the right
config, which the paper's matcher pairs with its published point; a mutant's run changes one
thing (the lengthscale x1.25 or x0.8, half the frequencies, cos(wx + b) in place of the pairs,
i.i.d. in place of orthogonal and the reverse) and its value is compared with the same point.
``python -m pytest -m slow tests/contracts/test_mutants.py -s`` prints the matrix."""
from dataclasses import asdict, replace

import numpy as np
import pytest

from rffbench.config import validate
from rffbench.experiment import run
from rffbench.published import PAPERS, compare
from rffbench.report.collect import flatten
from rffbench.report.grouping import with_added_defaults
from tests.helpers import compose_config

PAPER = PAPERS["wacker2022"]
PROTOCOL = ["experiment=wacker2022_powerplant", "wacker_data=powerplant", "hydra.mode=RUN"]
METHODS = ("rff", "srht")
SIZES = (4, 8, 16)  # frequencies (D_unit=frequencies)
SEEDS = range(10)


def _value(conf):
    """(rel_fro_error, the record identity) of one run of the checked Config ``conf``."""
    df, _ = run(conf)
    row = df[(df.measurement == "approximation") & (df.metric == "rel_fro_error")].iloc[0]
    return float(row.value), row


def _mutants(conf, method, ls):
    """name -> the right Config made wrong in one way (a Config is checked when made: a
    composition costs 0.45 s, a replace nothing)."""
    k, f = conf.kernel, conf.features
    scaled = {r: replace(conf, kernel=replace(k, lengthscale=ls * r, median_subsample=1000))
              for r in (1.25, 0.8)}  # the seed's own median lengthscale, scaled: a number
    swap = "rff_pairs" if method == "srht" else "orf"
    return {
        "right": conf,
        "lengthscale x1.25": scaled[1.25],
        "lengthscale x0.8": scaled[0.8],
        "half the frequencies": replace(conf, D=max(1, conf.D // 2)),
        # as many outputs as the pairs' 2 D: 2 D frequencies, one cos(wx + b) each
        "cos(wx + b), not pairs": replace(conf, D=2 * conf.D, features=(
            replace(f, name="rff") if method == "rff" else replace(f, pairs=False))),
        ("i.i.d., not orthogonal" if method == "srht" else "orthogonal, not i.i.d."):
            replace(conf, features=replace(f, name=swap)),
    }


@pytest.fixture(scope="module")
def matrix():
    """mutant -> compare()'s rows for the protocol's points (the right map's and each
    mutant's values against the same published points)."""
    values = {}  # (mutant, point key) -> [values over seeds]
    points = {}
    for method in METHODS:
        composed = validate(compose_config([*PROTOCOL, f"+wacker_method={method}"]))
        for D in SIZES:
            for seed in SEEDS:
                conf = replace(composed, D=D, seed=seed)
                v, row = _value(conf)
                cfg = with_added_defaults(flatten(asdict(conf)))
                found, why = PAPER.match(cfg, row.to_dict())
                assert found, why
                for name, mutant in _mutants(conf, method, float(row.lengthscale)).items():
                    got = v if mutant is conf else _value(mutant)[0]
                    for p in found:
                        key = (p["dataset"], p["kernel"], p["method"], p["n"])
                        points[key] = p
                        values.setdefault((name, key), []).append(got)
    pts = PAPER.points
    out = {}
    for name in sorted({n for n, _ in values}):
        tests, keys = [], []
        for key in sorted(points):
            if (name, key) not in values:
                continue
            ds, kernel, method, n = key
            p = pts[(pts.dataset == ds) & (pts.kernel == kernel) & (pts.method == method)
                    & (pts.n == n)].iloc[0]
            m = values[(name, key)]
            tests.append(dict(published=float(p["mean"]), pub_sd=float(p.sd),
                              pub_n=int(p.distinct), means=m, sds=[0.0] * len(m),
                              redraws=[1] * len(m), group=(ds, kernel), samples=PAPER.samples))
            keys.append(key)
        out[name] = {k: r for r, k in zip(compare(tests), keys)}
    return out


@pytest.mark.slow
def test_every_wrong_map_is_rejected_where_the_power_allows_and_the_right_one_is_not(matrix):
    """The right map: no point and no family differs.  Each mutant: rejected by its family
    (differs), or its family's detectable ratio is above the mutant's measured effect (the
    ratio of its mean to the right map's): the power did not allow it, and the matrix says
    so; the printed matrix is the note's."""
    right = matrix["right"]
    assert all(r["verdict"] != "differs" for r in right.values()), right
    assert {r["family_verdict"] for r in right.values()} <= {"agrees", "inconclusive"}
    print("\nmutant | effect (ours / right) | points differ | family ratio [CI] | "
          "family detectable | family verdict")
    for name, rows in matrix.items():
        effect = float(np.exp(np.mean([np.log(r["ours"] / right[k]["ours"])
                                       for k, r in rows.items()])))
        fam = next(iter(rows.values()))
        differ = sum(r["verdict"] == "differs" for r in rows.values())
        print(f"{name} | {effect:.3f} | {differ} of {len(rows)} | {fam['family_ratio']:.3f} "
              f"[{fam['family_lo']:.3f}, {fam['family_hi']:.3f}] | "
              f"{fam['family_detectable']:.3f} | {fam['family_verdict']}")
        if name == "right":
            continue
        rejected = fam["family_verdict"] == "differs"
        size = max(effect, 1 / effect)
        assert rejected or size < fam["family_detectable"], (name, effect, fam)
