"""End to end: ``python run.py`` (default and -m sweep) and bad input, as a user runs them."""

import numpy as np
import pandas as pd
import pytest

from rffbench.experiment import main as run_main
from rffbench.kernels import KERNELS
from rffbench.results import COLUMNS, RECORDS_FILE
from tests.helpers import compose_config, installed_command, run_cli

APPROX_METRICS = {"max_abs_error", "mean_abs_error", "rel_fro_error", "rel_spectral_error",
                  "expected_rel_fro_error"}


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_default_run(tmp_path):
    """The default run as a user starts it (a process of its own: its start-up time is one
    of its records)."""
    out = tmp_path / "run"
    p = run_cli(f"hydra.run.dir={out}", process=True)
    assert p.returncode == 0, p.stderr
    df = pd.read_csv(out / RECORDS_FILE)
    assert list(df.columns) == COLUMNS
    approx = df[df.measurement == "approximation"]
    assert set(approx.metric) == APPROX_METRICS
    timing = df[df.measurement == "timing"]
    assert set(timing.metric) == {"map_fit_time_s", "map_transform_time_s", "startup_time_s",
                                  "compile_time_s"}
    assert (timing.dropna(subset=["n_repeats"]).n_repeats >= 3).all() and (timing.value > 0).all()
    assert set(df.measurement) == {"approximation", "bounds", "learning", "timing"}
    assert (df.dataset == "digits").all() and (df.features == "rff").all() and (df.D == 1024).all()
    assert df.run_id.nunique() == 1
    # D=1024 random features on digits: a few percent Frobenius error, close to theory
    rel = approx.set_index("metric").value
    assert 0 < rel["rel_fro_error"] < 0.2
    assert 0.5 < rel["rel_fro_error"] / rel["expected_rel_fro_error"] < 2
    assert "rel_fro_error" in p.stdout and "records:" in p.stdout


@pytest.mark.slow
def test_multirun_sweep_one_records_file_per_job(tmp_path):
    sweep = tmp_path / "sweep"
    p = run_cli("-m", "kernel=gaussian,laplacian", "D=16,64", "dataset=synthetic",
                "dataset.n=200", "dataset.d=2,5", "measure.approximation.n_points=60",
                "report.pdf=false", f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr
    files = sorted(sweep.glob(f"runs/*/{RECORDS_FILE}"))  # stored by run identity
    assert len(files) == 8
    df = pd.concat([pd.read_csv(f) for f in files])
    combos = set(zip(df.kernel, df.D, df.d))
    assert combos == {(k, D, d) for k in ("gaussian", "laplacian") for D in (16, 64)
                      for d in (2, 5)}
    assert df.run_id.nunique() == 8


@pytest.mark.parametrize("args,match", [
    (["D=0"], "D=0 is not allowed"),
    (["features=rff_pairs", "D=15"], "must be even"),
    (["dataset=file", "dataset.path=/nonexistent/x.csv"], "no such file"),
])
@pytest.mark.slow
def test_bad_input_subprocess(tmp_path, args, match):
    out = tmp_path / "bad"
    p = run_cli(*args, f"hydra.run.dir={out}")
    assert p.returncode == 2
    lines = [ln for ln in p.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("rffbench: error:") and match in lines[0]
    assert not (out / RECORDS_FILE).exists()


@pytest.mark.parametrize("args,match", [
    (["kernel=rbf"], "kernel=rbf is not allowed: use one of " + ", ".join(sorted(KERNELS))),
    (["kernel=gausian"], "(did you mean kernel=gaussian?)"),
    (["D=abc"], "D=abc is not allowed: Value 'abc' of type 'str' could not be converted to "
                "Integer"),
    (["D=1.5"], "D=1.5 is not allowed"),
    (["dataset.nn=3"], "dataset.nn is not a key of rffbench's config (did you mean dataset.n?)"),
    (["kernel.lenghtscale=2"], "(did you mean kernel.lengthscale?)"),
    (["+kernel.lenghtscale=2"], "(did you mean kernel.lengthscale?)"),
    (["D"], "cannot read the override 'D': missing EQUAL"),
    (["hydra.run.dir="], "hydra.run.dir='' is not allowed: give a directory"),
])
@pytest.mark.slow
def test_bad_input_rejected_by_hydra_is_one_line_too(tmp_path, args, match):
    """Hydra's own errors (a group option, a key or a value of the wrong type, a malformed
    override) are one line and exit 2, with the closest key or option."""
    out = tmp_path / "bad"
    p = run_cli(f"hydra.run.dir={out}", *args, cwd=tmp_path)
    lines = [ln for ln in p.stderr.strip().splitlines() if ln]
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert lines[0].startswith("rffbench: error:") and match in lines[0], lines[0]
    assert not (out / RECORDS_FILE).exists()
    assert sorted(f.name for f in tmp_path.iterdir()) == []  # nothing written anywhere


@pytest.mark.parametrize("content,extra,match", [
    ("a,b,y\n1,2,0\nnan,5,1\n3,3,0\n4,4,1\n", [], "NaN/inf"),
    ("a,b,y\n1,2,3\n4,5\n6,7,8,9\n", [], "cannot read as csv"),
    ("a,b,y\n", [], "no rows"),
    ("a,b,y\n1,2,0\n2,5,1\n3,3,0\n4,4,1\n", ["dataset.target=price"], "is not a column"),
    ("a,b,y\n" + "1,2,0\n1,2,1\n" * 4, [], "only duplicate points"),
])
def test_bad_files_in_process(tmp_path, capsys, content, extra, match):
    path = _write(tmp_path, "d.csv", content)
    cfg = compose_config(["dataset=file", f"dataset.path={path}", *extra])
    out = tmp_path / "run"
    out.mkdir()
    assert run_main(cfg, out) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rffbench: error:") and match in err and "\n" not in err
    assert not (out / RECORDS_FILE).exists()


def test_default_n_points_capped_at_small_data_with_a_note(tmp_path):
    cfg = compose_config(["dataset=wine", "D=64"])
    assert run_main(cfg, tmp_path) == 0
    df = pd.read_csv(tmp_path / RECORDS_FILE)
    notes = df[df.measurement == "approximation"].note.dropna()
    assert notes.str.contains(
        r"M = 134 training points \(n_points=null: min\(1000, n_train\)\)").any()


def test_float32_run_and_threads(tmp_path):
    cfg = compose_config(["dataset=synthetic", "dataset.n=300", "dtype=float32", "threads=1",
                          "features=rff_pairs", "D=64", "kernel=cauchy"])
    assert run_main(cfg, tmp_path) == 0
    df = pd.read_csv(tmp_path / RECORDS_FILE)
    assert (df.dtype == "float32").all() and (df.threads == 1).all() and (df.n_freq == 32).all()
    assert np.isfinite(df[df.measurement == "approximation"].value.dropna()).all()


@pytest.mark.slow
def test_installed_commands_work_from_any_directory(tmp_path):
    """The console scripts of pyproject.toml, run outside the checkout: conf/ comes with the
    package; a run, a sweep, its report again, --help."""
    import subprocess

    exe, rep = installed_command("rffbench"), installed_command("rffbench-report")
    env = dict(__import__("os").environ, MPLBACKEND="Agg")
    args = ["dataset=wine", "measure.bounds.trials=4", "measure.learning.repeats=1"]
    p = subprocess.run([exe, *args, "D=32"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    recs = list((tmp_path / "results" / "runs").glob(f"*/*/{RECORDS_FILE}"))
    assert len(recs) == 1 and (recs[0].parent / "run.log").exists()
    sweep = tmp_path / "sweep"
    p = subprocess.run([exe, "-m", *args, "D=16,32", f"hydra.sweep.dir={sweep}"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert len(list(sweep.glob(f"runs/*/{RECORDS_FILE}"))) == 2
    p = subprocess.run([rep, str(sweep), "--no-pdf"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "complete: 2 complete" in p.stdout, p.stderr[-2000:]
    p = subprocess.run([exe, "--help"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0 and p.stdout.startswith("rffbench: random Fourier features")
    p = subprocess.run([exe, "D=0"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert [ln for ln in p.stderr.splitlines() if ln.startswith("rffbench: error")]


@pytest.mark.parametrize("args,match", [
    (["--readme-only", "--only", "bounds"], "--only has no effect with --readme-only"),
    (["--samples", "--only", "bounds"], "--only has no effect with --samples"),
    (["--samples", "--report-only"], "--samples and --report-only are two modes"),
    (["--report-only", "--only", "bounds"], "--report-only: no sweep to report for bounds")])
def test_reference_flags_that_do_nothing_are_refused_before_anything_is_written(
        tmp_path, monkeypatch, capsys, args, match):
    """--readme-only ignored --only; --report-only --only bounds with no such sweep rewrote
    results/README.md and exited 0."""
    from rffbench import reference

    monkeypatch.setattr(reference, "ROOT", tmp_path)  # (no sweep there; nothing to write)
    with pytest.raises(SystemExit) as exc:
        reference.main(args)
    assert exc.value.code == 2
    assert match in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "results").exists()
