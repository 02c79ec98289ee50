"""The reference report's script: it regenerates every preset there is."""
from rffbench import reference
from tests.helpers import CONF_DIR


def test_the_reference_script_regenerates_every_preset_once():
    presets = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
    assert sorted(reference.PRESETS) == presets
    assert len(set(reference.PRESETS)) == len(reference.PRESETS)


def test_each_presets_time_is_recorded_and_the_readme_states_the_measured_total(
        tmp_path, monkeypatch):
    """Every preset run is timed into results/reference/times.csv as it ends (a second run
    of a preset replaces its row); results/README.md gives the estimate until every preset
    has a time, then the measured total (runs faked: the clock is what is tested)."""
    import subprocess
    import types

    monkeypatch.setattr(reference, "ROOT", tmp_path)
    clock = iter(range(0, 10**6, 60))  # each reading a minute after the last
    monkeypatch.setattr(reference.time, "monotonic", lambda: next(clock))
    ran = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, cwd: ran.append(cmd[-1]) or
                        types.SimpleNamespace(returncode=0))
    monkeypatch.setattr("rffbench.report.make_report", lambda *a, **k: None)
    assert reference.main(["--only", "bounds", "--only", "maps"]) == 0
    assert ran == ["experiment=bounds", "experiment=maps"]
    times = reference.read_times()
    assert times == {"bounds": (60.0, 60.0, reference._cores()),
                     "maps": (60.0, 60.0, reference._cores())}
    text = (tmp_path / "results" / "README.md").read_text()
    assert f"{reference.ESTIMATE}; 2 of {len(reference.PRESETS)} timed" in text
    assert reference.main(["--only", "bounds"]) == 0  # replaced, not added
    assert len(reference.read_times()) == 2
    (tmp_path / "results" / "multirun" / "maps").mkdir(parents=True)
    assert reference.main(["--report-only", "--only", "maps"]) == 0  # no run: not timed
    assert reference.read_times()["maps"] == (60.0, 60.0, reference._cores())
    for name in reference.PRESETS:
        reference.record_time(name, 600.0, 0.0)
    n = len(reference.PRESETS)
    assert reference.times_text().startswith(f"{n / 6:.1f} h measured on {reference._cores()}")


def test_the_pages_numbers_are_the_committed_tables():
    """The verdict counts (README, docs/reproductions.md), the landmark study's numbers and
    quffka's LETTER points (docs/reproductions.md) are what the committed reference reports'
    tables give: the docs cannot drift from them."""
    want = reference.table_samples()
    assert set(want) == set(reference.TABLE_SAMPLES)
    where = {}
    for page in reference.SAMPLE_PAGES:
        for m in reference.SAMPLE.finditer((reference.ROOT / page).read_text()):
            if m.group("name") in want:
                where.setdefault(m.group("name"), []).append(page)
                assert m.group("body") == want[m.group("name")], \
                    f"{page}: run python -m rffbench.reference --readme-only"
    assert where == {"reproductions": ["README.md", "docs/reproductions.md"],
                     "landmarks": ["docs/reproductions.md"],
                     "quffka-letter": ["docs/reproductions.md"]}


def test_summary_tables_reads_each_table_under_its_heading(tmp_path):
    md = tmp_path / "summary.md"
    md.write_text("# t\n\n### First\n\ntext\n\n| a | b |\n|---|---|\n| 1 | x |\n| 2 |  |\n"
                  "\n### Second (two)\n| c |\n|---|\n| 3 |\n")
    tabs = reference.summary_tables(md)
    assert list(tabs) == ["First", "Second (two)"]
    assert tabs["First"].to_dict("list") == {"a": ["1", "2"], "b": ["x", ""]}
    assert tabs["Second (two)"].c.tolist() == ["3"]


def test_reproduction_counts_count_each_verdict_and_mark_tables_made_before_them(tmp_path):
    """Per paper, preset and dataset: the points' verdicts and the families' (one per
    kernel); a table without the power column is marked, its points not counted."""
    import pandas as pd

    new = tmp_path / "p1" / "reproduction_paperA.csv"
    new.parent.mkdir()
    pd.DataFrame({"dataset": ["d1"] * 5 + ["d2"],
                  "kernel": ["g", "g", "a", "a", "a", "g"],
                  "verdict": ["agrees", "inconclusive", "differs", "agrees", None, "agrees"],
                  "detectable": [1.1, 1.4, 1.1, 1.2, None, 1.1],
                  "family_verdict": ["agrees", "agrees", "differs", "differs", "differs",
                                     "inconclusive"],
                  "family_ratio": [1.0, 1.0, 1.3, 1.3, 1.3, None],
                  "family_lo": [0.9, 0.9, 1.2, 1.2, 1.2, None],
                  "family_hi": [1.1, 1.1, 1.4, 1.4, 1.4, None],
                  "family_detectable": [1.2, 1.2, 1.1, 1.1, 1.1, None],
                  "family_q": [1.0, 1.0, 9.0, 9.0, 9.0, None],
                  "family_q_crit": [5.0, 5.0, 5.0, 5.0, 5.0, None]}).to_csv(new, index=False)
    old = tmp_path / "p2" / "reproduction_paperB_accuracy.csv"
    old.parent.mkdir()
    pd.DataFrame({"dataset": ["d3"] * 3, "kernel": ["g"] * 3,
                  "verdict": ["agrees", "agrees", "differs"]}).to_csv(old, index=False)
    lines = reference.reproduction_counts(tmp_path).splitlines()
    assert lines[2] == ("| paperA | p1 | d1 | 5 | 2 | 1 | 1 | 1 | a differ: 1.3 [1.2, 1.4], "
                        "detects 1.1x (its points scatter: Cochran's Q above its critical "
                        "value); g agree: 1 [0.9, 1.1], detects 1.2x |")
    assert lines[3] == "| paperA | p1 | d2 | 1 | 1 | 0 | 0 |  | g inconclusive |"
    assert lines[4].startswith("| paperB_accuracy | p2 | d3 | 3 | made before the power and "
                               "family tests: 2 within, not counted |")
    assert lines[5] == "| all | | | 6 | 3 | 1 | 1 | | 1 agree, 1 inconclusive, 1 differ |"
    assert all(ln.count("|") == 10 for ln in lines)  # every row has the header's 9 cells


def test_reproduction_detail_per_method_in_both_table_formats(tmp_path):
    """One row per kernel and method: published / ours at the smallest and largest n, the
    ratio's range, max |z| and the verdicts (within / differ for a table made before the
    power test)."""
    import pandas as pd

    rows = [dict(dataset="d", kernel="g", method="G", features="rff", n=n, published=p,
                 ours=o, ratio=o / p, z=z, verdict=v, detectable=1.1)
            for n, p, o, z, v in ((1, 0.2, 0.21, -1.5, "agrees"), (2, 0.1, 0.1, 0.0,
                                                                   "inconclusive"),
                                  (3, 0.05, 0.06, -4.0, "differs"))]
    new = tmp_path / "new.csv"
    pd.DataFrame(rows + [dict(rows[0], dataset="other")]).to_csv(new, index=False)
    lines = reference.reproduction_detail(new, "d").splitlines()
    assert lines[0].endswith("| agree / inconclusive / differ |") and len(lines) == 3
    assert lines[2] == "| g | G | rff | 0.2 / 0.21 | 0.05 / 0.06 | 1.00-1.20 | 4.00 | 1 / 1 / 1 |"
    old = tmp_path / "old.csv"
    pd.DataFrame(rows).drop(columns="detectable").to_csv(old, index=False)
    lines = reference.reproduction_detail(old, "d").splitlines()
    assert "within / differ (made before the power test)" in lines[0]
    assert lines[2].endswith("| 1 / 1 |")
