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
