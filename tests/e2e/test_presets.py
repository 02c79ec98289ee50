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


def _downloaded_data_missing(name):
    """The dataset a preset runs on, where its files come from its site over the network
    (LIBSVM's ijcnn1) and are not here: None otherwise.  CI has no network for data."""
    from rffbench.datasets import DATASETS
    from rffbench.datasets.fetched import Download, data_home
    from tests.helpers import compose_config

    ds = compose_config([f"experiment={name}", *smallest(name)]).dataset.name
    route = getattr(DATASETS[ds], "ROUTE", None)
    if not isinstance(route, Download) or route.present(data_home() / ds):
        return None
    return ds


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESETS)
def test_a_preset_at_its_smallest_size_is_reported(tmp_path, name):
    missing = _downloaded_data_missing(name)
    if missing:
        pytest.skip(f"dataset={missing}: python -m rffbench.datasets fetch {missing} (needs "
                    "the network once)")
    sweep = tmp_path / name
    p = run_cli("-m", f"experiment={name}", *smallest(name), f"hydra.sweep.dir={sweep}",
                timeout=1200)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Traceback" not in p.stderr and "raised" not in p.stderr, p.stderr[-3000:]
    assert re.search(r"rffbench report: .*index.html \(complete: 1 complete\)", p.stdout), \
        p.stdout[-2000:]
    index = (sweep / "report" / "index.html").read_text()
    assert "failed to draw" not in index
