"""Published numbers that rffbench reproduces, and the test that compares them with ours.

Each paper is a :class:`Paper` (:mod:`.paper`): a small CSV in this folder (its source in
the ``#`` header lines: repository, commit, file, how it was extracted), the protocol that
makes a run comparable with its points (configuration values, the measured metric), and
which rffbench map (with which parameters) is each of its methods.  :mod:`.papers` declares
them, ``PAPERS`` lists them; :func:`compare` (:mod:`.verdicts`) is the test, its power and
families; :func:`rffbench.report` gives every sweep whose runs match a paper's protocol a
*Reproductions* section (:mod:`rffbench.report.reproductions`).  :mod:`.quffka`,
:mod:`.buechel` and :mod:`.wacker` extract the CSVs from the authors' repositories
(:mod:`.extract`, :mod:`.safe`).
"""
from .paper import Method, Paper
from .papers import (
                     BUECHEL2024,
                     BUECHEL2024_ACCURACY,
                     LIU2021,
                     LIU2021_ACCURACY,
                     MUNKHOEVA2018,
                     PAPERS,
                     WACKER2022,
                     buechel_n_freq,
                     liu_n_freq,
)
from .verdicts import INCONCLUSIVE_RATIO, POWER, compare, t_quantile

__all__ = ["INCONCLUSIVE_RATIO", "Method", "PAPERS", "POWER", "Paper", "buechel_n_freq",
           "compare", "liu_n_freq", "t_quantile", "MUNKHOEVA2018", "BUECHEL2024",
           "BUECHEL2024_ACCURACY", "WACKER2022", "LIU2021", "LIU2021_ACCURACY"]
