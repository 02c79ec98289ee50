"""The report never fails on a sweep that rffbench wrote: every preset, run at its smallest
valid size (the first value of each swept key: one seed, one D, one map ...), through
``python run.py -m experiment=NAME``, ends with its report and exit 0."""
import re

import pytest
import yaml

from tests.helpers import ROOT, run_cli

PRESETS = sorted(p.stem for p in (ROOT / "conf" / "experiment").glob("*.yaml"))


def smallest(name):
    """The overrides that leave one value of each key the preset sweeps."""
    doc = yaml.safe_load((ROOT / "conf" / "experiment" / f"{name}.yaml").read_text())
    params = (((doc.get("hydra") or {}).get("sweeper") or {}).get("params")) or {}
    return [f"{k}={str(v).split(',')[0]}" for k, v in params.items()]


def test_every_preset_is_a_sweep_of_several_values():
    assert len(PRESETS) >= 12
    for name in PRESETS:
        assert smallest(name), name


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESETS)
def test_a_preset_at_its_smallest_size_is_reported(tmp_path, name):
    sweep = tmp_path / name
    p = run_cli("-m", f"experiment={name}", *smallest(name), f"hydra.sweep.dir={sweep}",
                timeout=1200)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Traceback" not in p.stderr and "raised" not in p.stderr, p.stderr[-3000:]
    assert re.search(r"rffbench report: .*index.html \(complete: 1 complete\)", p.stdout), \
        p.stdout[-2000:]
    index = (sweep / "report" / "index.html").read_text()
    assert "failed to draw" not in index
