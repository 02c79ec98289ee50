"""The reference report's script: it regenerates every preset there is."""
from rffbench import reference
from tests.helpers import CONF_DIR


def test_the_reference_script_regenerates_every_preset_once():
    presets = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
    assert sorted(reference.PRESETS) == presets
    assert len(set(reference.PRESETS)) == len(reference.PRESETS)
