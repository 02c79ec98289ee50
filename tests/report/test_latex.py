"""rffbench/report/latex.py: the report's tables as LaTeX (booktabs, intervals, bold by
Welch's t), and ``rffbench-report SWEEP --tables latex`` on a sweep run through run.py."""
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from rffbench import report
from rffbench.report import latex
from rffbench.report.grouping import summarising
from rffbench.report.tables import Table
from tests.helpers import run_cli


def _table(metric="rel_fro_error"):
    """Three maps x one metric at two D: orf best at D=16, sorf within its noise (not
    significantly different), rff far above; at D=32 each has one seed (only equal ties)."""
    rng = np.random.default_rng(3)
    vals = {"rff": rng.normal(0.30, 0.01, 5), "orf": rng.normal(0.10, 0.01, 5),
            "sorf": rng.normal(0.105, 0.01, 5)}
    frame = pd.DataFrame({"features": ["orf", "rff", "sorf"], "metric": [metric] * 3,
                          "D=16": [f"{vals[m].mean():.4g}" for m in ("orf", "rff", "sorf")],
                          "D=32": ["0.05", "0.2", "0.05"]})
    values = pd.DataFrame({"features": frame.features, "metric": frame.metric,
                           "D=16": [vals[m] for m in ("orf", "rff", "sorf")],
                           "D=32": [np.array([0.05]), np.array([0.2]), np.array([0.05])]})
    return Table("err_table", "Error", "Gram error of the maps.", frame, 2, values)


def test_escape_and_the_better_direction():
    assert latex.escape("a_b & 50% {x}") == r"a\_b \& 50\% \{x\}"
    assert latex.direction("rel_fro_error") == latex.direction("train_time_s") == -1
    assert latex.direction("test_accuracy") == latex.direction("speedup_vs_torch") == 1
    assert latex.direction("n_train") == 0


def test_welch_decides_which_values_tie_with_the_best():
    a, b = np.array([1.0, 1.1, 0.9, 1.05]), np.array([1.02, 0.98, 1.1, 0.95])
    assert latex.same(a, b, 0.95) and not latex.same(a, a + 1.0, 0.95)
    assert latex.same(np.array([2.0]), np.array([2.0]), 0.95)  # one seed: equal only
    assert not latex.same(np.array([2.0]), np.array([2.0, 2.1]), 0.95)


def test_bold_marks_the_best_map_and_those_not_significantly_different():
    t = _table()
    assert latex.bold_cells(t, 0.95) == {(0, "D=16"), (2, "D=16"), (0, "D=32"), (2, "D=32")}
    acc = _table("test_accuracy")  # higher is better: rff's 0.30 is the best
    assert latex.bold_cells(acc, 0.95) == {(1, "D=16"), (1, "D=32")}
    none = _table("n_train")  # no better direction: no bold
    assert latex.bold_cells(none, 0.95) == set()
    nomap = Table("t", "T", "c.", _table().frame.drop(columns="features"), 1,
                  _table().values.drop(columns="features"))
    assert latex.bold_cells(nomap, 0.95) == set()


def test_a_table_is_booktabs_with_intervals_and_a_caption_that_says_how():
    with summarising("mean", interval=("t", 0.95, 2000)):
        tex = latex.table_tex(_table())
        num = latex.table_tex(_table(), numbers="siunitx")
    lines = tex.splitlines()
    assert lines[:4] == [r"\begin{table}", r"\centering", r"\begin{tabular}{llrr}", r"\toprule"]
    assert lines[4] == r"features & metric & D=16 & D=32 \\" and lines[5] == r"\midrule"
    orf = next(ln for ln in lines if ln.startswith("orf"))
    assert orf.startswith(r"orf & rel\_fro\_error & \textbf{0.") and "]} & \\textbf{0.05}" in orf
    rff = next(ln for ln in lines if ln.startswith("rff"))
    assert r"\textbf" not in rff and rff.count("[") == 1  # an interval at 5 seeds, none at 1
    assert r"\bottomrule" in lines and r"\label{tab:err\_table}" in lines
    caption = next(ln for ln in lines if ln.startswith(r"\caption{"))
    assert "the mean over the seeds [its 95\\% t interval; none under 2 seeds]" in caption
    assert "Welch's t, two-sided, 5\\% level" in caption
    assert r"\num{0.2}" in num  # rff at D=32: not bold; the bold keep their weight:
    assert r"\textbf{\num[reset-text-series=false, text-series-to-math=true]{0.05}}" in num
    with pytest.raises(ValueError, match="numbers='tex': use one of plain, siunitx"):
        latex.table_tex(_table(), numbers="tex")


def test_rffbench_report_writes_latex_tables_of_a_sweep(tmp_path, capsys):
    """Through the command: a sweep of two maps x 2 seeds (run.py), then ``rffbench-report
    SWEEP --tables latex``: one .tex per table of the report, each a booktabs table; with a
    LaTeX engine installed, each compiles in a minimal document, bold set in a bold font
    (the engine and pdffonts are the point: two of the default suite's budgeted process
    sites)."""
    sweep = tmp_path / "s"
    p = run_cli("-m", "dataset=synthetic", "dataset.n=200", "dataset.d=3",
                "measure.bounds.enabled=false", "measure.learning.enabled=false",
                "measure.timing.repeats=3", "features=rff,orf", "seed=0,1", "D=16",
                "report.pdf=false", f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-3000:]
    # the end-of-sweep report writes them too (report.latex=plain, the default)
    plain = sorted((sweep / "report" / "latex").glob("*.tex"))
    assert plain and f"{len(plain)} LaTeX tables in" in p.stdout
    assert not any(r"\num{" in f.read_text() for f in plain)
    assert report.main([str(sweep), "--no-pdf", "--tables", "none", "--out",
                        str(tmp_path / "bare")]) == 0
    assert not (tmp_path / "bare" / "latex").exists()
    assert report.main([str(sweep), "--no-pdf", "--tables", "latex",
                        "--latex-numbers", "siunitx"]) == 0
    out = capsys.readouterr().out
    files = sorted((sweep / "report" / "latex").glob("*.tex"))
    assert files and f"{len(files)} LaTeX tables in" in out
    for f in files:
        text = f.read_text()
        assert text.startswith(r"\begin{table}") and r"\toprule" in text and r"\num{" in text
    engine = shutil.which("pdflatex") or shutil.which("lualatex")
    if engine is None:
        pytest.skip("no LaTeX engine installed: the tables were not compiled")
    doc = tmp_path / "doc.tex"
    doc.write_text("\\documentclass{article}\\usepackage{booktabs}\\usepackage{siunitx}"
                   "\\begin{document}" + "".join(f"\\input{{{f}}}" for f in files)
                   + "\\end{document}\n")
    r = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", doc.name],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-3000:]
    if shutil.which("pdffonts") and any(r"\textbf" in f.read_text() for f in files):
        fonts = subprocess.run(["pdffonts", "doc.pdf"], cwd=tmp_path, capture_output=True,
                               text=True, timeout=60).stdout
        assert "CMBX" in fonts, fonts  # the bold cells are set in bold, \num's too
