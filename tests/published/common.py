"""What the tests of rffbench/published share: the papers, their presets' overrides, the
authors' files (tests/fixtures) and how an extractor is run on them."""
import os
import re

import numpy as np
import pandas as pd
import pytest

from rffbench.config import validate
from rffbench.published import PAPERS
from rffbench.report.collect import flatten
from rffbench.report.grouping import with_added_defaults
from tests.helpers import ROOT, compose_config, run_module

PAPER = PAPERS["munkhoeva2018"]


# ---- the mlbench .rda files (LETTER): optional data, extracted in CI ---------------------
HAVE_LETTER = any(os.path.isfile(os.path.join(os.path.expanduser(d), "LetterRecognition.rda"))
                  for d in __import__("rffbench.datasets", fromlist=["x"]).MLBENCH_DIRS)
needs_letter = pytest.mark.skipif(not HAVE_LETTER and not os.environ.get("CI"),
                                  reason="mlbench .rda files (docs/quickstart.md; CI extracts "
                                         "them)")


# ---- reading pickles without running them ----------------------------------------------
class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


# ---- matching a run to a published point -------------------------------------------------
def flat(overrides):
    from dataclasses import asdict

    return with_added_defaults(flatten(asdict(validate(compose_config(overrides)))))


QUAD = ["experiment=quadrature", "D_n=2"]


# --------------------------------------------------------------------------
# Büchel et al. 2024: their dill pickles, read without running them
# --------------------------------------------------------------------------
BUECHEL = ROOT / "tests" / "fixtures" / "buechel2024"


def extraction_is_the_committed_csv(extractor, csv_name, fixtures, *extra):
    """Run ``python -m rffbench.published.<extractor>`` (with ``extra`` arguments) on the
    paper's files in ``fixtures`` with the commit the committed CSV names: its output must
    be that CSV, byte for byte.  Returns the CSV's points."""
    csv = ROOT / "rffbench" / "published" / csv_name
    sha = re.search(r"commit ([0-9a-f]{40})", csv.read_text()).group(1)
    p = run_module(f"rffbench.published.{extractor}", str(fixtures), "--commit", sha, *extra,
                   timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == csv.read_text()
    return pd.read_csv(csv, comment="#")


# ---- Büchel et al. 2024 ----------------------------------------------------------------
BUECHEL2024 = PAPERS["buechel2024"]


B24 = ["experiment=buechel2024"]


# --------------------------------------------------------------------------
# Wacker, Kanagawa & Filippone 2022 (dp-rfs): per-seed errors, each seed its own split
# --------------------------------------------------------------------------
WACKER = ROOT / "tests" / "fixtures" / "wacker2022"


WACKER2022 = PAPERS["wacker2022"]


W22 = ["experiment=wacker2022"]


# ---- Büchel et al. 2024's accuracies on MAGIC: the first learning numbers compared ------
BUECHEL2024_ACCURACY = PAPERS["buechel2024_accuracy"]


B24M = ["experiment=buechel2024_magic"]


# ---- ijcnn1: Büchel et al.'s points and their replication of Liu et al.'s survey ---------
LIU2021, LIU2021_ACCURACY = PAPERS["liu2021"], PAPERS["liu2021_accuracy"]


LIU = ROOT / "tests" / "fixtures" / "liu2021"




def ij_ident(features, n_freq, kernel="gaussian", ls=np.sqrt(10.0)):
    return dict(dataset="ijcnn1", d=13, kernel=kernel, lengthscale=ls, n_train=35000,
                features=features, n_freq=n_freq)
