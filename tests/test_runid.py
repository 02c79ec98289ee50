"""rffbench.runid: a run's id is a hash of what differs from the defaults; ids written by
earlier versions (0.1's, and those of the hand-written config blocks) are still found."""
from rffbench.config import Config, validate
from tests.helpers import ROOT, FakeEntryPoint, compose_config


def test_run_ids_of_configs_written_by_0_1_are_still_found():
    """Ids computed by rffbench 0.1 (commit bedfce6 and 1103fec, the whole config hashed):
    legacy_run_id gives them from the frozen 0.1 defaults."""
    from rffbench.runid import legacy_run_id

    for overrides, rid in (([], "c3a24dd5baf5"), (["dataset=synthetic"], "7bee29e01f11"),
                           (["measure.approximation.cross=true"], "58e1bde5cf0c"),
                           (["measure.approximation.cross=halves"], "58e1bde5cf0c"),
                           (["report.center=mean"], "c3a24dd5baf5"),
                           (["dataset.scale=none", "D=16"], "a2d7db863680"),
                           (["D_unit=frequencies", "D_n=2"], "8f19176d4cd0")):
        assert legacy_run_id(validate(compose_config(overrides))) == rid, overrides
    assert legacy_run_id(validate(compose_config(["dataset.scale=max"]))) != "c3a24dd5baf5"


def test_run_id_hashes_only_what_differs_from_the_defaults():
    """A key added to the schema (here: a subclass with one more block) leaves every id
    where it was while it is at its default; setting it moves the id."""
    from dataclasses import dataclass, field, fields

    from rffbench.runid import changes, legacy_run_id, run_id

    @dataclass
    class Extra:
        enabled: bool = False
        size: int = 3

    @dataclass
    class Newer(Config):
        extra: Extra = field(default_factory=Extra)

    for overrides in ([], ["D=64", "kernel=laplacian"], ["features=ssr", "dataset=wine"]):
        conf = validate(compose_config(overrides))
        newer = Newer(**{f.name: getattr(conf, f.name) for f in fields(Config)})
        assert run_id(newer) == run_id(conf)
        assert legacy_run_id(newer) == legacy_run_id(conf)
        newer.extra.size = 4
        assert run_id(newer) != run_id(conf) and changes(newer)["extra.size"] == 4
        assert legacy_run_id(newer) is None  # 0.1 could not have run it
    assert changes(validate(compose_config(["D=64"]))) == {"D": 64}
    assert changes(validate(compose_config(["report.center=mean"]))) == {}
    assert changes(validate(compose_config(["report.center=mean", "report.interval=bca",
                                            "report.resamples=500", "report.level=0.9"]))) == {}


def test_a_changed_default_is_caught_by_the_stored_config():
    from dataclasses import asdict

    from rffbench.runid import disagreement

    conf = validate(compose_config(["D=64"]))
    stored = asdict(conf)
    assert disagreement(conf, stored) is None
    stored["kernel"]["lengthscale"] = 2.0
    assert disagreement(conf, stored) == ("kernel.lengthscale", 2.0, "median")
    del stored["kernel"]["lengthscale"]  # a key the run's version did not have: not compared
    assert disagreement(conf, stored) is None


def test_a_run_id_does_not_depend_on_when_a_measurement_plugin_was_installed(monkeypatch):
    """A plug-in measurement installed after a first id was computed in this process (then
    ``register_configs``, as run.py and the plug-in docs do): a config at the defaults keeps
    its id, as in a fresh process with the plug-in installed (its block is at defaults)."""
    from dataclasses import dataclass

    import rffbench.config
    from rffbench import measure
    from rffbench.runid import run_id

    base = run_id(validate(compose_config(["D=64"])))  # the defaults now cached

    @dataclass
    class ExtraConfig:
        enabled: bool = False
        size: int = 3

    class Extra(measure.Measurement):
        name = "extra"
        Config = ExtraConfig

    monkeypatch.setattr(measure.MEASUREMENTS, "plugin_names",
                        lambda: {"extra": FakeEntryPoint("extra", Extra)})
    rffbench.config.register_configs()
    try:
        conf = validate(compose_config(["D=64"]))
        assert conf.measure.extra.size == 3
        assert run_id(conf) == base
        assert run_id(validate(compose_config(["D=64", "measure.extra.enabled=true",
                                               "measure.extra.size=4"]))) != base
    finally:
        monkeypatch.undo()
        rffbench.config.register_configs()
    assert run_id(validate(compose_config(["D=64"]))) == base


def test_stored_runs_keep_their_ids_after_the_blocks_were_generated():
    """The dataset block's keys (from each source's KEYS) and the features block's pairs and
    sequence (from each map's CONFIG_PARAMS) are generated; a run stored before keeps its
    id: the ids in tests/fixtures/run_ids.json were computed by the hand-written blocks."""
    import json

    from rffbench.config import validate
    from rffbench.runid import run_id

    cases = json.loads((ROOT / "tests" / "fixtures" / "run_ids.json").read_text())["cases"]
    assert len(cases) >= 10
    for case in cases:
        conf = validate(compose_config(case["overrides"]))
        assert run_id(conf) == case["run_id"], case["overrides"]
